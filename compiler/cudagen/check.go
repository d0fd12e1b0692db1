package cudagen

import (
	"github.com/tilego/tilego/ir"
)

// maxThreadBytes bounds what one thread holds of the fragments and locals
// together (4096 f32 registers; a thread has 255, the rest spill): the
// verifier bounds each tile, but the layouts are worked out element by
// element, so many large tiles would still take the compiler long before
// NVRTC refused them.
const maxThreadBytes = 16 << 10

// checkTarget refuses, at the user's file:line, what the verifier accepts
// but this target cannot lay out, before a later pass trips on it. The
// verifier (the first pass) has refused sizes that overflow, tiles past
// their limits and sizes no parameter binds.
func checkTarget(c *compilation) error {
	k := c.f.Kernel
	perThread := 0
	for _, b := range k.Allocs {
		s, _ := b.StaticShape()
		switch b.Scope {
		case ir.Shared:
			// Shared tiles are laid out as rows of their last dim (smem.go).
			if len(s) == 0 {
				return errAt("alloc", b.Pos, "shared tile %s has no dims; the CUDA target lays shared tiles out by rows: give it one dim of 1", b.Name)
			}
		case ir.Fragment, ir.Local:
			n := b.NumElems()
			if b.Scope == ir.Fragment {
				n = (n + k.Threads - 1) / k.Threads
			}
			if perThread += n * b.DType.Bytes(); perThread > maxThreadBytes {
				return errAt("alloc", b.Pos, "%s %s %v takes one thread's fragments and locals to %d bytes, over the CUDA target's %d bytes a thread: use smaller tiles or more threads", b.Scope, b.Name, s, perThread, maxThreadBytes)
			}
		}
	}
	return nil
}
