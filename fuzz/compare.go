package fuzz

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Tolerance is how far a backend's output may be from the interpreter's
// (relative L2 error over a tensor); 0 means bit for bit.
func (p *Prog) Tolerance() float64 {
	if p.exact() {
		return 0
	}
	tol := 1e-4
	for _, b := range p.Bufs {
		switch b.DT {
		case ir.BF16:
			tol = max(tol, 1e-2)
		case ir.F16:
			tol = max(tol, 2e-3)
		case ir.F8E4M3, ir.F8E5M2:
			tol = max(tol, 0.15)
		}
	}
	// Sums accumulate in f32 in an order each backend picks: scale by the
	// length of the longest one.
	n := p.BN * max(p.BM, 1)
	return tol * max(1, math.Sqrt(float64(n))/8)
}

// exact: the program only moves, converts and compares values (copies,
// max/min reductions, index arithmetic), which every backend does alike.
func (p *Prog) exact() bool {
	ok := true
	walkOps(p.Body, func(o *Op) {
		switch o.Kind {
		case OpGemm, OpAtomic:
			ok = false
		case OpReduce:
			ok = ok && o.Reduce != ir.ReduceSum
		case OpParallel:
			if p.Bufs[o.Dst.Buf].DT == ir.I32 { // integer arithmetic is exact
				return
			}
			walkExpr(o.Expr, func(e *Expr) {
				switch e.Op {
				case "add", "sub", "mul", "exp2", "tanh", "erf", "sigmoid", "log1p", "expm1", "sin", "cos", "pow": // rounding, contraction into fma, approximate math
					ok = false
				}
			})
		}
	})
	return ok
}

func walkOps(ops []Op, fn func(*Op)) {
	for i := range ops {
		fn(&ops[i])
		walkOps(ops[i].Body, fn)
		walkOps(ops[i].Else, fn)
	}
}

func walkExpr(e *Expr, fn func(*Expr)) {
	if e == nil {
		return
	}
	fn(e)
	for _, a := range e.Args {
		walkExpr(a, fn)
	}
}

// Diff compares got with want, element by element: NaN matches NaN (the
// poison of an element neither wrote), an infinity the same infinity; the
// rest by relative L2 error within tol (0: equal bits of the value).
func Diff(name string, got, want *tensor.Tensor, tol float64) error {
	var num, den float64
	bad, first := 0, -1
	for i, w := range want.Data {
		g := got.Data[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g) || math.IsInf(w, 0) || math.IsInf(g, 0):
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				bad++
				if first < 0 {
					first = i
				}
			}
		case tol == 0:
			if g != w {
				bad++
				if first < 0 {
					first = i
				}
			}
		default:
			num += (g - w) * (g - w)
			den += w * w
		}
	}
	rel := 0.0
	if num > 0 {
		rel = math.Sqrt(num / max(den, 1e-30))
	}
	if bad == 0 && rel <= tol {
		return nil
	}
	msg := fmt.Sprintf("%s: relative L2 error %.3g (tolerance %.3g)", name, rel, tol)
	if bad > 0 {
		msg += fmt.Sprintf(", %d of %d elements differ, first at %d: got %g, want %g", bad, len(want.Data), first, got.Data[first], want.Data[first])
	}
	return fmt.Errorf("%s", msg)
}
