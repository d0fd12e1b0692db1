package cudagen

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Walk loads (sm_90a, with a producer). In a persistent kernel, a serial
// loop over tiles around the one TMA pipelined loop, a copy at the top of
// the walk's body (a whole shared tile from global memory: FlashAttention's
// query tile) was the consumers' to issue at the start of every tile, its
// latency exposed after the previous tile's epilogue. The producer issues it
// instead, by TMA, before that tile's ring loads, into one of two buffers
// (one where two do not fit): the consumers wait on the buffer's full
// mbarrier where the copy stands and free it (its empty mbarrier) after the
// pipelined loop, past which nothing reads it, or earlier (walkEarly). So
// the next tile's query tile lands while this one finishes and stores its
// output. Such a tile lives across the walk, so the epilogue's staging
// tile no longer shares its bytes.

// walkLoad is a persistent walk's tile loads.
type walkLoad struct {
	loop, pipe  *ir.For             // the walk (serial) and its pipelined loop
	copies      []*ir.Copy          // in program order
	bufs        map[*ir.Buffer]bool // their tiles
	stages      int                 // buffers of each tile: 2, or 1
	full, empty int                 // shared offsets of the barriers (stages each)
	tma         map[*ir.Copy]*tmaCopy
	// draw: the walk is a Spread loop whose tiles the producer draws from
	// a counter and hands over in tickets, an int a buffer at shared
	// offset tickets (grid_loop.go).
	draw    bool
	tickets int
	waited  bool // the consumers waited for the slot at the top of the tile
}

// barrierBytes bounds the mbarriers planTMA and planWS add after the
// tiles: the rings' full and empty ones, the walk's and its tickets, and
// alignment.
func (w *walkLoad) barrierBytes(c *compilation) int {
	n := 8 + 32*c.ringSize(w.pipe) + 16*w.stages // a split ring's two pairs of rings, at most
	if wantDraw(c, w.loop) {
		n += 4 * w.stages
	}
	return n
}

// walkCandidates finds the copies a producer could issue a tile ahead:
// the producer's loop (wsLoopAhead) is a statement of a walk; the copies
// are statements of the walk's body before that loop, each loading a
// whole tile that nothing else writes, from a TMA-shaped box at an address
// any thread can compute, and that nothing after the loop uses.
func walkCandidates(c *compilation) *walkLoad {
	pipe, walk := wsLoopAhead(c)
	if walk == nil {
		return nil
	}
	w := &walkLoad{loop: walk, pipe: pipe, bufs: map[*ir.Buffer]bool{}, tma: map[*ir.Copy]*tmaCopy{}}
	writers := writeCounts(c.f.Kernel.Body)
	at := slices.Index(w.loop.Body, ir.Stmt(w.pipe))
	for _, st := range w.loop.Body[:at] {
		cp, ok := st.(*ir.Copy)
		if !ok || cp.Src.Buf.Scope != ir.Global || cp.Dst.Buf.Scope != ir.Shared || !cp.Dst.IsWhole() || writers[cp.Dst.Buf] != 1 {
			continue
		}
		if c.pureAll(cp.Src.Start) &&
			!usedIn(w.loop.Body[at+1:], cp.Dst.Buf) && tmaBoxOK(c, cp.Src, bufLayout(cp.Dst.Buf)) {
			w.copies = append(w.copies, cp)
			w.bufs[cp.Dst.Buf] = true
		}
	}
	if len(w.copies) == 0 {
		return nil
	}
	return w
}

// usedIn reports whether any statement of body, at any depth, touches b.
func usedIn(body []ir.Stmt, b *ir.Buffer) bool {
	found := false
	ir.Walk(body, func(s ir.Stmt) {
		if slices.Contains(ir.DirectUses(s), b) {
			found = true
		}
	})
	return found
}

// tmaBoxOK: global region g moves to shared tile sb as TMA boxes.
func tmaBoxOK(c *compilation, g ir.Region, sb *smemBuf) bool {
	_, _, ok := c.tmaBox(g, sb)
	return ok
}

// planPersistentLoads gives the walk's copies their tensor maps and barriers, once
// the producer walks the same loop.
func planPersistentLoads(c *compilation) {
	w := c.smem.walk
	if w == nil || c.ws == nil || c.ws.loop != w.pipe || c.tma[w.pipe].outer != w.loop {
		return
	}
	for _, cp := range w.copies {
		tc, spec, ok := c.tmaBox(cp.Src, c.smem.bufs[cp.Dst.Buf])
		if !ok {
			return
		}
		tc.spec = len(c.tmaSpecs)
		c.tmaSpecs = append(c.tmaSpecs, spec)
		w.tma[cp] = tc
	}
	c.smem.total = align(c.smem.total, 8)
	w.full = c.smem.total
	w.empty = w.full + 8*w.stages
	c.smem.total = w.empty + 8*w.stages
	if wantDraw(c, w.loop) {
		w.draw, w.tickets = true, c.smem.total
		c.smem.total += 4 * w.stages
	}
	c.ws.walk = w
}

// walkSlot is the buffer the walk's current tile uses: its index in the
// walk (the loop variable less its start; a Spread loop's count)
// modulo the buffers; the buffer's use count (index / stages) gives the
// barriers' parity.
func (e *emitter) walkSlot(w *walkLoad) (slot, use string) {
	i := fmt.Sprintf("(%s - %s)", w.loop.Var.Name, e.expr(w.loop.Start))
	if w.loop.Kind == ir.Spread {
		i = spreadCount(w.loop)
	}
	return fmt.Sprintf("(%s %% %d)", i, w.stages), fmt.Sprintf("(%s / %d)", i, w.stages)
}

// walkIssue is the producer's part, at the top of each walk iteration:
// wait until the consumers have freed the buffer, then load it by TMA.
func (e *emitter) walkIssue(w *walkLoad) {
	e.walkAwait(w)
	e.walkLoad(w)
}

// walkAwait waits until the consumers have freed the walk's buffer.
func (e *emitter) walkAwait(w *walkLoad) {
	slot, use := e.walkSlot(w)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * %s, (%s & 1) ^ 1);", w.empty, slot, use)
}

// walkLoad loads the walk's tiles into the freed buffer by TMA.
func (e *emitter) walkLoad(w *walkLoad) {
	slot, _ := e.walkSlot(w)
	for b := range w.bufs {
		e.stage[b] = slot
	}
	e.tmaIssue(w.full, w.tma, w.copies, slot, "")
	for b := range w.bufs {
		delete(e.stage, b)
	}
}

// walkWait stands for a walk copy on the consumers' side (a drawn walk
// waited at the top of the tile, for its ticket).
func (e *emitter) walkWait(w *walkLoad) {
	if w.waited {
		return
	}
	slot, use := e.walkSlot(w)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * %s, %s & 1);", w.full, slot, use)
}

// walkRelease frees the walk's buffer: one arrival per consumer warp, as
// the ring's.
func (e *emitter) walkRelease(w *walkLoad) {
	slot, _ := e.walkSlot(w)
	e.line("__syncwarp();")
	e.line("if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + %d) + 8 * %s);", w.empty, slot)
}

// walkEarly frees the walk's tiles inside a pipelined loop with Deferred
// statements (the only one whose wgmma waits are placed lazily): in its
// last iteration, as soon as the body's last reader of those tiles is done
// (a wgmma: the wait that retires it). The producer's load of the next
// tile's query then overlaps this tile's last softmax and P·V, not only
// its stores. A loop that runs no iteration frees them after it.
type walkEarly struct {
	w      *walkLoad
	last   ir.Stmt // the body's last statement that reads the walk's tiles
	v      string  // the loop variable
	issued bool    // last is emitted
	done   bool    // the release is emitted
}

// planPersistentRelease plans the early release of a persistent walk's tiles
// in the producer's loop, where its statements defer (planWalkEarly).
func planPersistentRelease(c *compilation) {
	if c.ws == nil || c.ws.walk == nil || !hasDeferred(c.ws.loop) {
		return
	}
	rest, _ := producerBody(c)
	c.walkEarly = planWalkEarly(c.ws.walk, rest, c.ws.loop.Var.Name)
}

// planWalkEarly finds the last statement of a pipelined loop's body that
// reads the walk's tiles. It must be one of the body's own statements: a
// Deferred one runs an iteration late, the last iteration's after the
// loop, so none may read them.
func planWalkEarly(w *walkLoad, body []ir.Stmt, v string) *walkEarly {
	uses := func(st ir.Stmt) bool {
		for b := range w.bufs {
			if usedIn([]ir.Stmt{st}, b) {
				return true
			}
		}
		return false
	}
	var last ir.Stmt
	for _, st := range body {
		if d, ok := st.(*ir.Deferred); ok {
			if slices.ContainsFunc(d.Body, uses) {
				return nil
			}
		} else if uses(st) {
			last = st
		}
	}
	if last == nil {
		return nil
	}
	return &walkEarly{w: w, last: last, v: v}
}

// walkReadDone follows the emission of a body statement: after the last
// reader, the tiles are free unless a wgmma that reads them is in flight
// (waitUpTo frees them when it retires the last such).
func (e *emitter) walkReadDone(st ir.Stmt) {
	if e.waits == nil || e.waits.early == nil || e.waits.early.last != st {
		return
	}
	e.waits.early.issued = true
	e.walkReleaseEarly()
}

// walkReleaseEarly frees the walk's tiles in the loop's last iteration,
// once their last reader is emitted and no wgmma reading them is in
// flight.
func (e *emitter) walkReleaseEarly() {
	w := e.waits.early
	if w == nil || !w.issued || w.done || slices.ContainsFunc(e.waits.pending, func(g wgGroup) bool { return g.walk }) {
		return
	}
	e.open("if (%s == hi - 1)", w.v)
	e.walkRelease(w.w)
	e.close()
	w.done = true
}

// walkStages sets the buffer of the walk's tiles for the walk's body: the
// walk's slot when the producer loads them, else the first (the consumers
// load them as any copy). It returns the undo.
func (e *emitter) walkStages(f *ir.For) func() {
	w := e.c.smem.walk
	if w == nil || f != w.loop {
		return func() {}
	}
	slot := "0"
	if e.c.ws != nil && e.c.ws.walk == w {
		slot, _ = e.walkSlot(w)
	}
	for b := range w.bufs {
		e.stage[b] = slot
	}
	return func() {
		for b := range w.bufs {
			delete(e.stage, b)
		}
	}
}
