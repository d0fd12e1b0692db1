package cuda

import (
	"fmt"
	"math"
	"slices"

	"github.com/tilego/tilego/ir"
)

// maxThreadBytes bounds what one thread holds of the fragments and locals
// (4096 f32 registers; a thread has 255, the rest spill): the layouts are
// worked out element by element, so a tile of billions of elements would
// take the compiler minutes and gigabytes before NVRTC refused it.
const maxThreadBytes = 16 << 10

// checkTarget refuses, at the user's file:line, what the verifier accepts
// but this target cannot lay out or launch, before a later pass trips on it.
func checkTarget(c *compilation) error {
	k := c.f.Kernel
	perThread := 0
	for _, b := range k.Allocs {
		s, _ := b.StaticShape()
		bytes := satMul(elems(s), b.DType.Bytes())
		switch b.Scope {
		case ir.Shared:
			// Shared tiles are laid out as rows of their last dim (smem.go).
			if len(s) == 0 {
				return errAt("alloc", b.Pos, "shared tile %s has no dims; the CUDA target lays shared tiles out by rows: give it one dim of 1", b.Name)
			}
			if lim := ir.DefaultLimits.MaxSharedBytes; bytes > lim {
				return errAt("alloc", b.Pos, "shared tile %s %v is %s, over the %d bytes a block can have", b.Name, s, sizeOf(bytes), lim)
			}
		case ir.Fragment, ir.Local:
			if b.Scope == ir.Fragment {
				bytes = satMul((elems(s)+k.Threads-1)/k.Threads, b.DType.Bytes())
			}
			if perThread = satAdd(perThread, bytes); perThread > maxThreadBytes {
				return errAt("alloc", b.Pos, "%s %s %v takes one thread's fragments and locals to %s, over the CUDA target's %d bytes a thread: use smaller tiles or more threads", b.Scope, b.Name, s, sizeOf(perThread), maxThreadBytes)
			}
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

// elems is the element count of a shape, saturating (shapes are verified
// positive, but their product may pass any int).
func elems(shape []int) int {
	n := 1
	for _, d := range shape {
		n = satMul(n, d)
	}
	return n
}

func satMul(a, b int) int {
	if a > 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// sizeOf says a byte count, or that it saturated.
func sizeOf(n int) string {
	if n == math.MaxInt {
		return "more bytes than an int counts"
	}
	return fmt.Sprintf("%d bytes", n)
}
