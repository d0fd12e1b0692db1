package fuzz

import "github.com/tilego/tilego/ir"

// roles are the fragments of Warpgroup blocks: for warpgroup w, a
// [BM,BN] fragment and its row statistic, laid out over the warpgroup's
// 128 threads and used only in its blocks, and a shared tile that carries
// its result out.
type roles struct {
	frag, row, out []int
}

// roleTiles allocates them, for blocks of two warpgroups or more, sometimes.
func (g *gen) roleTiles() {
	p := g.p
	if p.Threads < 256 || !g.coin(3) {
		return
	}
	g.wg = &roles{}
	for w := range 2 {
		g.wg.frag = append(g.wg.frag, g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BM, p.BN}, Role: 1 + w}))
		g.wg.row = append(g.wg.row, g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BM}, Role: 1 + w}))
		out := g.add(Buf{Scope: Shared, DT: g.storeDT(false), Shape: []int{p.BM, p.BN}})
		g.wg.out = append(g.wg.out, out)
		g.sh2 = append(g.sh2, out)
	}
}

// roleInits fill each warpgroup's fragments in a block of its own.
func (g *gen) roleInits() []Op {
	if g.wg == nil {
		return nil
	}
	var out []Op
	for w := range 2 {
		out = append(out, Op{Kind: OpWarpgroup, N: w, Body: []Op{
			{Kind: OpFill, Dst: whole(g.wg.frag[w]), Value: g.finite()},
			{Kind: OpFill, Dst: whole(g.wg.row[w]), Value: g.constant()},
		}})
	}
	return out
}

// roleBlocks: in each warpgroup's block, its fragment takes a shared
// tile (or keeps its value), a Parallel loop over it (first, so that it
// lays the fragment out before the reduction projects it) reads its row
// statistic and shared tiles, its rows are reduced, and the result goes to
// the warpgroup's own shared tile.
func (g *gen) roleBlocks() []Op {
	if g.wg == nil {
		return nil
	}
	var out []Op
	for w := range 2 {
		f, r := g.wg.frag[w], g.wg.row[w]
		var body []Op
		if src := g.pickTile2(); g.p.Bufs[src].Scope == Shared && g.coin(2) {
			body = append(body, Op{Kind: OpCopy, Src: whole(src), Dst: whole(f)})
		}
		leaf := func() *Expr {
			cands := []*Expr{{Op: "load", Buf: f, Map: []int{0, 1}}, {Op: "load", Buf: r, Map: []int{0}}, {Op: "const", Val: g.finite()}}
			for _, b := range g.sh2 {
				cands = append(cands, g.sharedLoad(b, []int{0, 1}, true))
			}
			return cands[g.r.IntN(len(cands))]
		}
		e := &Expr{Op: "max", Args: []*Expr{{Op: "load", Buf: f, Map: []int{0, 1}}, g.expr(2, leaf)}}
		body = append(body,
			Op{Kind: OpParallel, Dst: whole(f), Expr: e},
			Op{Kind: OpReduce, Src: whole(f), Dst: whole(r), Dim: 1, Reduce: ir.ReduceKind(g.r.IntN(4)), Accum: g.coin(2)},
			Op{Kind: OpCopy, Src: whole(f), Dst: whole(g.wg.out[w])})
		out = append(out, Op{Kind: OpWarpgroup, N: w, Body: body})
	}
	return out
}

// handoffLoop ends the program with loop (a pipelined loop that loads its
// ring tile) holding nothing but the two warpgroups' blocks: warpgroup 0
// takes the ring tile, warpgroup 1 what warpgroup 0 wrote, so that with a
// producer (WarpSpecialize) the blocks hand the tile over to each other
// rather than meet at barriers of all threads. Each warpgroup's last
// tile is stored after the loop.
func (g *gen) handoffLoop(loop Op) {
	p := g.p
	g.inRing = true
	blocks := g.roleBlocks()
	g.inRing = false
	for w, src := range []int{loop.Body[0].Dst.Buf, g.wg.out[0]} {
		body := blocks[w].Body
		if body[0].Kind == OpCopy && body[0].Dst.Buf == g.wg.frag[w] {
			body = body[1:]
		}
		blocks[w].Body = append([]Op{{Kind: OpCopy, Src: whole(src), Dst: whole(g.wg.frag[w])}}, body...)
	}
	loop.Body = append(loop.Body, blocks...)
	p.WS = true
	p.Body = append(p.Body, loop)
	for _, out := range g.wg.out {
		dst := g.output([]int{RowsDim, p.BN}, g.storeDT(true))
		p.Body = append(p.Body, Op{Kind: OpCopy, Src: whole(out), Dst: g.tileRef(dst, 0)})
	}
}

// input16 picks a 16-bit input, which a tile of its own type can load by
// TMA.
func (g *gen) input16() (int, bool) {
	for _, x := range g.xs {
		if dt := g.p.Bufs[x].DT; dt == ir.F16 || dt == ir.BF16 {
			return x, true
		}
	}
	return 0, false
}
