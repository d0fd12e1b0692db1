package kernels

import (
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// AttentionInputs returns fresh random Q, K, V and NaN-poisoned O and LSE
// for a shape, laid out as the shape says, in the kernel's parameter order.
func AttentionInputs(s AttnShape, seed uint64) []*tensor.Tensor {
	mk := func(heads, seq, d int) *tensor.Tensor {
		shape := []int{s.B, heads, seq, d}
		order := []int{0, 1, 2, 3}
		if s.BSHD {
			order = []int{0, 2, 1, 3}
		}
		return tensor.NewStrided(s.DType, shape, tensor.StridesFor(shape, order))
	}
	q := mk(s.H, s.Sq, s.Dqk).Rand(seed, 1)
	k := mk(s.HKV, s.Skv, s.Dqk).Rand(seed+1, 1)
	v := mk(s.HKV, s.Skv, s.Dv).Rand(seed+2, 1)
	o := mk(s.H, s.Sq, s.Dv).Fill(nan)
	lse := tensor.New(tensorF32, s.B, s.H, s.Sq).Fill(nan)
	return []*tensor.Tensor{q, k, v, o, lse}
}

// Row names one query row.
type Row struct{ B, H, I int }

// AllRows lists every query row of a shape.
func AllRows(s AttnShape) []Row {
	var rows []Row
	for b := range s.B {
		for h := range s.H {
			for i := range s.Sq {
				rows = append(rows, Row{b, h, i})
			}
		}
	}
	return rows
}

// SampleRows picks n query rows at random (seeded), for shapes too large to
// check whole.
func SampleRows(s AttnShape, n int, seed uint64) []Row {
	r := rand.New(rand.NewPCG(seed, 99))
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{r.IntN(s.B), r.IntN(s.H), r.IntN(s.Sq)}
	}
	return rows
}

// CheckAttentionRows compares O and LSE of the given rows with float64, on
// every core: checking every row of a multi-wave grid takes a minute on one.
func CheckAttentionRows(s AttnShape, args []*tensor.Tensor, rows []Row, o, lse *ref.Diff) {
	p := s.refAttn()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rows)/64))
	part := make([][2]ref.Diff, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			do, dl := &part[w][0], &part[w][1]
			for i := w; i < len(rows); i += workers {
				r := rows[i]
				want, wl := p.AttentionRow(args[0], args[1], args[2], r.B, r.H, r.I)
				for d, v := range want {
					do.Add(args[3].At(r.B, r.H, r.I, d), v)
				}
				dl.Add(args[4].At(r.B, r.H, r.I), wl)
			}
		})
	}
	wg.Wait()
	for _, p := range part {
		o.Merge(p[0])
		lse.Merge(p[1])
	}
}

var nan = func() float64 { var z float64; return z / z }()

const tensorF32 = 6 // ir.F32

// GemmInputs returns fresh random A and B (normal, std 1, stored
// transposed when the shape says so) and a NaN-poisoned C.
func GemmInputs(s GemmShape, seed uint64) []*tensor.Tensor {
	ar, ac, br, bc := s.M, s.K, s.K, s.N
	if s.TransA {
		ar, ac = ac, ar
	}
	if s.TransB {
		br, bc = bc, br
	}
	a := tensor.New(s.DType, ar, ac).Rand(seed, 1)
	b := tensor.New(s.DType, br, bc).Rand(seed+1, 1)
	c := tensor.New(s.OutDType, s.M, s.N).Fill(nan)
	return []*tensor.Tensor{a, b, c}
}
