package interp

import (
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// deferLog builds a program whose pipelined loop over [lo, hi) logs each
// statement it runs, in order: 100+j and 300+j for the plain statements of
// iteration j, 200+j and 400+j for its two Deferred ones, 500+cur for the
// value of cur (set to 10j at the top of iteration j) that the first
// Deferred body reads, and 900 after the loop.
func deferLog(lo, hi int) *tl.Func {
	f := tl.NewFunc("defer_log")
	Out := f.Out("Out", tl.I32, 32)
	f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
		log := k.Local(tl.I32, 32)
		n := k.Var(tl.I32, 0)
		cur := k.Var(tl.I32, 0)
		push := func(v tl.Expr) {
			log.Set(v, n)
			n.Assign(n.Val().Add(1))
		}
		k.Fill(log, -1)
		body := func(j tl.Expr) {
			push(j.Add(100))
			cur.Assign(j.Mul(10))
			k.Defer(func() {
				push(j.Add(200))
				push(cur.Val().Add(500))
			})
			push(j.Add(300))
			k.Defer(func() { push(j.Add(400)) })
		}
		if lo == 0 {
			k.Pipelined(hi, 2, body)
		} else {
			k.PipelinedRange(lo, hi, 2, body)
		}
		push(tl.Int(900))
		k.Copy(log, Out)
	})
	return f
}

func TestDeferred(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi int
		want   []float64
	}{
		{"no iterations", 0, 0, []float64{900}},
		{"one iteration", 0, 1, []float64{
			100, 300, // j=0, its Deferred bodies wait
			200, 500, 400, // after the loop: j=0's, reading cur=0
			900,
		}},
		{"three iterations", 0, 3, []float64{
			100, 300,
			101, 200, 510, 301, 400, // j=1 runs j=0's, which reads cur=10
			102, 201, 520, 302, 401,
			202, 520, 402,
			900,
		}},
		{"from 2 to 5", 2, 5, []float64{
			102, 302, // the first iteration, 2, runs none
			103, 202, 530, 303, 402,
			104, 203, 540, 304, 403,
			204, 540, 404,
			900,
		}},
		{"empty range from 3", 3, 3, []float64{900}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := deferLog(tc.lo, tc.hi).Build()
			if err != nil {
				t.Fatal(err)
			}
			out := tensor.New(ir.I32, 32)
			if err := Run(fn, []*tensor.Tensor{out}); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(tc.want)
			for len(want) < 32 {
				want = append(want, -1)
			}
			got := make([]float64, 32)
			for i := range got {
				got[i] = out.At(i)
			}
			if !slices.Equal(got, want) {
				t.Errorf("log\n got %v\nwant %v", got, want)
			}
		})
	}
}

// A Deferred outside a Pipelined loop's body (which the verifier rejects)
// is an error for the interpreter too, not a statement run in place.
func TestDeferredMisplaced(t *testing.T) {
	fn, err := deferLog(0, 2).Build()
	if err != nil {
		t.Fatal(err)
	}
	k := fn.Kernel
	k.Body = append(k.Body, &ir.Deferred{Body: []ir.Stmt{k.Body[0]}})
	err = Run(fn, []*tensor.Tensor{tensor.New(ir.I32, 32)})
	if err == nil || !strings.Contains(err.Error(), "defer: only a statement of a Pipelined loop's body") {
		t.Fatalf("got %v, want a defer error", err)
	}
}
