package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// pipelined emits a software-pipelined loop. The copies that load shared
// tiles from global memory are issued stages-1 iterations ahead into their
// own buffer of a ring (cp.async groups, one per iteration); iteration k
// waits until its group has landed, passes a barrier (which also tells
// every thread that iteration k-1's readers are done with the buffer the
// next prefetch overwrites), issues the prefetch, then computes.
func (e *emitter) pipelined(s *ir.For) {
	hoisted := e.c.smem.hoisted[s]
	S, R := s.Stages, e.c.ringSize(s) // prefetch distance S-1 over a ring of R buffers
	// K and V on rings of their own (split_rings.go)
	split := e.c.ws != nil && e.c.ws.loop == s && e.c.split[s] != nil
	v := s.Var.Name
	isHoisted := map[ir.Stmt]bool{}
	for _, cp := range hoisted {
		isHoisted[cp] = true
	}
	var rest []ir.Stmt
	for _, st := range s.Body {
		if !isHoisted[st] {
			rest = append(rest, st)
		}
	}
	tma := e.c.tma[s]
	issue := func(iter string) {
		e.open("")
		e.line("const int %s = %s;", v, iter)
		slot := fmt.Sprintf("(%s %% %d)", e.ringPos(tma, v), R)
		for _, cp := range hoisted {
			e.stage[cp.Dst.Buf] = slot
		}
		if tma != nil {
			e.tmaIssue(tma.bar, tma.copies, hoisted, slot, "tid == 0")
		} else {
			for _, cp := range hoisted {
				if !e.copyVector(cp, false) {
					e.copyElems(cp, false, false) // synchronous stores; visible after the barrier
				}
			}
		}
		e.close()
	}
	if e.read { // the ring's buffers may still be read by earlier ops
		e.sync()
	}
	ws := e.c.ws != nil && e.c.ws.loop == s // a producer warpgroup issues the loads
	e.open("")
	e.line("const int lo = %s, hi = %s;", e.expr(s.Start), e.expr(s.Stop))
	e.ringBase(tma)
	if tma != nil && !ws && tma.outer == nil { // else set up once, before the outer loop
		e.tmaInit(tma, R)
	}
	if !ws {
		e.line("#pragma unroll")
		e.open("for (int s = 0; s < %d; ++s)", S-1)
		e.open("if (lo + s < hi)")
		issue("lo + s")
		e.close()
		e.line("tl::cp_async_commit();")
		e.close()
	}
	// With a producer, the ring's slots are guarded by the full and empty
	// barriers alone; unless the body writes shared memory of its own, the
	// consumers meet once, before the loop (for copies issued before it),
	// and their warpgroups then run free of each other.
	free := ws && !e.writesShared(ownStmts(rest, isHoisted))
	late := hasDeferred(s)
	var hand *handoff // warpgroup blocks that hand tiles to each other (plan-handoff)
	if ws {
		hand = e.c.handoff
	}
	// carry: a body that writes shared memory of its own meets the other
	// consumers where its own hazards need it, not at every iteration's
	// top. The state crosses the back edge instead: an iteration starts as
	// if the previous one's reads were unfenced (a write waits for them at
	// a barrier), and one that ends with writes not yet met ends at a
	// barrier. Not with warpgroup blocks, whose own tracking of the tiles
	// each touched since its barrier starts clean at every iteration's top,
	// nor with Deferred statements, split rings or a walk stored by halves.
	halves := e.halvesPipe(s)
	carry := ws && !free && hand == nil && !late && !split && !halves && !hasWarpgroup(rest)
	if (free || hand != nil || carry) && !(halves && !e.dirty && !e.pending && !e.read) { // by halves: nothing issued before it
		e.line("tl::cp_async_wait<0>();")
		e.pending = false
		e.written()
		e.sync()
	}
	turns := free && e.c.turns
	switch {
	case turns && halves: // the turns run on from tile to tile
		e.line("if (tid >= 128 && %s) tl::bar_arrive(%d, 256); // warpgroup 0 takes the walk's first turn", e.walkFirst(e.c.halves.walk), turnBar)
	case turns:
		e.line("if (tid >= 128) tl::bar_arrive(%d, 256); // warpgroup 0 takes the first turn", turnBar)
	}
	if hand != nil {
		e.handoffBefore(hand)
	}
	e.open("for (int %s = lo; %s < hi; ++%s)", v, v, v)
	switch {
	case free || hand != nil || carry:
		e.tmaWait(tma, v, R)
	case tma != nil:
		e.line("tl::cp_async_wait<0>();") // copies issued before the loop (cp.async) have landed too
		e.tmaWait(tma, v, R)
	case asyncTail(rest): // the body's own copies are the newest groups, and a later read needs them
		e.line("tl::cp_async_wait<0>();")
	default:
		e.line("tl::cp_async_wait<%d>();", S-2) // also lands copies issued before the loop
	}
	switch {
	case carry:
		e.read = true
	case !free && hand == nil:
		e.pending = false
		e.written() // so sync fences them for wgmma
		e.sync()
	}
	if !ws {
		e.line("const int next = %s + %d;", v, S-1)
		e.open("if (next < hi)")
		issue("next")
		e.close()
		e.line("tl::cp_async_commit();")
	}
	for _, cp := range hoisted {
		e.stage[cp.Dst.Buf] = fmt.Sprintf("(%s %% %d)", e.ringPos(tma, v), R)
	}
	var early *walkEarly // the walk's tiles freed in the last iteration (persistent_loads.go)
	switch {
	case hand != nil:
		e.handoffBody(hand)
	case late:
		e.waits = &wgmmaWaits{loop: s}
		if ws && e.c.ws.walk != nil {
			early = e.c.walkEarly
			e.waits.early = early
		}
		if turns {
			e.turns = &turnState{loop: s}
			e.c.pingPong = true
		}
		e.deferredStmts(v, rest, isHoisted)
		e.retireAll()
		e.turnPaid()
		e.turns = nil
	case turns:
		e.turnStmts(s, rest)
	case e.c.overlapsGemm(rest):
		e.waits = &wgmmaWaits{loop: s}
		e.lazyStmts(rest)
		e.retireAll()
		e.waits = nil
	default:
		e.stmts(rest)
	}
	if carry && (e.dirty || e.pending) {
		e.flushAsync()
		e.sync()
	}
	switch {
	case split: // K's slot now, V's (read by the Deferred statements) an iteration late
		e.wsRelease(v, R)
		e.open("if (%s)", deferredGuard(v))
		e.wsReleaseAt(e.c.ws.lateEmpty, v+" - 1", R)
		e.close()
	case ws && late: // the Deferred statements read iteration v-1's slot until now
		e.open("if (%s)", deferredGuard(v))
		e.wsRelease(v+" - 1", R)
		e.close()
	case ws:
		e.wsRelease(v, R)
	}
	e.close()
	if early != nil {
		e.waits.early = nil // past the loop, its variable is gone
	}
	switch {
	case turns && halves:
		if last, ok := e.walkLast(e.c.halves.walk); ok {
			e.line("if (tid < 128 && %s) tl::bar_sync(%d, 256); // warpgroup 1's last turn of the walk, so no arrival is left over", last, turnBar)
		} else {
			e.walkTurnOwed = true // taken past the walk (spreadClose)
		}
	case turns:
		e.line("if (tid < 128) tl::bar_sync(%d, 256); // warpgroup 1's last turn, so no arrival is left over", turnBar)
	}
	if hand != nil {
		e.handoffAfter(hand)
	}
	if late {
		e.deferredTail(s, isHoisted)
		e.waits = nil
		if ws && tma.outer != nil { // the producer goes on into the next tile's loop
			e.open("if (hi > lo)")
			if split {
				e.wsReleaseAt(e.c.ws.lateEmpty, "hi - 1", R)
			} else {
				e.wsRelease("hi - 1", R)
			}
			e.close()
		}
	}
	switch {
	case early != nil && early.done: // freed in the last iteration, if there was one
		e.open("if (hi <= lo)")
		e.walkRelease(e.c.ws.walk)
		e.close()
	case ws && e.c.ws.walk != nil: // nothing after the loop reads the walk's tiles (persistent_loads.go)
		e.walkRelease(e.c.ws.walk)
	}
	e.line("tl::cp_async_wait<0>();")
	e.ringAdvance(tma)
	e.close()
	for _, cp := range hoisted {
		delete(e.stage, cp.Dst.Buf)
	}
	if halves { // the loop wrote no shared memory, and no consumer writes what it read
		e.dirty, e.read = false, false
		return
	}
	e.sync()
}

// asyncTail reports whether a pipelined loop's body (its statements other
// than the hoisted loads) leaves a copy from global memory into a shared
// tile in flight at the end of an iteration: no statement after it reads
// shared memory, which would have waited for it. The copy's group is then
// newer than the prefetches, so the next iteration's wait for its slot
// does not land it, and a read there (a Deferred statement's, before the
// copy that iteration) would see the tile before it lands.
func asyncTail(rest []ir.Stmt) bool {
	pending := false
	for _, s := range rest {
		loads := false
		ir.Walk([]ir.Stmt{s}, func(x ir.Stmt) {
			if cp, ok := x.(*ir.Copy); ok && cp.Src.Buf.Scope == ir.Global && cp.Dst.Buf.Scope == ir.Shared {
				loads = true
			}
		})
		switch {
		case loads:
			pending = true
		case pending && touches([]ir.Stmt{s}, true):
			pending = false
		}
	}
	return pending
}

// hasWarpgroup reports whether body holds a Warpgroup block.
func hasWarpgroup(body []ir.Stmt) bool {
	found := false
	ir.Walk(body, func(st ir.Stmt) {
		if _, ok := st.(*ir.Warpgroup); ok {
			found = true
		}
	})
	return found
}
