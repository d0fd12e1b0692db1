package ref

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// AttentionGrads agrees with central finite differences of the loss
// Σ dO∘O, O from AttentionRow, at every element of Q, K and V: GQA, Sq ≠
// Skv, Dqk ≠ Dv, causal (with query rows that see no key) and not.
func TestAttentionGrads(t *testing.T) {
	for _, c := range []struct {
		sq, skv int
		causal  bool
	}{{5, 7, false}, {5, 7, true}, {7, 4, true}} {
		t.Run(fmt.Sprintf("sq%d_skv%d_causal%v", c.sq, c.skv, c.causal), func(t *testing.T) {
			const B, H, HKV, D, Dv = 2, 4, 2, 4, 3
			q := tensor.New(ir.F32, B, H, c.sq, D).Rand(1, 1)
			k := tensor.New(ir.F32, B, HKV, c.skv, D).Rand(2, 1)
			v := tensor.New(ir.F32, B, HKV, c.skv, Dv).Rand(3, 1)
			do := tensor.New(ir.F32, B, H, c.sq, Dv).Rand(4, 1)
			p := Attn{Causal: c.causal, Scale: 0.7}
			loss := func() float64 {
				var l float64
				for b := range B {
					for h := range H {
						for i := range c.sq {
							o, _ := p.AttentionRow(q, k, v, b, h, i)
							for x, ox := range o {
								l += ox * do.At(b, h, i, x)
							}
						}
					}
				}
				return l
			}
			g := p.AttentionGrads(q, k, v, do)
			for _, x := range []struct {
				name string
				t    *tensor.Tensor
				grad []float64
			}{{"dq", q, g.DQ}, {"dk", k, g.DK}, {"dv", v, g.DV}} {
				var d Diff
				for i := range x.t.Data { // row-major: Data's order is the gradient's
					old := x.t.Data[i]
					const eps = 1e-4
					x.t.Data[i] = old + eps
					up := loss()
					x.t.Data[i] = old - eps
					down := loss()
					x.t.Data[i] = old
					d.Add(x.grad[i], (up-down)/(2*eps))
				}
				if d.Rel() > 1e-6 || math.IsNaN(d.Rel()) {
					t.Errorf("%s: %s", x.name, &d)
				}
			}
		})
	}
}

// GradQRow and GradKVRow, given the forward's LSE and Delta, give the rows
// of AttentionGrads.
func TestGradRows(t *testing.T) {
	const B, H, HKV, D, Dv = 2, 4, 2, 5, 3
	for _, c := range []struct {
		sq, skv int
		causal  bool
	}{{6, 9, false}, {6, 9, true}, {9, 4, true}} {
		t.Run(fmt.Sprintf("sq%d_skv%d_causal%v", c.sq, c.skv, c.causal), func(t *testing.T) {
			q := tensor.New(ir.F32, B, H, c.sq, D).Rand(1, 1)
			k := tensor.New(ir.F32, B, HKV, c.skv, D).Rand(2, 1)
			v := tensor.New(ir.F32, B, HKV, c.skv, Dv).Rand(3, 1)
			do := tensor.New(ir.F32, B, H, c.sq, Dv).Rand(4, 1)
			p := Attn{Causal: c.causal, Scale: 0.6}
			g := p.AttentionGrads(q, k, v, do)
			lse := make(map[[3]int]float64)
			delta := make(map[[3]int]float64)
			for b := range B {
				for h := range H {
					for i := range c.sq {
						o, l := p.AttentionRow(q, k, v, b, h, i)
						lse[[3]int{b, h, i}] = l
						for x, ox := range o {
							delta[[3]int{b, h, i}] += ox * do.At(b, h, i, x)
						}
					}
				}
			}
			var dq, dk, dv Diff
			for b := range B {
				for h := range H {
					for i := range c.sq {
						for x, got := range p.GradQRow(q, k, v, do, b, h, i) {
							dq.Add(got, g.DQ[((b*H+h)*c.sq+i)*D+x])
						}
					}
				}
				for hk := range HKV {
					for j := range c.skv {
						gk, gv := p.GradKVRow(q, k, v, do,
							func(b, h, i int) float64 { return lse[[3]int{b, h, i}] },
							func(b, h, i int) float64 { return delta[[3]int{b, h, i}] }, b, hk, j)
						for x, got := range gk {
							dk.Add(got, g.DK[((b*HKV+hk)*c.skv+j)*D+x])
						}
						for x, got := range gv {
							dv.Add(got, g.DV[((b*HKV+hk)*c.skv+j)*Dv+x])
						}
					}
				}
			}
			for _, d := range []struct {
				name string
				d    *Diff
			}{{"dq", &dq}, {"dk", &dk}, {"dv", &dv}} {
				if d.d.Rel() > 1e-12 || d.d.N == 0 {
					t.Errorf("%s: %s", d.name, d.d)
				}
			}
		})
	}
}
