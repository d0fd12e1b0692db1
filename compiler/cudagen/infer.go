package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/compiler/infer"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// inferLayouts gives every fragment a register layout (package infer), the
// Gemms' from the mma.sync or wgmma instruction each lowers to. Tensor-core ops fix
// the layouts of their accumulators and register operands; copies between
// fragments, reductions and Parallel loops carry layouts to the fragments
// they touch; what is left gets a plain spread over the threads. A
// fragment whose users need different layouts is an error naming both.
func inferLayouts(c *compilation) error { return infer.Layouts(c.f.Kernel, cudaLayouts{c}, c.layouts) }

// cudaLayouts is what layout inference asks of this target.
type cudaLayouts struct{ c *compilation }

func (t cudaLayouts) Threads(b *ir.Buffer) int { return t.c.threadsOf(b) }

// Gemm lowers g to wgmma where it fits (sm_90a), else to mma.sync with
// its warps split by g's policy, and fixes the layouts that needs.
func (t cudaLayouts) Gemm(g *ir.Gemm, set func(*ir.Buffer, *layout.Fragment) error) error {
	c := t.c
	if amd(c.opts.Arch) {
		return c.mfmaLayouts(g, set)
	}
	sh := g.C.Shape()
	threads := c.threadsOf(g.C.Buf)
	warps := threads / 32
	if why := wgmmaFits(c, g); why == "" {
		c.wgmma[g] = true
		acc, err := layout.WGAccumulator(sh[0], sh[1], wgSplit(threads/128, sh[0], g.Policy, splitNWanted(c)))
		if err != nil {
			return errAt("gemm", g.P, "wgmma accumulator: %v", err)
		}
		if err := set(g.C.Buf, acc); err != nil {
			return err
		}
		if a := g.A.Buf; a.Scope == ir.Fragment {
			opA, err := layout.WGOperandA(sh[0], g.A.Shape()[1], threads/128)
			if err != nil {
				return errAt("gemm", g.P, "wgmma A in registers: %v", err)
			}
			return set(a, opA)
		}
		return nil
	}
	w, err := chooseWarps(g.Policy, sh[0], sh[1], warps, g.A.Buf.Scope == ir.Fragment)
	if err != nil {
		return c.mmaErr(g, "%v", err)
	}
	c.warps[g] = w
	acc, err := layout.Accumulator(sh[0], sh[1], w)
	if err != nil {
		return c.mmaErr(g, "%v", err)
	}
	if err := set(g.C.Buf, acc); err != nil {
		return err
	}
	if g.A.Buf.Scope == ir.Fragment {
		if g.TransA {
			return c.mmaErr(g, "A from a fragment cannot be transposed")
		}
		a, err := layout.OperandA(sh[0], g.A.Shape()[1], w)
		if err != nil {
			return errAt("gemm", g.P, "%v", err)
		}
		return set(g.A.Buf, a)
	}
	return nil
}

// chooseWarps splits a Gemm's warps by its policy. An A operand in
// registers needs each warp to own whole rows, so it forces FullRow.
func chooseWarps(p ir.Policy, m, n, warps int, aInRegs bool) (layout.Warps, error) {
	fits := func(w layout.Warps) bool { return m%(16*w.M) == 0 && n%(8*w.N) == 0 }
	if aInRegs {
		p = ir.FullRow
	}
	switch p {
	case ir.FullRow:
		if w := (layout.Warps{M: warps, N: 1}); fits(w) {
			return w, nil
		}
		if m%(16*warps) != 0 {
			return layout.Warps{}, fmt.Errorf("policy fullrow: %d warps cannot each own 16-row slices of %d rows", warps, m)
		}
		return layout.Warps{}, fmt.Errorf("policy fullrow: %d columns cannot be cut in 8-column pieces", n)
	case ir.FullCol:
		if w := (layout.Warps{M: 1, N: warps}); fits(w) {
			return w, nil
		}
		if n%(8*warps) != 0 {
			return layout.Warps{}, fmt.Errorf("policy fullcol: %d warps cannot each own 8-column slices of %d columns", warps, n)
		}
		return layout.Warps{}, fmt.Errorf("policy fullcol: %d rows cannot be cut in 16-row pieces", m)
	}
	best, found := layout.Warps{}, false
	for wm := 1; wm <= warps; wm++ {
		if warps%wm != 0 {
			continue
		}
		w := layout.Warps{M: wm, N: warps / wm}
		// Prefer the split whose warp tile is squarest (fewest operand loads).
		if fits(w) && (!found || m/w.M+n/w.N < m/best.M+n/best.N) {
			best, found = w, true
		}
	}
	if !found {
		return best, fmt.Errorf("%d warps cannot tile a %d×%d output in 16×8 pieces", warps, m, n)
	}
	return best, nil
}
