package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/compiler/infer"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// digitsExpr is Σ ((v / div) % size) * stride over the digits that move
// along dim, where div is the product of the sizes of earlier digits.
func digitsExpr(ds []layout.Digit, dim int, v string) string {
	var parts []string
	div := 1
	for _, d := range ds {
		if d.Dim == dim && d.Size > 1 {
			parts = append(parts, fmt.Sprintf("(%s / %d %% %d) * %d", v, div, d.Size, d.Stride))
		}
		div *= d.Size
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " + ")
}

// firstReplica is a condition true in one thread of each group that holds
// copies of the same elements, so writes out of a fragment happen once.
func firstReplica(l *layout.Fragment) string {
	var parts []string
	div := 1
	for _, d := range l.Thread {
		if d.Dim < 0 && d.Size > 1 {
			parts = append(parts, fmt.Sprintf("(tid / %d %% %d) == 0", div, d.Size))
		}
		div *= d.Size
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " && ")
}

// fragLoop opens a loop over a thread's registers of a fragment layout and
// declares the tile coordinates of register r as names[d].
func (e *emitter) fragLoop(l *layout.Fragment, names []string) {
	e.fragLoopFrom(l, e.fragBases(l), names)
}

// fragBases declares each dim's thread part of a fragment's coordinates
// and returns their names.
func (e *emitter) fragBases(l *layout.Fragment) []string {
	bases := make([]string, len(l.Shape))
	for d := range l.Shape {
		bases[d] = e.fresh("t")
		e.line("const int %s = %s;", bases[d], digitsExpr(l.Thread, d, "tid"))
	}
	return bases
}

// fragLoopFrom is fragLoop over thread parts fragBases declared.
func (e *emitter) fragLoopFrom(l *layout.Fragment, bases, names []string) {
	e.fragLoopStep(l, bases, names, 1)
}

// fragLoopStep is fragLoopFrom over every step-th register.
func (e *emitter) fragLoopStep(l *layout.Fragment, bases, names []string, step int) {
	e.line("#pragma unroll")
	if step == 1 {
		e.open("for (int r = 0; r < %d; ++r)", l.NumRegs())
	} else {
		e.open("for (int r = 0; r < %d; r += %d)", l.NumRegs(), step)
	}
	for d, n := range names {
		e.line("const int %s = %s + %s;", n, bases[d], digitsExpr(l.Reg, d, "r"))
	}
}

func (e *emitter) parallel(p *ir.Parallel) {
	reads, writes := touches(p.Body, true), touches(p.Body, false)
	e.syncIfDirty(reads)
	if writes {
		e.beforeSharedWrite()
	}
	names := make([]string, len(p.Vars))
	for i, v := range p.Vars {
		names[i] = v.Name
	}
	e.open("")
	saved := e.par
	if drv, _ := infer.Driver(e.c.layouts, p); drv != nil {
		e.par = &parCtx{p: p, drv: e.c.layouts[drv]}
		bases := e.fragBases(e.par.drv)
		skip := e.skipOnes(p, drv, bases, names)
		e.par.vecs = e.planVecReads(p, e.par.drv)
		e.declareVecReads(e.par.vecs)
		e.fragLoopFrom(e.par.drv, bases, names)
		e.loadVecReads(e.par.vecs)
		e.stmts(p.Body)
		e.close()
		if skip {
			e.close()
		}
	} else {
		// No fragment: spread the index space over the threads.
		for _, a := range infer.Accesses(p) {
			e.fail(errAt("parallel", p.P, "fragment %s is accessed in a loop whose index space is not a fragment's", a.Buf.Name))
			return
		}
		e.par = &parCtx{p: p}
		total := 1
		for _, n := range p.Extents {
			total *= n
		}
		if e.role != nil { // the block's warpgroup alone strides it
			e.open("for (int idx = tid %% 128; idx < %d; idx += 128)", total)
		} else {
			e.open("for (int idx = tid; idx < %d; idx += %d)", total, e.c.f.Kernel.Threads)
		}
		rest := "idx"
		for d := len(names) - 1; d >= 0; d-- {
			e.line("const int %s = %s %% %d;", names[d], rest, p.Extents[d])
			rest = fmt.Sprintf("(%s / %d)", rest, p.Extents[d])
		}
		e.stmts(p.Body)
		e.close()
	}
	e.par = saved
	e.close()
	if writes {
		e.wroteShared()
	} else if reads {
		e.read = true
	}
}

func (e *emitter) fill(s *ir.Fill) {
	b := s.Dst.Buf
	v := e.store(b.DType, e.value(s.Value))
	switch b.Scope {
	case ir.Fragment:
		if !s.Dst.IsWhole() {
			e.fail(errAt("fill", s.P, "fill a whole fragment, not a region of it"))
			return
		}
		e.line("#pragma unroll")
		e.line("for (int r = 0; r < %d; ++r) %s", e.c.layouts[b].NumRegs(), fragSet(b, "r", v))
	case ir.Local:
		e.regionElems(s.Dst, true, func(idx []string) {
			e.line("%s = %s;", e.ref(b, toExprs(idx)), v)
		})
	case ir.Shared:
		e.beforeSharedWrite()
		e.regionElems(s.Dst, false, func(idx []string) {
			e.line("%s = %s;", e.sharedRef(b, idx), v)
		})
		e.sync()
	}
}

// toExprs wraps C index strings as opaque IR expressions for ref.
func toExprs(idx []string) []ir.Expr {
	out := make([]ir.Expr, len(idx))
	for i, s := range idx {
		out[i] = &ir.Var{Name: s}
	}
	return out
}

// regionElems visits the elements of a region: every element in every
// thread (perThread) or spread over the block's threads. body gets the
// buffer indices of the element.
func (e *emitter) regionElems(r ir.Region, perThread bool, body func(idx []string)) {
	e.tileLoop(r.Shape(), perThread, func(tile []string) { body(e.bufIndex(r, tile)) })
}

// tileLoop visits the points of a tile shape, by every thread (perThread)
// or spread over the block's threads; body gets the tile coordinates.
func (e *emitter) tileLoop(shape []int, perThread bool, body func(tile []string)) {
	total := 1
	for _, n := range shape {
		total *= n
	}
	e.open("")
	if perThread {
		e.open("for (int idx = 0; idx < %d; ++idx)", total)
	} else {
		if e.role != nil {
			e.failHere("internal compiler error: a tile spread over all threads inside the warpgroup block at %s", e.role.P)
		}
		e.open("for (int idx = tid; idx < %d; idx += %d)", total, e.c.f.Kernel.Threads)
	}
	tile := make([]string, len(shape))
	rest := "idx"
	for d := len(shape) - 1; d >= 0; d-- {
		tile[d] = fmt.Sprintf("(%s %% %d)", rest, shape[d])
		rest = fmt.Sprintf("(%s / %d)", rest, shape[d])
	}
	body(tile)
	e.close()
	e.close()
}

// bufIndex maps tile coordinates to buffer indices: start + coordinate on
// kept dims, the start alone on dims taken by a scalar index.
func (e *emitter) bufIndex(r ir.Region, tile []string) []string {
	out := make([]string, len(r.Start))
	k := 0
	for d, st := range r.Start {
		s := e.expr(st)
		if r.Keep[d] {
			if s == "0" {
				out[d] = tile[k]
			} else {
				out[d] = fmt.Sprintf("(%s + %s)", s, tile[k])
			}
			k++
		} else {
			out[d] = s
		}
	}
	return out
}

// inBounds is the C condition that a global element lies in its tensor
// (only dims a region walks can leave it).
func (e *emitter) inBounds(r ir.Region, idx []string) string {
	if r.Buf.Scope != ir.Global {
		return ""
	}
	var parts []string
	for d, x := range idx {
		if r.Keep[d] {
			parts = append(parts, fmt.Sprintf("%s < %s", x, e.expr(r.Buf.Shape[d])))
		}
	}
	return strings.Join(parts, " && ")
}

// skipOnes opens, for a Parallel loop that asks (ir.Parallel's SkipOnes)
// and scales the fragment that drives it, a branch that the warp takes
// only if some lane has a factor other than one: x·1 is x, so warps whose
// factors are all one skip the multiplies. The attention kernels ask for
// their output accumulator's rescale at wide head dims, where
// kernels.OnlineSoftmax keeps the factors at one (128 multiplies a thread at
// head dim 256, between one tile's P·V and the next); SwitchSkipOnes off
// turns it off. The caller closes the branch when skipOnes returns true.
func (e *emitter) skipOnes(p *ir.Parallel, drv *ir.Buffer, bases, names []string) bool {
	x, f, ok := p.Scale()
	if !p.SkipOnes || !ok || x != drv || !e.c.opts.Switches.Choose(SwitchSkipOnes, true) {
		return false
	}
	e.line("bool ones = true; // every factor of this thread is one")
	e.fragLoopFrom(e.par.drv, bases, names)
	e.line("ones = ones && (%s == 1.0f);", e.expr(f))
	e.close()
	e.open("if (!__all_sync(__activemask(), ones))")
	return true
}
