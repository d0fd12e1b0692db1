package cuda

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Seesaw loops (FlashMLA's alternating scorer: kernels/mla.go's seesaw).
// The body of a warp-specialized loop is three warpgroup blocks, A1, B and
// A2, the first and last of one warpgroup, and two prefetched tiles:
//
//	A1 (wg 0): scores tile a, hands over its P and factors     → B
//	B  (wg 1): scores tile b, multiplies by a, hands over its P → A2
//	A2 (wg 0): multiplies by b
//
// The hand-offs, A1 → B and B → A2, are two mbarriers with a producer
// (handMbar; else named barriers 8 and 9), each arrived at and waited for
// once an iteration, in that order, so neither collects two rounds of
// arrivals (nor runs a phase ahead of its waiter): A1 of the next iteration comes after A2's wait, and
// B's arrival after its own wait. Of the back edges, what A2 of iteration
// j still uses B of j+1 waits for (A1 of j+1 hands over only after A2 of
// j), and what B of j still uses A1 of j+1 waits for (A2 of j takes it
// from B first).
//
// With a producer each tile has a ring of its own (split.go's two rings),
// of the loop's stages (one: Q and two 72 KB pages fill shared memory).
// Each warpgroup waits for a ring's slot before it first touches the tile
// in the iteration and frees the slot after it last does, once no multiply
// in flight may read it: tile a's slot is refilled while B still reads
// tile b, where one ring of both would wait for the end of the iteration.

// handRing is one of a seesaw's rings: its full and empty barriers, its
// tiles, and per block the statement its warpgroup waits for the slot
// before, and the one after which it frees it (-1: neither).
type handRing struct {
	full, empty int
	tiles       map[*ir.Buffer]bool
	wait, free  []int
	loop        *ir.For
}

// seesawBlocks splits a loop body (its prefetches left out) into A1, B, A2.
func seesawBlocks(rest []ir.Stmt) (a1, b, a2 *ir.Warpgroup, ok bool) {
	if len(rest) != 3 {
		return nil, nil, nil, false
	}
	var wg [3]*ir.Warpgroup
	for i, st := range rest {
		w, isWG := st.(*ir.Warpgroup)
		if !isWG || len(w.Body) == 0 {
			return nil, nil, nil, false
		}
		wg[i] = w
	}
	if wg[0].Index != wg[2].Index || wg[0].Index == wg[1].Index {
		return nil, nil, nil, false
	}
	return wg[0], wg[1], wg[2], true
}

// planSeesaw is the hand-off plan of a seesaw body, or nil.
func planSeesaw(rest []ir.Stmt, ring map[*ir.Buffer]bool) *handoff {
	a1, b, a2, ok := seesawBlocks(rest)
	if !ok {
		return nil
	}
	keep := func(s []ir.Stmt) tileSets { return tilesOf(s, ring, true) }
	prev := func(s []ir.Stmt) tileSets { return tilesOf(s, ring, false) } // another iteration's: its slots are not this one's
	aF := lastConflict(a1.Body, keep(b.Body), ring, true)
	bF := firstConflict(b.Body, keep(a1.Body).union(prev(a2.Body)), ring, true)
	if aF < 0 || bF < 0 {
		return nil // nothing handed over
	}
	aG := firstConflict(a2.Body, keep(b.Body), ring, true)
	if aG < 0 {
		aG = len(a2.Body) // still taken, for the next A1
	}
	bG := max(bF, lastConflict(b.Body, keep(a2.Body).union(prev(a1.Body)), ring, true))
	return &handoff{
		blocks: []*ir.Warpgroup{a1, b, a2},
		wait:   []int{-1, bF, aG}, waitBar: []int{0, handBar, handBar + 1},
		arrive: []int{aF, bG, -1}, arriveBar: []int{handBar, handBar + 1, 0},
		entry: make([]roleState, 3),
	}
}

// seesawLoop: f is a pipelined loop whose body is two prefetched tiles and
// a seesaw's three blocks, whatever its stages.
func seesawLoop(c *compilation, f *ir.For) bool {
	cps := c.hoistable(f)
	if f.Kind != ir.Pipelined || len(cps) != 2 || cps[0].Dst.Buf == cps[1].Dst.Buf {
		return false
	}
	var rest []ir.Stmt
	for _, st := range f.Body {
		if cp, ok := st.(*ir.Copy); !ok || !slices.Contains(cps, cp) {
			rest = append(rest, st)
		}
	}
	_, _, _, ok := seesawBlocks(rest)
	return ok
}

// planSeesawRings splits f's rings when f is a seesaw loop: A1's tile
// early, the other late. Nil when f is not one, or A1 touches both.
func planSeesawRings(c *compilation, f *ir.For) *splitRing {
	if !seesawLoop(c, f) {
		return nil
	}
	cps := c.hoistable(f)
	var a1 *ir.Warpgroup
	for _, st := range f.Body {
		if w, ok := st.(*ir.Warpgroup); ok {
			a1 = w
			break
		}
	}
	used := map[*ir.Buffer]bool{}
	for _, st := range a1.Body {
		for b := range stmtBuffers(st) {
			used[b] = true
		}
	}
	sr := &splitRing{seesaw: true}
	for _, cp := range cps {
		if !c.pureAll(cp.Src.Start) || !tmaBoxOK(c, cp.Src, bufLayout(cp.Dst.Buf)) {
			return nil
		}
		if used[cp.Dst.Buf] {
			sr.early = append(sr.early, cp)
		} else {
			sr.late = append(sr.late, cp)
		}
	}
	if len(sr.early) != 1 || len(sr.late) != 1 {
		return nil
	}
	return sr
}

// seesawRings are h's rings on loop f (split by planSeesawRings): each
// warpgroup waits for a slot in its first block that touches the tile,
// and frees it after its last statement that does (at the end of its last
// block when none does).
func seesawRings(c *compilation, f *ir.For, h *handoff) []*handRing {
	sr, l, w := c.split[f], c.tma[f], c.ws
	ring := func(full, empty int, cps []*ir.Copy) *handRing {
		r := &handRing{full: full, empty: empty, tiles: map[*ir.Buffer]bool{}, loop: f}
		for _, cp := range cps {
			r.tiles[cp.Dst.Buf] = true
		}
		n := len(h.blocks)
		r.wait, r.free = slices.Repeat([]int{-1}, n), slices.Repeat([]int{-1}, n)
		done := map[int]bool{}
		for k0, b0 := range h.blocks {
			if done[b0.Index] {
				continue
			}
			done[b0.Index] = true
			waited, lastK, lastI := false, -1, -1
			for k := k0; k < n; k++ {
				if h.blocks[k].Index != b0.Index {
					continue
				}
				for i, st := range h.blocks[k].Body {
					for buf := range stmtBuffers(st) {
						if r.tiles[buf] {
							if !waited {
								r.wait[k], waited = i, true
							}
							lastK, lastI = k, i
						}
					}
				}
			}
			if lastK < 0 { // never touched: freed at the end of its last block
				for k := n - 1; k >= 0; k-- {
					if h.blocks[k].Index == b0.Index {
						lastK = k
						break
					}
				}
				lastI = len(h.blocks[lastK].Body) - 1
			}
			r.free[lastK] = lastI
		}
		return r
	}
	return []*handRing{ring(l.bar, w.empty, sr.early), ring(l.lateBar, w.lateEmpty, sr.late)}
}

// ringWait waits for the slot of ring r of the iteration.
func (e *emitter) ringWait(r *handRing) {
	pos, R := e.ringPos(e.c.tma[r.loop], r.loop.Var.Name), e.c.ringSize(r.loop)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * (%s %% %d), (%s / %d) & 1); // %s", r.full, pos, R, pos, R, ringNames(r))
}

// ringFree frees the warpgroup's hold on the slot of ring r of the
// iteration.
func (e *emitter) ringFree(r *handRing) {
	e.line("// done with %s", ringNames(r))
	e.wsReleaseAt(r.empty, r.loop.Var.Name, e.c.ringSize(r.loop))
}

func ringNames(r *handRing) string {
	var names []string
	for b := range r.tiles {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	return fmt.Sprint(names)
}
