package cuda

import (
	"maps"

	"github.com/tilego/tilego/ir"
)

// Hand-offs: a warp-specialized loop whose body is two Warpgroup blocks of
// different warpgroups (A, then B) runs without a barrier of all
// consumers. What B needs of A's shared tiles, A hands over with a named
// barrier of 256 threads that A arrives at (bar.arrive, no wait) once its
// last write B depends on is done, and B waits at (bar.sync) before its
// first statement that depends on it; a second barrier hands the tiles
// back the other way, B arriving once done with them and A waiting before
// it first overwrites them in the next iteration. Each warpgroup therefore
// runs up to the next point where it needs the other: in MLA, warpgroup 0
// scores page j+1 while warpgroup 1 multiplies page j by V.
//
// The ring's own buffers (the loop's TMA destinations) are left out of the
// back hand-off: iteration j+1 uses another slot than j, and a slot is
// refilled only once both warpgroups have released it (wsRelease).
//
// B arrives once at the back barrier before the loop and A waits once after
// it, so every wait is unconditional and every arrival consumed. The waits
// alternate with the arrivals they pair with (A waits for the tiles back
// before it hands them over again; B hands them back only after it has
// taken them), so a barrier never collects two rounds of arrivals.

// handBar is the first of the hand-off's two named barriers (A to B, then
// B to A); 4 and 5 are the warpgroup blocks' own (roleBar).
const handBar = 8

// handoff is the plan of a loop body A, B: the statement of each block
// that its wait goes before and its arrival after.
type handoff struct {
	blocks [2]*ir.Warpgroup
	wait   [2]int // A: back barrier, B: forward barrier
	arrive [2]int // A: forward barrier, B: back barrier
	entry  [2]roleState
}

// roleState is what a warpgroup block's emission knows about shared
// memory: the barriers its warpgroup owes, and the tiles touched since the
// last one.
type roleState struct {
	sync        syncState
	seen, wrote map[*ir.Buffer]bool
}

// planHandoff returns the hand-off plan of a warp-specialized loop body
// (its prefetches left out), or nil when the body is not two Warpgroup
// blocks of different warpgroups that share shared tiles.
func planHandoff(rest []ir.Stmt, ring map[*ir.Buffer]bool) *handoff {
	if len(rest) != 2 {
		return nil
	}
	a, okA := rest[0].(*ir.Warpgroup)
	b, okB := rest[1].(*ir.Warpgroup)
	if !okA || !okB || a.Index == b.Index || len(a.Body) == 0 || len(b.Body) == 0 {
		return nil
	}
	type sets struct{ r, w map[*ir.Buffer]bool }
	of := func(s []ir.Stmt, keepRing bool) sets {
		x := sets{sharedBufs(s, true), sharedBufs(s, false)}
		if !keepRing {
			for buf := range ring {
				delete(x.r, buf)
				delete(x.w, buf)
			}
		}
		return x
	}
	// conflicts: statement x against the other block's tiles o (a write of
	// a tile o touches, or a read of one o writes).
	conflicts := func(x, o sets) bool {
		for buf := range x.w {
			if o.r[buf] || o.w[buf] {
				return true
			}
		}
		for buf := range x.r {
			if o.w[buf] {
				return true
			}
		}
		return false
	}
	first := func(body []ir.Stmt, o sets, keepRing bool) int {
		for i, s := range body {
			if conflicts(of([]ir.Stmt{s}, keepRing), o) {
				return i
			}
		}
		return -1
	}
	last := func(body []ir.Stmt, o sets, keepRing bool) int {
		for i := len(body) - 1; i >= 0; i-- {
			if conflicts(of([]ir.Stmt{body[i]}, keepRing), o) {
				return i
			}
		}
		return -1
	}
	h := &handoff{blocks: [2]*ir.Warpgroup{a, b}}
	aFwd, bFwd := last(a.Body, of(b.Body, true), true), first(b.Body, of(a.Body, true), true)
	if aFwd < 0 {
		return nil // no tile in common: nothing to hand over
	}
	h.arrive[0], h.wait[1] = aFwd, bFwd
	// Back: B's reads and writes of iteration j against A's of j+1. A
	// waits no later than it hands over, and B hands back no earlier than
	// it has taken, so the two barriers alternate.
	h.wait[0], h.arrive[1] = aFwd, bFwd
	if i := first(a.Body, of(b.Body, false), false); i >= 0 {
		h.wait[0] = min(i, aFwd)
	}
	if i := last(b.Body, of(a.Body, false), false); i >= 0 {
		h.arrive[1] = max(i, bFwd)
	}
	return h
}

// handoffBody emits the loop body of a hand-off plan (the loop's opening
// and TMA wait are the caller's, as are handoffBefore and handoffAfter
// around the loop).
func (e *emitter) handoffBody(h *handoff) {
	for k := range h.blocks {
		e.handBlock(h, k)
	}
}

// handoffBefore: B hands the tiles back once before A first waits for them.
func (e *emitter) handoffBefore(h *handoff) {
	e.line("if (tid / 128 == %d) tl::bar_arrive(%d, 256); // nothing to hand back yet", h.blocks[1].Index, handBar+1)
}

// handoffAfter: A takes B's last hand-back, so no arrival is left over;
// what the blocks wrote is then owed a barrier of all consumers.
func (e *emitter) handoffAfter(h *handoff) {
	e.line("if (tid / 128 == %d) tl::bar_sync(%d, 256); // the last hand-back", h.blocks[0].Index, handBar+1)
	e.setState(syncState{dirty: true, read: true})
}

// handBlock emits block k of the plan: its warpgroup alone, its waits and
// arrivals where the plan puts them. It starts from the state the block
// itself left at the end of the previous iteration, found by emitting the
// block until that state repeats (its own reads and writes then carry
// round the loop like any others').
func (e *emitter) handBlock(h *handoff, k int) {
	for range 4 {
		mark, tmp := e.b.Len(), e.tmp
		out := e.handBlockOnce(h, k)
		if covers(h.entry[k], out) {
			return
		}
		// Dry run: drop its text and try again from the state it reached.
		src := e.b.String()[:mark]
		e.b.Reset()
		e.b.WriteString(src)
		e.tmp = tmp
		h.entry[k] = mergeRoleState(h.entry[k], out)
	}
	e.fail(errAt("warpgroup", h.blocks[k].P, "internal error: the block's barrier state does not settle round the loop"))
}

func (e *emitter) handBlockOnce(h *handoff, k int) roleState {
	s := h.blocks[k]
	e.open("if (tid / 128 == %d)", s.Index)
	e.role = s
	e.setState(h.entry[k].sync)
	e.roleSeen, e.roleWrote = maps.Clone(h.entry[k].seen), maps.Clone(h.entry[k].wrote)
	// The block's wgmma multiplies are waited for where their results are
	// used, or at a hand-off whose other side writes what they read, or at
	// the block's end (so none crosses the loop's back edge): MLA's
	// warpgroup 0 issues its P·V and then writes P for warpgroup 1 while
	// the tensor cores run it.
	e.lazy = &lazyState{}
	var reading []*ir.Gemm                               // issued, not yet waited for
	otherWrites := sharedBufs(h.blocks[k^1].Body, false) // what the other block writes
	settle := func() {
		for _, g := range reading {
			if otherWrites[g.A.Buf] || otherWrites[g.B.Buf] {
				e.retireAll()
				break
			}
		}
		if len(e.lazy.pending) == 0 {
			reading = nil
		}
	}
	for i, st := range s.Body {
		if e.err != nil {
			break
		}
		if i == h.wait[k] {
			settle()
			if e.dirty && e.c.opts.Arch == "sm_90a" {
				e.line("tl::fence_proxy_async();")
			}
			e.line("tl::bar_sync(%d, 256); // the other warpgroup's hand-off", handBar+k^1)
			e.dirty, e.read = false, false
			clear(e.roleSeen)
			clear(e.roleWrote)
		}
		e.waitFor(st)
		if len(e.lazy.pending) == 0 {
			reading = nil
		}
		e.stmt(st)
		if g, ok := st.(*ir.Gemm); ok {
			reading = append(reading, g)
		}
		if i == h.arrive[k] {
			settle()
			if e.dirty && e.c.opts.Arch == "sm_90a" { // its writes since its last fence, for the other's wgmma
				e.line("tl::fence_proxy_async();")
			}
			e.line("tl::bar_arrive(%d, 256); // hand-off to the other warpgroup", handBar+k)
		}
	}
	e.retireAll()
	e.lazy = nil
	e.role = nil
	out := e.roleState()
	e.close()
	return out
}

// covers: state a owes all that b owes.
func covers(a, b roleState) bool {
	if b.sync.dirty && !a.sync.dirty || b.sync.pending && !a.sync.pending || b.sync.read && !a.sync.read {
		return false
	}
	for buf := range b.seen {
		if !a.seen[buf] {
			return false
		}
	}
	for buf := range b.wrote {
		if !a.wrote[buf] {
			return false
		}
	}
	return true
}

// mergeRoleState owes what either state owes.
func mergeRoleState(a, b roleState) roleState {
	union := func(x, y map[*ir.Buffer]bool) map[*ir.Buffer]bool {
		u := map[*ir.Buffer]bool{}
		maps.Copy(u, x)
		maps.Copy(u, y)
		return u
	}
	return roleState{syncState{a.sync.dirty || b.sync.dirty, a.sync.pending || b.sync.pending, a.sync.read || b.sync.read}, union(a.seen, b.seen), union(a.wrote, b.wrote)}
}
