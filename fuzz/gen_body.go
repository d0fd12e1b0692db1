package fuzz

import (
	"math"

	"github.com/tilego/tilego/ir"
)

const jv = 2 // Spec.Var of the column loop (depth 1)

// body lays out the kernel: initialize every tile, walk the column tiles
// (loads, the Gemm's K loop, random ops, stores), then store the rows'
// results.
func (g *gen) body() {
	p := g.p
	nt := 1 + g.r.IntN(3)
	cols := g.cols(nt)
	for range 1 + g.r.IntN(2) {
		g.xs = append(g.xs, g.input(cols))
	}
	if g.gemm != nil {
		g.gemmInputs(cols)
	}
	if g.coin(3) && p.BM*nt*p.BN*4 <= 64<<10 { // the rows held whole, as a row softmax holds them
		dt := g.storeDT(false)
		g.wide = g.add(Buf{Scope: Shared, DT: dt, Shape: []int{p.BM, nt * p.BN}, Plain: g.coin(3)})
	}
	loop := Op{Kind: OpLoop, N: nt, Loop: LoopKind(g.r.IntN(3))}
	handoff := false // the loop is the warpgroups' blocks handing a TMA-loaded tile over (handoffLoop)
	if loop.Loop == Pipelined {
		loop.Stages = 2 + g.r.IntN(2)
		if p.BM%8 == 0 || g.sw.TMASmallRows {
			x, dt := g.pickX(), g.storeDT(false)
			if xdt := p.Bufs[x].DT; (xdt == ir.F16 || xdt == ir.BF16) && g.coin(2) {
				dt = xdt // no conversion: Hopper loads it by TMA where the box allows
			}
			if x16, ok := g.input16(); ok && g.wg != nil && p.BM%8 == 0 && p.BN*2%128 == 0 && g.coin(2) {
				x, dt, handoff = x16, p.Bufs[x16].DT, true
			}
			ring := g.add(Buf{Scope: Shared, DT: dt, Shape: []int{p.BM, p.BN}, Pipeline: true})
			g.ring = append(g.ring, ring)
			loop.Body = append(loop.Body, Op{Kind: OpCopy, Src: g.tileRef(x, jv), Dst: whole(ring)})
			if g.rows.IntN(3) == 0 { // a row of per-column values beside it (TMA rows on Hopper)
				rdt := []ir.DType{ir.F32, ir.BF16, ir.F16}[g.rows.IntN(3)]
				in := g.add(Buf{Scope: In, DT: rdt, Shape: []int{cols}})
				row := g.add(Buf{Scope: Shared, DT: rdt, Shape: []int{p.BN}, Pipeline: true})
				g.ringCol = append(g.ringCol, row)
				loop.Body = append(loop.Body, Op{Kind: OpCopy, Src: g.tileRef(in, jv), Dst: whole(row)})
			}
		}
	}
	p.Body = append(append(g.inits(), g.binds()...), g.roleInits()...)
	if handoff {
		g.handoffLoop(loop)
		return
	}
	g.inRing = true
	if dst := g.pickTile2(); g.coin(2) && (loop.Loop != Pipelined || p.Bufs[dst].Scope != Shared || g.sw.PipelineLoadUsedOutside) {
		loop.Body = append(loop.Body, Op{Kind: OpCopy, Src: g.tileRef(g.pickX(), jv), Dst: whole(dst)})
	}
	if g.coin(6) { // the next column tile, past the edge in the last step (skipped)
		x := g.pickX()
		loop.Body = append(loop.Body, Op{Kind: OpPrefetch, Src: g.tileRef(x, jv)})
	}
	if g.gemm != nil {
		loop.Body = append(loop.Body, g.gemmLoop(loop.Loop == Pipelined)...)
		loop.Body = append(loop.Body, g.chainOps()...)
	}
	for range 2 + g.r.IntN(5) {
		loop.Body = append(loop.Body, g.wrapped(g.randomOp()))
	}
	loop.Body = append(loop.Body, g.roleBlocks()...)
	for range 1 + g.r.IntN(2) {
		loop.Body = append(loop.Body, g.maybeIf(g.store2D(cols)))
	}
	g.inRing = false
	p.Body = append(p.Body, loop)
	p.Body = append(p.Body, g.rowStores()...)
	if g.gemm != nil {
		p.Body = append(p.Body, g.chainStore()...)
	}
	if g.wide >= 0 {
		out := g.output([]int{RowsDim, cols}, g.storeDT(true))
		ref := g.tileRef(out, 0)
		ref.Spec[len(ref.Spec)-1].N = nt * p.BN
		p.Body = append(p.Body, Op{Kind: OpCopy, Src: whole(g.wide), Dst: ref})
	}
	walkOps(p.Body, func(o *Op) {
		if o.Kind == OpCopy && (p.Bufs[o.Src.Buf].Scope.global() || p.Bufs[o.Dst.Buf].Scope.global()) && g.coin(8) {
			o.Cache = 1 + g.r.IntN(2)
		}
		if o.Kind == OpLoop && o.Loop == Pipelined && g.coin(4) {
			p.WS = true
		}
	})
}

func (g *gen) pickX() int { return g.xs[g.r.IntN(len(g.xs))] }

// tiles2D lists the [BM,BN] float tiles usable here.
func (g *gen) tiles2D() []int {
	var out []int
	for f := range g.nfam {
		out = append(out, g.frag2[f]...)
	}
	out = append(out, g.sh2...)
	if g.inRing {
		out = append(out, g.ring...)
	}
	return out
}

func (g *gen) pickTile2() int {
	ts := g.tiles2D()
	return ts[g.r.IntN(len(ts))]
}

// inits gives every tile a value before its first read: a copy from an
// input, a fill, or (i32) index arithmetic.
func (g *gen) inits() []Op {
	p := g.p
	var out []Op
	for i, b := range p.Bufs {
		if b.Scope.global() || b.Pipeline || b.Role > 0 { // a warpgroup's fragments: initialized in its blocks
			continue
		}
		var o Op
		switch {
		case i == g.wide:
			src := g.tileRef(g.pickX(), 0)
			src.Spec[len(src.Spec)-1].N = b.Shape[1]
			o = Op{Kind: OpCopy, Src: src, Dst: whole(i)}
		case b.DT == ir.I32:
			o = Op{Kind: OpParallel, Dst: whole(i), Expr: g.intIndex(2)}
		case len(b.Shape) == 2 && b.Shape[0] == p.BM && b.Shape[1] == p.BN && g.coin(2):
			o = Op{Kind: OpCopy, Src: g.tileRef(g.pickX(), 0), Dst: whole(i)}
		case len(b.Shape) == 1 && b.Shape[0] == p.BN && b.Scope != Frag && g.coin(2):
			o = Op{Kind: OpCopy, Src: g.colRef(g.pickX()), Dst: whole(i)}
		default:
			o = Op{Kind: OpFill, Dst: whole(i), Value: g.constant()}
		}
		out = append(out, o)
	}
	return out
}

// binds relates the fragments of each family in one Parallel loop at the
// top, which gives them one layout. Without it, compiler/cudagen seeds the
// layouts of fragments that nothing relates yet apart, and refuses a later
// reduction or loop that relates them (FINDINGS.md, "layout seeding").
func (g *gen) binds() []Op {
	var out []Op
	for f := range g.nfam {
		fr := g.frag2[f]
		if len(fr) == 0 || g.sw.UnboundFamilies {
			continue
		}
		e := &Expr{Op: "load", Buf: fr[0], Map: []int{0, 1}}
		member := func(b int, m []int) {
			e = &Expr{Op: "max", Args: []*Expr{e, {Op: "load", Buf: b, Map: m}}}
		}
		for _, b := range fr[1:] {
			member(b, []int{0, 1})
		}
		for _, b := range g.rowF[f] {
			member(b, []int{0})
		}
		for _, b := range g.colF[f] {
			member(b, []int{1})
		}
		out = append(out, Op{Kind: OpParallel, Dst: whole(fr[0]), Expr: e})
	}
	return out
}

// colRef is BN columns of one row of an input (a [BN] tile).
func (g *gen) colRef(buf int) Ref {
	b := g.p.Bufs[buf]
	specs := make([]Spec, len(b.Shape))
	for i, d := range b.Shape {
		switch {
		case i == len(b.Shape)-1:
			specs[i] = Spec{N: g.p.BN}
		case d == RowsDim:
			specs[i] = Spec{Drop: true}
		default:
			specs[i] = Spec{Drop: true, Const: g.r.IntN(d)}
		}
	}
	return Ref{Buf: buf, Spec: specs}
}

// constant is a fill value: never zero (zeros hide errors), sometimes ±inf
// (a max's identity).
func (g *gen) constant() float64 {
	switch g.r.IntN(8) {
	case 0:
		return math.Inf(-1)
	case 1:
		return 0
	}
	return []float64{0.5, -1.25, 2, 0.75, -3, 1.5}[g.r.IntN(6)]
}

// wrapped puts an op under an If (uniform over the block: the condition
// reads bx or the column index) or a counted While, sometimes.
func (g *gen) wrapped(o Op) Op {
	if g.coin(10) {
		return Op{Kind: OpWhile, N: 1 + g.r.IntN(2), Body: []Op{o}}
	}
	return g.maybeIf(o)
}

func (g *gen) maybeIf(o Op) Op {
	if !g.coin(6) {
		return o
	}
	w := Op{Kind: OpIf, Var: g.r.IntN(2), Const: g.r.IntN(2), Cmp: []string{"lt", "eq", "ge"}[g.r.IntN(3)], Body: []Op{o}}
	if g.coin(2) {
		w.Else = []Op{{Kind: OpFill, Dst: whole(g.pickTile2()), Value: g.constant()}}
	}
	return w
}

// store2D writes a [BM,BN] tile (or an i32 one, or a column statistic) to
// a new output at the block's tile of column j: a region only this block
// writes, once per column tile.
func (g *gen) store2D(cols int) Op {
	p := g.p
	if len(g.i32) > 0 && g.coin(4) {
		src := g.i32[g.r.IntN(len(g.i32))]
		out := g.output([]int{RowsDim, cols}, ir.I32)
		return Op{Kind: OpCopy, Src: whole(src), Dst: g.tileRef(out, jv)}
	}
	if !p.SymRows && g.coin(5) {
		if src, ok := g.colTile(); ok {
			out := g.add(Buf{Scope: Out, DT: g.storeDT(true), Shape: []int{p.Blocks, cols}})
			return Op{Kind: OpCopy, Src: whole(src), Dst: Ref{Buf: out, Spec: []Spec{{Drop: true, Var: 1}, {Var: jv, N: p.BN}}}}
		}
	}
	src := g.pickTile2()
	out := g.output([]int{RowsDim, cols}, g.storeDT(true))
	return Op{Kind: OpCopy, Src: whole(src), Dst: g.tileRef(out, jv)}
}

// colTile picks a [BN] fragment or shared tile.
func (g *gen) colTile() (int, bool) {
	var ts []int
	for f := range g.nfam {
		ts = append(ts, g.colF[f]...)
	}
	ts = append(ts, g.shCol...)
	ts = append(ts, g.loc...) // every thread writes the block's tile, the same values
	if len(ts) == 0 {
		return 0, false
	}
	return ts[g.r.IntN(len(ts))], true
}

// rowStores write the rows' statistics after the column loop: [BM] tiles
// to a [Rows] output, [1] fragments added atomically into a scalar.
func (g *gen) rowStores() []Op {
	var out []Op
	var rows []int
	for f := range g.nfam {
		rows = append(rows, g.rowF[f]...)
		for _, one := range g.oneF[f] {
			acc := g.add(Buf{Scope: Out, DT: ir.F32, Shape: []int{1}, Accum: true})
			out = append(out, Op{Kind: OpAtomic, Src: whole(one), Dst: Ref{Buf: acc, Spec: []Spec{{N: 1}}}})
			if g.sw.SingleElemCopy && !g.p.SymRows { // one element a block
				y := g.add(Buf{Scope: Out, DT: g.storeDT(true), Shape: []int{g.p.Blocks, 1}})
				out = append(out, Op{Kind: OpCopy, Src: whole(one), Dst: Ref{Buf: y, Spec: []Spec{{Drop: true, Var: 1}, {N: 1}}}})
			}
		}
	}
	rows = append(rows, g.shRow...)
	for _, r := range rows {
		if g.coin(3) {
			continue
		}
		o := g.add(Buf{Scope: Out, DT: g.storeDT(true), Shape: []int{RowsDim}})
		out = append(out, Op{Kind: OpCopy, Src: whole(r), Dst: g.rowRef(o)})
	}
	return out
}
