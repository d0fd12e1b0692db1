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
	if amd(c.opts.Arch) {
		if err := checkAMD(c); err != nil {
			return err
		}
	}
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

// checkAMD refuses, at the op's file:line, the ops the AMD target does not
// lower yet: warpgroup blocks (a barrier of part
// of the block: AMD GPUs have only the workgroup's), and the counters
// blocks share (their memory-model fences are not written for AMD yet);
// and launches that need NVIDIA's cooperative or early launches.
func checkAMD(c *compilation) error {
	k := c.f.Kernel
	var err error
	not := func(op string, p ir.Pos, what string) {
		if err == nil {
			err = errAt(op, p, "%s is not lowered for %s yet", what, c.opts.Arch)
		}
	}
	ir.Walk(k.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Warpgroup:
			not("warpgroup", s.P, "a warpgroup block")
		case *ir.Ticket:
			not("ticket", s.P, "a Ticket")
		case *ir.Signal:
			not("signal", s.P, "a Signal")
		case *ir.WaitCount:
			not("wait_count", s.P, "a WaitCount")
		}
	})
	if err == nil && k.Cooperative {
		err = errAt("kernel", k.P, "a cooperative launch (blocks that wait for each other) is not lowered for %s yet", c.opts.Arch)
	}
	return err
}

// checkRegisters refuses a kernel whose fragments, as laid out, give a
// thread more than maxThreadBytes: checkTarget counts a fragment spread
// evenly over the threads, but extents the threads do not divide leave
// copies in every thread (a 4×4100 tile over 128 threads: every thread
// holds all 16,400 elements), which NVRTC would take minutes to unroll
// and the kernel would spill.
func checkRegisters(c *compilation) error {
	perThread := 0
	for _, b := range c.f.Kernel.Allocs {
		l := c.layouts[b]
		if b.Scope != ir.Fragment || l == nil {
			continue
		}
		n := l.NumRegs() * max(b.DType.Bytes(), 1)
		if perThread += n; perThread > maxThreadBytes {
			s, _ := b.StaticShape()
			return errAt("alloc", b.Pos, "fragment %s %v: its layout gives each of the %d threads %d elements (%d bytes of fragments a thread so far, over the target's %d): the threads do not divide its extents evenly; give it extents with a larger common factor with the thread count (columns a multiple of it, say), or fewer elements a thread", b.Name, s, c.f.Kernel.Threads, l.NumRegs(), perThread, maxThreadBytes)
		}
	}
	return nil
}
