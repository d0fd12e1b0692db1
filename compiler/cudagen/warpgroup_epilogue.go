package cudagen

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Warpgroup halves (sm_90a): a persistent walk whose tiles the producer
// loads (persistent_loads.go), with two consumer warpgroups. Its epilogue stages a
// fragment in a shared tile for a TMA store, and each warpgroup's rows of
// the fragment are one half of the tile. Each warpgroup then stores its
// own half, behind a named barrier of its own 128 threads, and the two
// meet at no barrier from one tile to the next: one's epilogue runs while
// the other's last multiplies compute, and its next tile's first multiply
// may start while the other stores. With ping-pong turns (pingpong.go) the
// turns run on across the walk's tiles: warpgroup 1's first arrival is
// given once, at the walk's first tile, and warpgroup 0's last turn taken
// once, at its last, so a warpgroup a tile ahead finds its turn where the
// other left it.
//
// The consumers otherwise met three times a tile: before the pipelined
// loop (for copies they issued, which the walk's producer now issues),
// after it (for tiles that might reuse the ring's bytes, which none does
// here), and around the store.

const halfBar = 6 // 0 is __syncthreads', 1 the consumers', 2-3 turns, 4-5 roles, 8-9 hand-offs

// halves is a walk whose epilogue stores by warpgroup halves.
type halves struct {
	walk, pipe *ir.For
	tile       *ir.Buffer // the staging tile (nil: none)
	write      *ir.Copy   // fragment → tile
	store      *ir.Copy   // tile → global, by TMA
	rows       int        // of a half
}

// planWarpgroupEpilogue finds the walk whose epilogue can go by halves: in the walk's
// body the pipelined loop writes no shared memory, only the walk's loads
// touch shared memory before it, and after it only a fragment's copy to a
// whole tile and that tile's TMA store; the tile is touched nowhere else,
// shares no bytes, and warpgroup w's threads hold exactly the fragment's
// rows of half w. It halves the store's TMA box. An epilogue that touches
// no shared memory at all (the output stored from registers) needs no
// barrier: the walk is planned too, without a tile.
func planWarpgroupEpilogue(c *compilation) {
	if c.ws == nil || c.ws.walk == nil || c.ws.consumers != 256 || len(c.roles) > 0 || !c.opts.Switches.Choose(SwitchHalves, true) {
		return
	}
	w := c.ws.walk
	hoisted := map[ir.Stmt]bool{}
	for _, cp := range c.smem.hoisted[w.pipe] {
		hoisted[ir.Stmt(cp)] = true
	}
	if touches(ownStmts(w.pipe.Body, hoisted), false) {
		return
	}
	shared := func(st ir.Stmt) bool { return touches([]ir.Stmt{st}, true) || touches([]ir.Stmt{st}, false) }
	at := slices.Index(w.loop.Body, ir.Stmt(w.pipe))
	for _, st := range w.loop.Body[:at] {
		if cp, ok := st.(*ir.Copy); !(ok && w.tma[cp] != nil) && shared(st) {
			return
		}
	}
	h := &halves{walk: w.loop, pipe: w.pipe}
	for _, st := range w.loop.Body[at+1:] {
		if !shared(st) {
			continue
		}
		cp, ok := st.(*ir.Copy)
		switch {
		case !ok:
			return
		case h.write == nil && cp.Src.Buf.Scope == ir.Fragment && cp.Dst.Buf.Scope == ir.Shared && cp.Dst.IsWhole():
			h.write, h.tile = cp, cp.Dst.Buf
		case h.write != nil && h.store == nil && cp.Src.Buf == h.tile && c.tmaStores[cp] != nil:
			h.store = cp
		default:
			return
		}
	}
	switch {
	case h.write == nil: // no staging tile: the epilogue touches no shared memory
	case h.store == nil || !c.halvesApart(h) || !c.halvesRows(h):
		return
	default:
		tc := c.tmaStores[h.store]
		c.tmaSpecs[tc.spec].Box[tc.row] = uint32(h.rows)
	}
	c.halves = h
}

// halvesApart: the staging tile is touched by h's two copies alone and
// shares no byte with another tile.
func (c *compilation) halvesApart(h *halves) bool {
	apart := true
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		if s != ir.Stmt(h.write) && s != ir.Stmt(h.store) && slices.Contains(ir.DirectUses(s), h.tile) {
			apart = false
		}
	})
	t := c.smem.bufs[h.tile]
	for b, sb := range c.smem.bufs {
		if b != h.tile && sb.off < t.off+t.stageBytes*t.stages && t.off < sb.off+sb.stageBytes*sb.stages {
			apart = false
		}
	}
	return apart
}

// halvesRows: the written fragment is laid out over the 256 consumer
// threads, and thread t holds rows of half t / 128 only; a half is whole
// swizzle periods (8 rows of 128 bytes), so TMA and the threads agree on
// its bytes.
func (c *compilation) halvesRows(h *halves) bool {
	l, t := c.layouts[h.write.Src.Buf], c.smem.bufs[h.tile]
	if l == nil || l.NumThreads() != 256 || t.rows%16 != 0 || t.panelW != 128 {
		return false
	}
	h.rows = t.rows / 2
	for th := range 256 {
		for r := range l.NumRegs() {
			if l.Coord(th, r)[0]/h.rows != th/128 {
				return false
			}
		}
	}
	return true
}

// halfSync is a barrier of the thread's own warpgroup, after it wrote its
// half (fenced for the TMA store) or before it writes the half again.
func (e *emitter) halfSync(fence bool) {
	if fence {
		e.fence()
	}
	e.line("tl::bar_sync(%d + tid / 128, 128); // this warpgroup's half", halfBar)
	e.halfRead = false
}

// halfStore is the TMA store of a half: its warpgroup's first thread
// issues it, rows offset by the warpgroup's half.
func (e *emitter) halfStore(cp *ir.Copy, tc *tmaCopy) {
	h, sb := e.c.halves, e.c.smem.bufs[cp.Src.Buf]
	e.open("if (tid %% 128 == 0)")
	e.line("const int half = tid / 128;")
	for p := range tc.panels {
		src := fmt.Sprintf("tl::smem_addr(%s) + %d + half * %d", e.sharedBase(cp.Src.Buf), p*sb.rows*128, h.rows*128)
		e.line("tl::tma_store_%dd(&tm%d, %s, %s);", tc.rank, tc.spec, e.tmaCoordsAt(cp.Dst, p, fmt.Sprintf(" + half * %d", h.rows)), src)
	}
	e.line("tl::bulk_commit();")
	e.line("tl::bulk_wait_read<0>();") // the half may be written again after the warpgroup's next barrier
	e.close()
	e.halfRead = true
}

// halvesPipe: s is the pipelined loop of a walk by halves.
func (e *emitter) halvesPipe(s *ir.For) bool { return e.c.halves != nil && e.c.halves.pipe == s }
