package cudagen

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Parted ring slots (sm_90a, with a producer). When a pipelined loop's
// body is warpgroup blocks (tl's Warpgroup: MLA's hand-off) and they use
// different columns of the ring's one tile, a slot is freed in parts: the
// TMA boxes (64-column panels) that only some warpgroups use are freed
// once those are done with them, each part on its own ring of empty
// barriers, and the producer issues each part of the next fill as soon as
// it is free. MLA's warpgroup 0 scores the whole page and multiplies V's
// first half, warpgroup 1 multiplies V's second half a hand-off later:
// V's first half and the rope columns (5 of 9 panels) go out when
// warpgroup 0 is done, without waiting for warpgroup 1: 1.002-1.003× at
// b64 kv8k on an H200, 1.000 at b128.

// slotPart is the panels of a ring slot that the same warpgroups use.
type slotPart struct {
	panels []int // of the ring's copy, ascending
	users  uint  // bit g: consumer warpgroup g uses them
	empty  int   // shared offset of the part's empty barriers (a ring of the loop's stages)
}

// panelCols is the columns of a TMA panel of a 2-byte type (tmaCopy.panels
// counts 128-byte panels of the tile's rows); planParts declines a tile
// whose width is not panels of that many.
const panelCols = 64

// planParts parts the ring slots of the producer's loop where its body is
// warpgroup blocks alone that use different panels of its one tile: no
// split rings, no cluster (a partner's arrivals would need the parts too),
// no Deferred statements (they free a slot an iteration late).
func planParts(c *compilation) {
	w := c.ws
	if w == nil || c.cluster || c.rings(w.loop) != 1 || hasDeferred(w.loop) || !c.opts.Switches.Choose(SwitchParts, true) {
		return
	}
	l := c.tma[w.loop]
	if len(l.copies) != 1 {
		return
	}
	var buf *ir.Buffer
	var tc *tmaCopy
	for cp, t := range l.copies {
		buf, tc = cp.Dst.Buf, t
	}
	shape, ok := buf.StaticShape()
	if !ok || tc.panels < 2 || len(shape) == 0 || shape[len(shape)-1] != tc.panels*panelCols {
		return
	}
	groups := w.consumers / 128
	users := make([]uint, tc.panels)
	for _, st := range w.loop.Body {
		if cp, ok := st.(*ir.Copy); ok && l.copies[cp] != nil { // the fill itself, the producer's
			continue
		}
		g, ok := st.(*ir.Warpgroup)
		if !ok {
			if stmtBuffers(st)[buf] { // every thread uses it
				return
			}
			continue
		}
		if g.Index < 0 || g.Index >= groups {
			return
		}
		lo, hi := colsUsed(g.Body, buf, shape[len(shape)-1])
		for p := range users {
			if lo < (p+1)*panelCols && p*panelCols < hi {
				users[p] |= 1 << g.Index
			}
		}
	}
	all := uint(1)<<groups - 1
	var parts []slotPart
	for p, u := range users {
		if u == 0 { // no block uses it: freed with the rest
			u = all
		}
		i := slices.IndexFunc(parts, func(s slotPart) bool { return s.users == u })
		if i < 0 {
			parts = append(parts, slotPart{users: u})
			i = len(parts) - 1
		}
		parts[i].panels = append(parts[i].panels, p)
	}
	if len(parts) < 2 {
		return
	}
	// Those fewer warpgroups use free first, so the producer waits for them first.
	slices.SortStableFunc(parts, func(a, b slotPart) int { return bits.OnesCount(a.users) - bits.OnesCount(b.users) })
	S := c.ringSize(w.loop)
	if align(c.smem.total, 8)+8*S*(len(parts)-1) > ir.DefaultLimits.MaxSharedBytes {
		return
	}
	parts[0].empty = w.empty
	c.smem.total = align(c.smem.total, 8)
	for i := range parts[1:] {
		parts[i+1].empty = c.smem.total
		c.smem.total += 8 * S
	}
	w.parts = parts
}

// colsUsed is the span [lo, hi) of buf's last dimension that body reads or
// writes (lo >= hi: none): a region's own columns where its start there is
// a constant, all of them for element accesses and other starts.
func colsUsed(body []ir.Stmt, buf *ir.Buffer, width int) (lo, hi int) {
	lo, hi = width, 0
	add := func(a, b int) { lo, hi = min(lo, a), max(hi, b) }
	region := func(r ir.Region) {
		if r.Buf != buf {
			return
		}
		last := len(r.Extent) - 1
		if s, ok := ir.ConstInt(r.Start[last]); ok {
			add(int(s), int(s)+r.Extent[last])
			return
		}
		add(0, width)
	}
	ir.Walk(body, func(s ir.Stmt) { eachRegion(s, region) })
	// Element accesses: loads in any expression, stores, reductions.
	for _, st := range body {
		if elementUse(st, buf) {
			add(0, width)
		}
	}
	return lo, hi
}

// elementUse: st (or a statement in it) uses buf other than through a
// region colsUsed reads the columns of.
func elementUse(st ir.Stmt, buf *ir.Buffer) bool {
	found := false
	loads := func(e ir.Expr) {
		if e == nil {
			return
		}
		ir.WalkExpr(e, func(x ir.Expr) {
			if l, ok := x.(*ir.Load); ok && l.Buf == buf {
				found = true
			}
		})
	}
	starts := func(r ir.Region) {
		for _, s := range r.Start {
			loads(s)
		}
	}
	ir.Walk([]ir.Stmt{st}, func(s ir.Stmt) {
		eachRegion(s, starts)
		switch s := s.(type) {
		case *ir.Store:
			found = found || s.Buf == buf
			loads(s.Value)
			for _, i := range s.Idx {
				loads(i)
			}
		case *ir.Reduce:
			found = found || s.Src == buf || s.Dst == buf
		case *ir.Fill:
			loads(s.Value)
		case *ir.If:
			loads(s.Cond)
		case *ir.For:
			loads(s.Start)
			loads(s.Stop)
		case *ir.While:
			loads(s.Cond)
		}
	})
	return found
}

// partRings is the parts' empty barriers for initBars: one arrival a warp
// of the warpgroups that use the part.
func (w *wsPlan) partRings(S int) []barRing {
	var rs []barRing
	for _, p := range w.parts {
		rs = append(rs, barRing{p.empty, S, 4 * bits.OnesCount(p.users)})
	}
	return rs
}

// partsIssue is the producer's fill of slot with copy cp in parts: each
// part's panels once that part of the slot is free, the whole tile's bytes
// expected on its full barrier first.
func (e *emitter) partsIssue(full int, tc *tmaCopy, cp *ir.Copy, slot, pos string, S int) {
	bar := fmt.Sprintf("tl::smem_addr(smem + %d) + 8 * (%s)", full, slot)
	for i, p := range e.c.ws.parts {
		e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * %s, ((%s / %d) & 1) ^ 1);", p.empty, slot, pos, S)
		e.open("")
		if i == 0 {
			e.line("tl::mbar_arrive_expect_tx(%s, %d);", bar, tc.bytes)
		}
		e.tmaPanels(tc, cp, p.panels, bar)
		e.close()
	}
}

// partsRelease is wsRelease for parted slots: each warp arrives on the
// parts its warpgroup uses.
func (e *emitter) partsRelease(slot string) {
	e.line("__syncwarp();")
	e.open("if (lane == 0)")
	all := uint(1)<<(e.c.ws.consumers/128) - 1
	for _, p := range e.c.ws.parts {
		arrive := fmt.Sprintf("tl::mbar_arrive(tl::smem_addr(smem + %d) + 8 * %s);", p.empty, slot)
		if p.users == all {
			e.line("%s", arrive)
			continue
		}
		e.line("if ((%d >> (tid / 128)) & 1) %s", p.users, arrive)
	}
	e.close()
}
