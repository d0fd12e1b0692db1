package cudagen

import (
	"maps"

	"github.com/tilego/tilego/ir"
)

// Hand-offs: a warp-specialized loop whose body is two Warpgroup blocks of
// different warpgroups (A, then B) runs without a barrier of all
// consumers. What B needs of A's shared tiles, A hands over once its last
// write B depends on is done (every thread of A arrives at an mbarrier,
// without waiting), and B waits for it (the iteration's phase) before its
// first statement that depends on it; a named barrier hands the tiles
// back the other way, B arriving once done with them and A waiting before
// it first overwrites them in the next iteration. Each warpgroup therefore
// runs up to the next point where it needs the other: in MLA, warpgroup 0
// scores page j+1 while warpgroup 1 multiplies page j by V.
//
// The forward hand-off was a named barrier too (A's bar.arrive, B's
// bar.sync). Both forms are race-free, but compute-sanitizer's racecheck
// reported hazards between A's writes and B's reads with it, and with a
// warpgroup's own barrier as a named barrier of 128 threads: MLA's split
// kernel drew 8 reports, and none with the hand-off and those barriers
// on mbarriers (H100, 2026-11-25, docs/perf.md; 0.1-1.3% slower).
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
//
// Where B's last use of the tiles is its block's last statement (MLA's),
// B hands them back by meeting A at the back barrier (a sync, not an
// arrival) just before it waits for the next iteration's, and once after
// the loop: it would wait there for A's hand-off anyway, which A gives
// only after the back barrier, so neither warpgroup waits longer. The two
// meet there from different instructions, which the non-aligned
// barrier.sync allows (tl::bar_sync_apart; bar.sync, being aligned, does
// not, and synccheck reports it). It was 1.0-1.4% faster on MLA than B's
// arrival (H100, 2026-11-25).

// handBar is the first of the hand-off's two named barriers (A to B, then
// B to A); 4 and 5 are the warpgroup blocks' own (roleBar). With the
// mbarriers of planHandBars, A to B is an mbarrier.
const handBar = 8

// planHandBars gives a kernel with warpgroup blocks mbarriers for each
// warpgroup's own barrier (roleSync) and, warp-specialized, for its
// hand-offs (two), after the other barriers, where shared memory has room.
// Without them the own barrier is a named barrier of 128 threads: as
// correct, but racecheck then reports hazards that are not there.
func planHandBars(c *compilation) {
	c.roleBars = -1
	if w := c.ws; w != nil {
		w.hand = -1
	}
	found := false
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		if _, ok := s.(*ir.Warpgroup); ok {
			found = true
		}
	})
	if !found || !mbarriers(c.opts.Arch) {
		return
	}
	at := align(c.smem.total, 8)
	if w := c.ws; w != nil {
		if at+8*w.handBars() <= ir.DefaultLimits.MaxSharedBytes {
			w.hand, c.smem.total = at, at+8*w.handBars()
		}
		return
	}
	if n := c.f.Kernel.Threads / 128; at+8*n <= sharedLimit(c.opts.Arch) {
		c.roleBars, c.smem.total = at, at+8*n
	}
}

// handBars is how many mbarriers planHandBars places: two slots for
// hand-offs (A to B; the second, once a three-block loop's, is kept so
// that the barriers' offsets, and the generated code, stay as measured),
// then one a consumer warpgroup.
func (w *wsPlan) handBars() int { return 2 + w.consumers/128 }

// roleMbar is the shared offset of warpgroup i's own mbarrier.
func (w *wsPlan) roleMbar(i int) int { return w.hand + 8*(2+i) }

// roleMbar is the shared offset of warpgroup i's own mbarrier, or -1
// where its own barrier is a named barrier (planHandBars).
func (c *compilation) roleMbar(i int) int {
	switch w := c.ws; {
	case w != nil && w.hand >= 0:
		return w.roleMbar(i)
	case w == nil && c.roleBars >= 0:
		return c.roleBars + 8*i
	}
	return -1
}

// handMbar is the shared offset of the mbarrier that stands for h's
// named barrier bar, or -1 where bar stays a named barrier (no room for
// the mbarriers; or B's hand-back, which B may give before the loop, and
// meets A at under lateBack). Each stands for a hand-off made once an
// iteration, one way: a phase an iteration.
func (e *emitter) handMbar(h *handoff, bar int) int {
	w := e.c.ws
	switch {
	case w == nil || w.hand < 0:
		return -1
	case bar == handBar:
		return w.hand
	}
	return -1
}

// handoff is the plan of a loop body of two warpgroup blocks (A, B): for
// each block, the statement its wait goes
// before (-1: none; len(Body): at its end) and its arrival after (-1:
// none), and on which barriers.
type handoff struct {
	blocks             []*ir.Warpgroup
	wait, arrive       []int
	waitBar, arriveBar []int
	// lateBack: B hands the tiles back by meeting the back barrier before
	// its next wait, and after the loop, rather than arriving there.
	lateBack bool
	entry    []roleState
}

// roleState is what a warpgroup block's emission knows about shared
// memory: the barriers its warpgroup owes, and the tiles touched since the
// last one.
type roleState struct {
	sync        syncState
	seen, wrote map[*ir.Buffer]bool
}

// planHandoffs plans the hand-offs of the warp-specialized loop (the
// producer's), where its body writes shared memory of its own and defers
// nothing: the body without its prefetches must be warpgroup blocks that
// share shared tiles (planHandoff).
func planHandoffs(c *compilation) error {
	if c.ws == nil {
		return nil
	}
	s := c.ws.loop
	rest, isHoisted := producerBody(c)
	if free := !touches(ownStmts(rest, isHoisted), false); !free && !hasDeferred(s) {
		ring := map[*ir.Buffer]bool{}
		for _, cp := range c.smem.hoisted[s] {
			ring[cp.Dst.Buf] = true
		}
		c.handoff = planHandoff(rest, ring)
	}
	return nil
}

// producerBody is the statements of the producer's loop other than the
// prefetches it issues (rest), and those prefetches (isHoisted).
func producerBody(c *compilation) (rest []ir.Stmt, isHoisted map[ir.Stmt]bool) {
	isHoisted = map[ir.Stmt]bool{}
	for _, cp := range c.smem.hoisted[c.ws.loop] {
		isHoisted[cp] = true
	}
	for _, st := range c.ws.loop.Body {
		if !isHoisted[st] {
			rest = append(rest, st)
		}
	}
	return rest, isHoisted
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
	of := func(s []ir.Stmt, keepRing bool) tileSets { return tilesOf(s, ring, keepRing) }
	first := func(body []ir.Stmt, o tileSets, keepRing bool) int { return firstConflict(body, o, ring, keepRing) }
	last := func(body []ir.Stmt, o tileSets, keepRing bool) int { return lastConflict(body, o, ring, keepRing) }
	aFwd, bFwd := last(a.Body, of(b.Body, true), true), first(b.Body, of(a.Body, true), true)
	if aFwd < 0 {
		return nil // no tile in common: nothing to hand over
	}
	// Back: B's reads and writes of iteration j against A's of j+1. A
	// waits no later than it hands over, and B hands back no earlier than
	// it has taken, so the two barriers alternate.
	aBack, bBack := aFwd, bFwd
	if i := first(a.Body, of(b.Body, false), false); i >= 0 {
		aBack = min(i, aFwd)
	}
	if i := last(b.Body, of(a.Body, false), false); i >= 0 {
		bBack = max(i, bFwd)
	}
	h := &handoff{
		blocks: []*ir.Warpgroup{a, b},
		wait:   []int{aBack, bFwd}, waitBar: []int{handBar + 1, handBar},
		arrive: []int{aFwd, bBack}, arriveBar: []int{handBar, handBar + 1},
		entry: make([]roleState, 2),
	}
	if bBack == len(b.Body)-1 {
		h.lateBack, h.arrive[1] = true, -1
	}
	return h
}

// tileSets are the shared tiles some statements read and write.
type tileSets struct{ r, w map[*ir.Buffer]bool }

// tilesOf is what body reads and writes of shared memory, the ring's tiles
// left out unless keepRing.
func tilesOf(body []ir.Stmt, ring map[*ir.Buffer]bool, keepRing bool) tileSets {
	x := tileSets{sharedBufs(body, true), sharedBufs(body, false)}
	if !keepRing {
		for buf := range ring {
			delete(x.r, buf)
			delete(x.w, buf)
		}
	}
	return x
}

// conflicts: x against the other block's tiles o (a write of a tile o
// touches, or a read of one o writes).
func (x tileSets) conflicts(o tileSets) bool {
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

// firstConflict is the first statement of body in conflict with o (-1:
// none); lastConflict the last.
func firstConflict(body []ir.Stmt, o tileSets, ring map[*ir.Buffer]bool, keepRing bool) int {
	for i, s := range body {
		if tilesOf([]ir.Stmt{s}, ring, keepRing).conflicts(o) {
			return i
		}
	}
	return -1
}

func lastConflict(body []ir.Stmt, o tileSets, ring map[*ir.Buffer]bool, keepRing bool) int {
	for i := len(body) - 1; i >= 0; i-- {
		if tilesOf([]ir.Stmt{body[i]}, ring, keepRing).conflicts(o) {
			return i
		}
	}
	return -1
}

// handoffBody emits the loop body of a hand-off plan (the loop's opening
// and TMA wait are the caller's, as are handoffBefore and handoffAfter
// around the loop). Each block starts from the state its warpgroup's
// previous block left (itself, a loop iteration before, when its
// warpgroup has one block), found by emitting the body until those states
// repeat (its reads and writes then carry round the loop like any
// others'); the dry runs' text is dropped.
func (e *emitter) handoffBody(h *handoff) {
	for range 4 {
		mark, tmp := e.b.Len(), e.tmp
		settled := true
		for k := range h.blocks {
			out := e.handBlockOnce(h, k)
			if n := h.next(k); !covers(h.entry[n], out) {
				h.entry[n] = mergeRoleState(h.entry[n], out)
				settled = false
			}
		}
		if settled || e.err != nil {
			return
		}
		src := e.b.String()[:mark]
		e.b.Reset()
		e.b.WriteString(src)
		e.tmp = tmp
	}
	e.fail(errAt("warpgroup", h.blocks[0].P, "internal error: the blocks' barrier state does not settle round the loop"))
}

// next is the block its warpgroup runs after block k: the next of the
// same warpgroup, round the loop.
func (h *handoff) next(k int) int {
	n := len(h.blocks)
	for d := 1; d < n; d++ {
		if j := (k + d) % n; h.blocks[j].Index == h.blocks[k].Index {
			return j
		}
	}
	return k
}

// handoffBefore: B hands the tiles back once before A first waits for them.
func (e *emitter) handoffBefore(h *handoff) {
	if len(h.blocks) != 2 || h.lateBack {
		return
	}
	e.line("if (tid / 128 == %d) tl::bar_arrive(%d, 256); // nothing to hand back yet", h.blocks[1].Index, handBar+1)
}

// handoffAfter: A takes B's last hand-back, so no arrival is left over;
// what the blocks wrote is then owed a barrier of all consumers.
func (e *emitter) handoffAfter(h *handoff) {
	switch {
	case h.lateBack:
		e.line("tl::bar_sync(%d, 256); // the last hand-back", handBar+1)
	case len(h.blocks) == 2:
		e.line("if (tid / 128 == %d) tl::bar_sync(%d, 256); // the last hand-back", h.blocks[0].Index, handBar+1)
	}
	e.setState(syncState{dirty: true, read: true, unfenced: true})
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
	e.waits = &wgmmaWaits{}
	var reading []*ir.Gemm               // issued, not yet waited for
	otherWrites := map[*ir.Buffer]bool{} // what the other warpgroup's blocks write
	for _, o := range h.blocks {
		if o.Index != s.Index {
			maps.Copy(otherWrites, sharedBufs(o.Body, false))
		}
	}
	settle := func() {
		for _, g := range reading {
			if otherWrites[g.A.Buf] || otherWrites[g.B.Buf] {
				e.retireAll()
				break
			}
		}
		if len(e.waits.pending) == 0 {
			reading = nil
		}
	}
	handWait := func() {
		settle()
		e.proxyFence()
		bar := "bar_sync"
		if h.lateBack { // the back barrier is met from two instructions, A's wait and B's
			if k == 1 {
				e.line("tl::bar_sync_apart(%d, 256); // the last iteration's tiles back to the other warpgroup", handBar+1)
			}
			if h.waitBar[k] == handBar+1 {
				bar = "bar_sync_apart"
			}
		}
		if at := e.handMbar(h, h.waitBar[k]); at >= 0 {
			w := e.c.ws
			e.line("tl::mbar_wait(tl::smem_addr(smem + %d), %s & 1); // the other warpgroup's hand-off", at, e.ringPos(e.c.tma[w.loop], w.loop.Var.Name))
		} else {
			e.line("tl::%s(%d, 256); // the other warpgroup's hand-off", bar, h.waitBar[k])
		}
		e.dirty, e.read = false, false
		clear(e.roleSeen)
		clear(e.roleWrote)
	}
	for i, st := range s.Body {
		if e.err != nil {
			break
		}
		if i == h.wait[k] {
			handWait()
		}
		e.waitFor(st)
		if len(e.waits.pending) == 0 {
			reading = nil
		}
		e.stmt(st)
		if g, ok := st.(*ir.Gemm); ok {
			reading = append(reading, g)
		}
		if i == h.arrive[k] {
			settle()
			e.proxyFence() // its writes since its last fence, for the other's wgmma
			if at := e.handMbar(h, h.arriveBar[k]); at >= 0 {
				e.line("tl::mbar_arrive(tl::smem_addr(smem + %d)); // hand-off to the other warpgroup", at)
			} else {
				e.line("tl::bar_arrive(%d, 256); // hand-off to the other warpgroup", h.arriveBar[k])
			}
		}
	}
	e.retireAll()
	if h.wait[k] == len(s.Body) {
		handWait()
	}
	e.waits = nil
	e.role = nil
	out := e.roleState()
	e.close()
	return out
}

// covers: state a owes all that b owes.
func covers(a, b roleState) bool {
	if b.sync.dirty && !a.sync.dirty || b.sync.pending && !a.sync.pending || b.sync.read && !a.sync.read || b.sync.unfenced && !a.sync.unfenced {
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
	return roleState{syncState{a.sync.dirty || b.sync.dirty, a.sync.pending || b.sync.pending, a.sync.read || b.sync.read, a.sync.unfenced || b.sync.unfenced}, union(a.seen, b.seen), union(a.wrote, b.wrote)}
}
