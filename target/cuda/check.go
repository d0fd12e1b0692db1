package cuda

import (
	"slices"

	"github.com/tilego/tilego/ir"
)

// checkTarget refuses, at the user's file:line, what the verifier accepts
// but this target cannot lay out or launch, before a later pass trips on it.
func checkTarget(c *compilation) error {
	k := c.f.Kernel
	for _, b := range k.Allocs {
		// Shared tiles are laid out as rows of their last dim (smem.go).
		if s, _ := b.StaticShape(); b.Scope == ir.Shared && len(s) == 0 {
			return errAt("alloc", b.Pos, "shared tile %s has no dims; the CUDA target lays shared tiles out by rows: give it one dim of 1", b.Name)
		}
	}
	// A launch takes the symbolic sizes from its tensors' dims (interp.Bind).
	for _, s := range c.f.Syms {
		if !slices.ContainsFunc(c.f.Params, func(p *ir.Buffer) bool { return slices.ContainsFunc(p.Shape, isVar(s)) }) {
			return errAt("kernel", k.P, "size %s is no parameter's dim, so a launch cannot give it a value: make it a dim of an input or output", s.Name)
		}
	}
	return nil
}

// isVar reports whether an expression is v itself.
func isVar(v *ir.Var) func(ir.Expr) bool {
	return func(e ir.Expr) bool { x, ok := e.(*ir.Var); return ok && x == v }
}
