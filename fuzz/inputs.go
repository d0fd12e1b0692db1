package fuzz

import (
	"math"
	"math/rand/v2"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Poison is what every output holds before a run (for i32 outputs,
// PoisonI32): an element a backend fails to write, or writes where the
// other does not, shows as a difference.
var (
	Poison    = math.NaN()
	PoisonI32 = -1.0
)

// Args makes the program's tensors for one run: inputs random from seed,
// never zero, in [-2, -1/4] ∪ [1/4, 2]; outputs poisoned, except those
// accumulated into (atomics), which start from random values too.
func (p *Prog) Args(fn *ir.Func, seed uint64) []*tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	rows := p.Rows
	var out []*tensor.Tensor
	for i, b := range fn.Params {
		d := p.Bufs[p.paramBuf(i)]
		shape := make([]int, len(d.Shape))
		for k, n := range d.Shape {
			shape[k] = n
			if n == RowsDim {
				shape[k] = rows
			}
		}
		strides := tensor.RowMajor(shape)
		if d.Perm != nil {
			strides = tensor.StridesFor(shape, d.Perm)
		}
		t := tensor.NewStrided(b.DType, shape, strides)
		if d.Scope == In || d.Accum {
			for k := range t.Data {
				v := 0.25 + 1.75*r.Float64()
				if r.IntN(2) == 0 {
					v = -v
				}
				t.Data[k] = tensor.Round(b.DType, v)
			}
		} else {
			fill := Poison
			if b.DType == ir.I32 {
				fill = PoisonI32
			}
			for k := range t.Data {
				t.Data[k] = fill
			}
		}
		out = append(out, t)
	}
	return out
}

// paramBuf is the Buf index of the i-th parameter (params are the global
// Bufs in order).
func (p *Prog) paramBuf(i int) int {
	for k, b := range p.Bufs {
		if b.Scope.global() {
			if i == 0 {
				return k
			}
			i--
		}
	}
	return -1
}

// clone copies tensors, so that each backend runs on the same inputs.
func clone(ts []*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		c := *t
		c.Data = append([]float64(nil), t.Data...)
		out[i] = &c
	}
	return out
}
