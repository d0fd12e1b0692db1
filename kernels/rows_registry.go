package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tilego/tilego/examples"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ---- rmsnorm, layernorm, softmax: the examples as CLI kernels ----
//
// The row kernels are the programs of package examples, written as a user
// writes them; registered here so that `tilego run` and `tilego bench` time
// them on a GPU against their copy bandwidth, as memory-bound kernels are
// judged. Their config is the tile a user picks, not a tuned schedule.

// RowsConfig tiles a row kernel: BM rows a block, Threads threads, and for
// the softmax BN columns at a time (a divisor of the row).
type RowsConfig struct {
	BM, BN, Threads int
}

type rowsKind struct {
	name, doc string
	flopsPer  float64 // conventional operations per element
	vectors   int     // per-column vectors read beside X (RMSNorm's W, LayerNorm's gamma and beta)
	program   func(s RowsShape, c RowsConfig) *tl.Func
	want      func(s RowsShape, args []*tensor.Tensor, row int, out []float64)
}

// RowsShape is a row kernel's problem: a rows×cols tensor of DType.
type RowsShape struct {
	Rows, Cols int
	DType      ir.DType
}

const rowsEps = 1e-6

var (
	rmsnormKind = &rowsKind{"rmsnorm", "RMSNorm of each row, y = x/sqrt(mean(x²)+1e-6)·w", 4, 1,
		func(s RowsShape, c RowsConfig) *tl.Func {
			return examples.RMSNorm(s.Rows, s.Cols, s.DType, c.BM, c.Threads, rowsEps)
		},
		func(s RowsShape, a []*tensor.Tensor, i int, out []float64) {
			ss := 0.0
			for j := range s.Cols {
				ss += a[0].At(i, j) * a[0].At(i, j)
			}
			r := 1 / math.Sqrt(ss/float64(s.Cols)+rowsEps)
			for j := range s.Cols {
				out[j] = a[0].At(i, j) * r * a[1].At(j)
			}
		}}
	layernormKind = &rowsKind{"layernorm", "LayerNorm of each row, y = (x-mean)/sqrt(var+1e-6)·gamma + beta", 8, 2,
		func(s RowsShape, c RowsConfig) *tl.Func {
			return examples.LayerNorm(s.Rows, s.Cols, s.DType, c.BM, c.Threads, rowsEps)
		},
		func(s RowsShape, a []*tensor.Tensor, i int, out []float64) {
			mean, v := 0.0, 0.0
			for j := range s.Cols {
				mean += a[0].At(i, j)
			}
			mean /= float64(s.Cols)
			for j := range s.Cols {
				v += (a[0].At(i, j) - mean) * (a[0].At(i, j) - mean)
			}
			r := 1 / math.Sqrt(v/float64(s.Cols)+rowsEps)
			for j := range s.Cols {
				out[j] = (a[0].At(i, j)-mean)*r*a[1].At(j) + a[2].At(j)
			}
		}}
	softmaxKind = &rowsKind{"softmax", "softmax of each row", 5, 0,
		func(s RowsShape, c RowsConfig) *tl.Func {
			return examples.Softmax(s.Rows, s.Cols, s.DType, c.BM, c.BN, c.Threads)
		},
		func(s RowsShape, a []*tensor.Tensor, i int, out []float64) {
			m, sum := math.Inf(-1), 0.0
			for j := range s.Cols {
				m = math.Max(m, a[0].At(i, j))
			}
			for j := range s.Cols {
				out[j] = math.Exp(a[0].At(i, j) - m)
				sum += out[j]
			}
			for j := range out {
				out[j] /= sum
			}
		}}
	rmsnormEntry   = rowsEntry(rmsnormKind)
	layernormEntry = rowsEntry(layernormKind)
	softmaxEntry   = rowsEntry(softmaxKind)
)

func rowsEntry(k *rowsKind) *Entry {
	return &Entry{
		Name: k.name,
		Doc:  k.doc + " (package examples)",
		Flags: []Flag{
			{Name: "rows", Default: "4096", Help: "rows of X"},
			{Name: "cols", Default: "4096", Help: "columns of X (the normalized dimension)"},
			{Name: "dtype", Default: "bf16", Help: "element type: bf16, f16 or f32"},
		},
		parse: func(v values) (Problem, error) {
			var s RowsShape
			var err error
			if s.Rows, err = v.int("rows", 0); err != nil {
				return nil, err
			}
			if s.Cols, err = v.int("cols", 0); err != nil {
				return nil, err
			}
			if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16, ir.F32); err != nil {
				return nil, err
			}
			if _, err := elems("X", s.Rows, s.Cols); err != nil {
				return nil, err
			}
			return &rowsProblem{k: k, s: s}, nil
		},
	}
}

type rowsProblem struct {
	k *rowsKind
	s RowsShape
}

func (p *rowsProblem) Kernel() string { return p.k.name }

func (p *rowsProblem) Shape() Fields {
	return Fields{{"rows", p.s.Rows}, {"cols", p.s.Cols}, {"dtype", p.s.DType.String()}}
}

// bn is the largest divisor of cols up to max, the softmax's column step.
func bn(cols, max int) int {
	for b := min(cols, max); b > 1; b-- {
		if cols%b == 0 {
			return b
		}
	}
	return 1
}

// DefaultConfig: 4 rows a block over 128 threads, the tile the user
// picked; the softmax steps through at most 128 columns.
func (p *rowsProblem) DefaultConfig() Config {
	return RowsConfig{BM: 4, BN: bn(p.s.Cols, 128), Threads: 128}
}

// GPUConfig: for the softmax, which steps through up to 1024 columns
// with its rows in shared memory, the same threads and rows, fewer where
// they would not fit. RMSNorm and
// LayerNorm hold their rows in registers: 4, 2 or 1 rows a block, the
// most whose threads at 32 elements each number at most 512 (128 at
// least, powers of two). In the rows suite's run (H200, all tilings timed
// in one run; docs/bench/h200/rows.tilego.jsonl) that came within
// 1.00-1.10 of the fastest tiling at 8192 and 16384 columns (1.20
// LayerNorm f32 at 16384), where 4 rows over 128 threads, 128-512
// elements a thread, spilled and ran 2.7-6.5× slower.
func (p *rowsProblem) GPUConfig() Config {
	if p.k == softmaxKind { // fewer rows where 4 would not fit shared memory (200 KiB)
		bm := 4
		for bm > 1 && bm*p.s.Cols*p.s.DType.Bytes() > 200<<10 {
			bm /= 2
		}
		return RowsConfig{BM: min(bm, p.s.Rows), BN: bn(p.s.Cols, 1024), Threads: 128}
	}
	bm, threads := 1, 1024
	for _, m := range []int{4, 2, 1} {
		if t := max(128, pow2AtLeast(m*p.s.Cols/32)); t <= 512 {
			bm, threads = m, t
			break
		}
	}
	return RowsConfig{BM: min(bm, p.s.Rows), BN: bn(p.s.Cols, 1024), Threads: threads}
}

// pow2AtLeast is the least power of two at least n (1 for n < 1).
func pow2AtLeast(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

func (p *rowsProblem) Program(c Config) (*tl.Func, error) {
	cfg, ok := c.(RowsConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.RowsConfig", p.Kernel(), c)
	}
	if cfg.BM < 1 || cfg.Threads < 1 || cfg.BN < 1 {
		return nil, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	if p.k == softmaxKind && p.s.Cols%cfg.BN != 0 {
		return nil, fmt.Errorf("%s: bn=%d does not divide cols %d", p.Kernel(), cfg.BN, p.s.Cols)
	}
	return p.k.program(p.s, cfg), nil
}

// Inputs are X (normal, std 2), the per-column vectors (std 1) and Y
// poisoned with NaN.
func (p *rowsProblem) Inputs(seed uint64) []*tensor.Tensor {
	s := p.s
	args := []*tensor.Tensor{tensor.New(s.DType, s.Rows, s.Cols).Rand(seed, 2)}
	for i := range p.k.vectors {
		args = append(args, tensor.New(s.DType, s.Cols).Rand(seed+1+uint64(i), 1))
	}
	return append(args, tensor.New(s.DType, s.Rows, s.Cols).Fill(nan))
}

// Check compares every row when the tensor is small, else a seeded sample
// of rows.
func (p *rowsProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	rows, checked := make([]int, 0, s.Rows), "all"
	if s.Rows*s.Cols <= fullCheckElems {
		for i := range s.Rows {
			rows = append(rows, i)
		}
	} else {
		r := rand.New(rand.NewPCG(seed, 78))
		n := max(1, min(s.Rows, fullCheckElems/16/s.Cols))
		for range n {
			rows = append(rows, r.IntN(s.Rows))
		}
		checked = fmt.Sprintf("sampled %d rows", n)
	}
	want := make([][]float64, len(rows))
	parallelFor(len(rows), func(x int) {
		want[x] = make([]float64, s.Cols)
		p.k.want(s, args, rows[x], want[x])
	})
	y := args[len(args)-1]
	m := Measure{Name: "y", Tol: Tolerance(s.DType)}
	for x, i := range rows {
		for j, w := range want[x] {
			m.Diff.Add(y.At(i, j), w)
		}
	}
	return Report{Measures: []Measure{m}, Checked: checked}
}

// FLOPs counts a few operations an element (4 for RMSNorm, 8 for
// LayerNorm, 5 for the softmax): these kernels are judged by GB/s.
func (p *rowsProblem) FLOPs() float64 {
	return p.k.flopsPer * float64(p.s.Rows) * float64(p.s.Cols)
}

// Bytes is the compulsory traffic: X read and Y written once, and the
// per-column vectors.
func (p *rowsProblem) Bytes() float64 {
	s, eb := p.s, float64(p.s.DType.Bytes())
	return (2*float64(s.Rows) + float64(p.k.vectors)) * float64(s.Cols) * eb
}
