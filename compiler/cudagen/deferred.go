package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// Deferred statements (tl's Defer) make a pipelined loop a pipeline of two
// stages: the Deferred body built in iteration j runs in iteration j+1, at
// its place in the body, and the last iteration's after the loop. The
// backend emits it in place under `if (v > lo)` with the loop variable
// shadowed by v-1, so every expression of the body, the ring slot of its
// prefetched tiles included, names its own iteration.
//
// Two things follow. The tiles a Deferred body reads from the loop's ring
// are read one iteration late, so the ring gets one buffer more than the
// stages (the prefetch of iteration v+stages-1 must not land on v-1's), and
// a producer warpgroup's slot is freed one iteration late; with a producer
// those tiles take a ring of their own instead (split_rings.go). And on the wgmma
// path the loop's multiplies are not waited for at once: each is waited
// for just before the first statement that touches its accumulator or its
// register operand (pending below), so that a Deferred P·V issued after the
// next Q·Kᵀ computes while the softmax of that Q·Kᵀ runs.

// hasDeferred says whether f's body has Deferred statements.
func hasDeferred(f *ir.For) bool {
	for _, st := range f.Body {
		if _, ok := st.(*ir.Deferred); ok {
			return true
		}
	}
	return false
}

// ringSize is the number of buffers of f's ring: its stages, plus one when
// Deferred statements read the ring an iteration late.
func ringSize(f *ir.For) int {
	if f.Stages >= 2 && hasDeferred(f) {
		return f.Stages + 1
	}
	return f.Stages
}

// ownStmts lists body's statements with Deferred bodies flattened and the
// ring's hoisted copies (if any) left out: with hoisted nil, the statements
// that act on one iteration's tiles; else what the loop's threads do
// themselves.
func ownStmts(body []ir.Stmt, hoisted map[ir.Stmt]bool) []ir.Stmt {
	var out []ir.Stmt
	for _, st := range body {
		if d, ok := st.(*ir.Deferred); ok {
			out = append(out, ownStmts(d.Body, hoisted)...)
		} else if !hoisted[st] {
			out = append(out, st)
		}
	}
	return out
}

// wgGroup is a committed wgmma group not yet waited for: the accumulator
// it writes, its register A operand (nil when A is shared), and the
// condition under which it was committed ("" for always).
type wgGroup struct {
	c, a   *ir.Buffer
	sa, sb *ir.Buffer // its shared operands (nil where A is in registers)
	cond   string
	walk   bool // it reads a walk's tile (persistent_loads.go's early release)
}

// wgmmaWaits is the wgmma bookkeeping of a loop with Deferred statements.
type wgmmaWaits struct {
	loop    *ir.For // the pipelined loop (nil: a loop without prefetches)
	pending []wgGroup
	cond    string     // the guard of the Deferred body being emitted
	early   *walkEarly // the walk's tiles freed in the loop's last iteration (persistent_loads.go)
}

// deferredGuard is the condition under which iteration v runs the Deferred
// bodies of iteration v-1.
func deferredGuard(v string) string { return fmt.Sprintf("%s > lo", v) }

// deferredStmts emits a loop body's statements (hoisted copies left out) with
// wgmma waits put off until a result is used, each Deferred one guarded and for iteration v-1.
func (e *emitter) deferredStmts(v string, rest []ir.Stmt, hoisted map[ir.Stmt]bool) {
	for i, st := range rest {
		if e.err != nil {
			return
		}
		d, ok := st.(*ir.Deferred)
		if !ok {
			e.turnNext(rest, i)
			e.waitFor(st)
			e.stmt(st)
			e.walkReadDone(st)
			continue
		}
		guard := deferredGuard(v)
		before := e.state()
		e.open("if (%s)", guard)
		e.deferredBody(v, v+" - 1", d, guard, hoisted)
		e.close()
		e.merge(before) // the first iteration skips it
		e.turnAfterDeferred(rest, i)
	}
}

// deferredTail emits, after f's loop, the last iteration's Deferred
// statements, and waits for their multiplies.
func (e *emitter) deferredTail(f *ir.For, hoisted map[ir.Stmt]bool) {
	before := e.state()
	e.open("if (hi > lo)")
	for _, st := range f.Body {
		if d, ok := st.(*ir.Deferred); ok {
			e.deferredBody(f.Var.Name, "hi - 1", d, "", hoisted)
		}
	}
	e.close()
	e.merge(before)
	e.retireAll()
}

// lateLoop emits a loop with Deferred statements whose copies are not
// prefetched (a Pipelined one with one stage).
func (e *emitter) lateLoop(f *ir.For) {
	e.syncIfDirty(e.readsShared(f.Body) || e.writesShared(f.Body))
	v := f.Var.Name
	e.open("")
	e.line("const int lo = %s, hi = %s;", e.expr(f.Start), e.expr(f.Stop))
	before := e.state()
	e.waits = &wgmmaWaits{}
	e.open("for (int %s = lo; %s < hi; ++%s)", v, v, v)
	e.deferredStmts(v, f.Body, nil)
	e.retireAll()
	e.loopEndSync(f.Body)
	e.close()
	e.merge(before) // the body may not run at all
	e.deferredTail(f, nil)
	e.waits = nil
	e.close()
}

// deferredBody emits d's statements for the iteration `iter` (a C
// expression), shadowing the loop variable v.
func (e *emitter) deferredBody(v, iter string, d *ir.Deferred, guard string, hoisted map[ir.Stmt]bool) {
	e.line("const int %s_late = %s;", v, iter)
	e.open("")
	e.line("const int %s = %s_late;", v, v)
	if l := e.waits.loop; l != nil {
		e.splitWaitLate(l) // its V slot (split_rings.go)
	}
	e.waits.cond = guard
	for _, st := range d.Body {
		if e.err != nil || hoisted[st] {
			continue
		}
		e.waitFor(st)
		e.stmt(st)
	}
	e.waits.cond = ""
	e.close()
}

// lazyStmts emits a loop body's statements (no Deferred ones) with each
// wgmma group waited for just before the first statement that uses its
// accumulator or register operand or writes its shared operands, so
// independent multiplies are in flight together (two GEMMs of one tile,
// or a GEMM under the element-wise work on another's result). A compound
// statement with a GEMM inside waits for every group first and emits its
// own waits.
func (e *emitter) lazyStmts(body []ir.Stmt) {
	for _, st := range body {
		if e.err != nil {
			return
		}
		e.waitFor(st)
		if _, ok := st.(*ir.Gemm); ok || !hasGemm(st) {
			e.stmt(st)
			continue
		}
		e.retireAll()
		w := e.waits
		e.waits = nil
		e.stmt(st)
		e.waits = w
	}
}

// hasGemm says whether st is or holds a Gemm.
func hasGemm(st ir.Stmt) bool {
	found := false
	ir.Walk([]ir.Stmt{st}, func(s ir.Stmt) {
		if _, ok := s.(*ir.Gemm); ok {
			found = true
		}
	})
	return found
}

// overlapsGemm says whether a wgmma Gemm of body is followed by a
// statement that need not wait for it (lazyStmts would let the two
// overlap); where every Gemm's result is used at once, the body keeps
// its waits in place.
func (c *compilation) overlapsGemm(body []ir.Stmt) bool {
	for i, st := range body[:max(len(body)-1, 0)] {
		g, ok := st.(*ir.Gemm)
		if !ok || !c.wgmma[g] {
			continue
		}
		if !groupOf(g).neededBy(stmtBuffers(body[i+1]), stmtWrites(body[i+1])) {
			return true
		}
	}
	return false
}

// waitFor waits, before st, for the newest pending wgmma group whose
// accumulator or register operand st touches, or whose shared operands st
// writes, and for those before it.
// wgmma.wait_group counts groups, so the count of newer groups that may
// stay in flight depends on which guarded groups this path committed.
func (e *emitter) waitFor(st ir.Stmt) {
	if e.waits == nil || len(e.waits.pending) == 0 {
		return
	}
	used, written := stmtBuffers(st), stmtWrites(st)
	last := -1
	for i, g := range e.waits.pending {
		if g.neededBy(used, written) {
			last = i
		}
	}
	if last >= 0 {
		e.waitUpTo(last)
	}
}

// waitUpTo waits for pending groups 0..last.
func (e *emitter) waitUpTo(last int) {
	l := e.waits
	always, guarded := 0, 0 // newer groups committed on every path, and only under a guard
	guard := ""
	for _, g := range l.pending[last+1:] {
		switch {
		case g.cond == "" || g.cond == l.cond: // committed, on the path being emitted
			always++
		default:
			guarded++
			guard = g.cond
		}
	}
	if guarded == 0 {
		e.line("tl::wgmma_wait<%d>();", always)
	} else {
		e.line("if (%s) tl::wgmma_wait<%d>(); else tl::wgmma_wait<%d>();", guard, always+guarded, always)
	}
	e.turnPaid()
	walk := false
	for _, g := range l.pending[:last+1] {
		e.fenceRegs(g.c)
		if g.a != nil {
			e.fenceRegs(g.a)
		}
		walk = walk || g.walk
	}
	l.pending = l.pending[last+1:]
	if walk && l.cond == "" {
		e.walkReleaseEarly()
	}
}

// retireAll waits for every pending group.
func (e *emitter) retireAll() {
	if e.waits != nil && len(e.waits.pending) > 0 {
		e.waitUpTo(len(e.waits.pending) - 1)
	}
}

// fenceRegs keeps the compiler from moving accesses to fragment b's
// registers across the wait just emitted (an empty asm that claims to
// read and write them).
func (e *emitter) fenceRegs(b *ir.Buffer) {
	l := e.c.layouts[b]
	if l == nil {
		return
	}
	n, ty := l.NumRegs(), "f"
	if packed(b) {
		n, ty = (n+1)/2, "r"
	}
	e.line("#pragma unroll")
	e.line("for (int r = 0; r < %d; ++r) asm volatile(\"\" : \"+%s\"(%s[r])::\"memory\");", n, ty, b.Name)
}

// stmtBuffers lists every buffer st (and what it nests) reads or writes.
func stmtBuffers(st ir.Stmt) map[*ir.Buffer]bool {
	used := map[*ir.Buffer]bool{}
	expr := func(x ir.Expr) {
		if x == nil {
			return
		}
		ir.WalkExpr(x, func(y ir.Expr) {
			if l, ok := y.(*ir.Load); ok {
				used[l.Buf] = true
			}
		})
	}
	region := func(r ir.Region) {
		used[r.Buf] = true
		for _, s := range r.Start {
			expr(s)
		}
	}
	ir.Walk([]ir.Stmt{st}, func(s ir.Stmt) {
		eachRegion(s, region)
		switch s := s.(type) {
		case *ir.Fill:
			expr(s.Value)
		case *ir.Reduce:
			used[s.Src], used[s.Dst] = true, true
		case *ir.Store:
			used[s.Buf] = true
			expr(s.Value)
			for _, i := range s.Idx {
				expr(i)
			}
		case *ir.If:
			expr(s.Cond)
		case *ir.For:
			expr(s.Start)
			expr(s.Stop)
		case *ir.While:
			expr(s.Cond)
		}
	})
	return used
}

// stmtWrites lists the buffers st (and what it nests) writes.
func stmtWrites(st ir.Stmt) map[*ir.Buffer]bool {
	out := map[*ir.Buffer]bool{}
	ir.Walk([]ir.Stmt{st}, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Copy:
			out[s.Dst.Buf] = true
		case *ir.AtomicAdd:
			out[s.Dst.Buf] = true
		case *ir.Ticket:
			out[s.Dst.Buf] = true
		case *ir.Gemm:
			out[s.C.Buf] = true
		case *ir.Fill:
			out[s.Dst.Buf] = true
		case *ir.Reduce:
			out[s.Dst] = true
		case *ir.Store:
			out[s.Buf] = true
		}
	})
	return out
}

// eachRegion calls fn on each region statement s (not the statements in
// it) names: a copy's, a GEMM's operands, a fill's.
func eachRegion(s ir.Stmt, fn func(ir.Region)) {
	switch s := s.(type) {
	case *ir.Copy:
		fn(s.Src)
		fn(s.Dst)
	case *ir.AtomicAdd:
		fn(s.Src)
		fn(s.Dst)
	case *ir.Ticket:
		fn(s.Counter)
		fn(s.Dst)
	case *ir.Signal:
		fn(s.Counter)
	case *ir.WaitCount:
		fn(s.Counter)
	case *ir.Prefetch:
		fn(s.Src)
	case *ir.Gemm:
		fn(s.A)
		fn(s.B)
		fn(s.C)
	case *ir.Fill:
		fn(s.Dst)
	}
}

// lazyNote records a wgmma group just committed by g.
func (e *emitter) lazyNote(g *ir.Gemm) {
	grp := groupOf(g)
	grp.cond = e.waits.cond
	if w := e.waits.early; w != nil {
		grp.walk = w.w.bufs[g.A.Buf] || w.w.bufs[g.B.Buf]
	}
	e.waits.pending = append(e.waits.pending, grp)
}

// groupOf is the buffers a wgmma group of g holds until it is waited for.
func groupOf(g *ir.Gemm) wgGroup {
	grp := wgGroup{c: g.C.Buf, sb: g.B.Buf}
	if g.A.Buf.Scope == ir.Fragment {
		grp.a = g.A.Buf
	} else {
		grp.sa = g.A.Buf
	}
	return grp
}

// neededBy reports whether a statement that touches the buffers in used
// and writes those in written must wait for the group: it touches the
// accumulator or the register operand, or writes a shared operand.
func (g wgGroup) neededBy(used, written map[*ir.Buffer]bool) bool {
	return used[g.c] || g.a != nil && used[g.a] || written[g.sa] || written[g.sb]
}
