package cuda

import "github.com/tilego/tilego/ir"

// checkTarget refuses, at the user's file:line, what the verifier accepts
// but this target cannot lay out, before a later pass trips on it.
func checkTarget(c *compilation) error {
	for _, b := range c.f.Kernel.Allocs {
		// Shared tiles are laid out as rows of their last dim (smem.go).
		if s, _ := b.StaticShape(); b.Scope == ir.Shared && len(s) == 0 {
			return errAt("alloc", b.Pos, "shared tile %s has no dims; the CUDA target lays shared tiles out by rows: give it one dim of 1", b.Name)
		}
	}
	return nil
}
