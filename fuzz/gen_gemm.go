package fuzz

import "github.com/tilego/tilego/ir"

// gemmParts are the tiles of one Gemm over a K loop: C [BM,BN] += A·B,
// A from shared (or a fragment loaded from it), B from shared.
type gemmParts struct {
	fam            int
	c, as, bs, af  int // af: -1 without an A fragment
	a, b           int // the global operands
	bk, nk, kt     int
	transA, transB bool
	policy         ir.Policy
	// aOff, bOff >= 0: the operand is the K slice [off, off+bk) of a shared
	// tile twice as deep (a region operand), else the whole tile.
	aOff, bOff int
	// c2 >= 0: a second accumulator of C's family that the K loop's
	// iterations also multiply into, cleared each time: two independent
	// Gemms a step, which wgmma keeps in flight together (lazy waits).
	c2 int
	// An attention-like second Gemm, or nil: O [BM,n2] += P·V(j), where P
	// is C converted to 16 bits in registers (its layout the accumulator's,
	// as the A operand wants where warps split rows only: FullRow).
	chain *gemmChain
}

type gemmChain struct {
	p, vs, o, v, n2 int
}

// gemmWarpsFit mirrors compiler/cudagen's chooseWarps: the mma.sync path's warps
// must tile the m×n output in 16×8 pieces by the policy.
func gemmWarpsFit(p ir.Policy, m, n, warps int) bool {
	fits := func(wm, wn int) bool { return m%(16*wm) == 0 && n%(8*wn) == 0 }
	switch p {
	case ir.FullRow:
		return fits(warps, 1)
	case ir.FullCol:
		return fits(1, warps)
	}
	for wm := 1; wm <= warps; wm++ {
		if warps%wm == 0 && fits(wm, warps/wm) {
			return true
		}
	}
	return false
}

// gemmTiles allocates C's family and the operand tiles; the globals are
// added by gemmInputs once the column count is known.
func (g *gen) gemmTiles() *gemmParts {
	p := g.p
	gp := &gemmParts{af: -1, c2: -1, transA: g.coin(2), transB: g.coin(2)}
	gp.fam = g.family(ir.F32)
	gp.c = g.frag2[gp.fam][0]
	if g.extra.IntN(3) == 0 {
		gp.c2 = g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BM, p.BN}, Family: gp.fam})
		g.frag2[gp.fam] = append(g.frag2[gp.fam], gp.c2)
	}
	if g.coin(3) { // P: C converted to 16 bits, as attention's probabilities
		g.frag2[gp.fam] = append(g.frag2[gp.fam], g.add(Buf{Scope: Frag, DT: g.pick16(), Shape: []int{p.BM, p.BN}, Family: gp.fam}))
	}
	warps := p.Threads / 32
	for _, pol := range []ir.Policy{ir.Policy(g.r.IntN(3)), ir.Square} {
		if gemmWarpsFit(pol, p.BM, p.BN, warps) {
			gp.policy = pol
			break
		}
	}
	gp.bk = g.pick(16, 32, 64)
	if g.sw.GemmK8 && g.coin(4) {
		gp.bk = 8
	}
	gp.nk = 1 + g.r.IntN(3)
	gp.kt = gp.nk * gp.bk
	if g.coin(3) {
		gp.kt -= g.r.IntN(gp.bk) // a partial last K tile: zeros past the edge
	}
	dt := g.pick16()
	gp.aOff, gp.bOff = -1, -1
	ka, kb := gp.bk, gp.bk
	if g.coin(4) {
		gp.aOff, ka = g.pick(0, gp.bk), 2*gp.bk
	}
	if g.coin(4) {
		gp.bOff, kb = g.pick(0, gp.bk), 2*gp.bk
	}
	aShape, bShape := []int{p.BM, ka}, []int{kb, p.BN}
	if gp.transA {
		aShape = []int{ka, p.BM}
	}
	if gp.transB {
		bShape = []int{p.BN, kb}
	}
	gp.as = g.add(Buf{Scope: Shared, DT: dt, Shape: aShape, Plain: g.coin(5), Pipeline: true})
	gp.bs = g.add(Buf{Scope: Shared, DT: dt, Shape: bShape, Plain: g.coin(5), Pipeline: true})
	// A in registers: FullRow warps (compiler/cudagen forces it), not transposed.
	if !gp.transA && g.coin(3) && gemmWarpsFit(ir.FullRow, p.BM, p.BN, warps) {
		gp.af = g.add(Buf{Scope: Frag, DT: dt, Shape: []int{p.BM, gp.bk}, Family: g.nfam, Operand: true, Pipeline: true})
		g.nfam++
	}
	// Both Gemms on one path unless Switches.ChainMixedPaths: swizzled
	// whole-tile operands (a region, an unswizzled tile or one of 16-byte
	// rows takes mma.sync on sm_90a).
	onePath := gp.aOff < 0 && gp.bOff < 0 || g.sw.ChainMixedPaths
	if g.coin(3) && onePath && p.BN%16 == 0 && gemmWarpsFit(ir.FullRow, p.BM, p.BN, warps) {
		n2 := g.pick(16, 32, 64) // V's rows of 8 (16 bytes) have no swizzle: mma.sync (Switches.ChainMixedPaths)
		if g.sw.ChainMixedPaths && g.coin(4) {
			n2 = 8
		}
		if gemmWarpsFit(ir.FullRow, p.BM, n2, warps) {
			gp.policy = ir.FullRow
			c := &gemmChain{n2: n2}
			c.p = g.add(Buf{Scope: Frag, DT: dt, Shape: []int{p.BM, p.BN}, Family: gp.fam})
			g.frag2[gp.fam] = append(g.frag2[gp.fam], c.p)
			c.vs = g.add(Buf{Scope: Shared, DT: dt, Shape: []int{p.BN, n2}, Plain: g.coin(5), Pipeline: true})
			c.o = g.add(Buf{Scope: Frag, DT: ir.F32, Shape: []int{p.BM, n2}, Family: g.nfam}) // its own family, used only here
			g.nfam++
			gp.chain = c
			if !g.sw.ChainMixedPaths {
				for _, b := range []int{gp.as, gp.bs, c.vs} {
					g.p.Bufs[b].Plain = false
				}
			}
		}
	}
	return gp
}

// chainOps are the second Gemm's ops in the column loop.
func (g *gen) chainOps() []Op {
	c := g.gemm.chain
	if c == nil {
		return nil
	}
	vRef := Ref{Buf: c.v, Spec: []Spec{{Var: jv, N: g.p.BN}, {N: c.n2}}}
	return []Op{
		{Kind: OpCopy, Src: whole(g.gemm.c), Dst: whole(c.p)},
		{Kind: OpCopy, Src: vRef, Dst: whole(c.vs)},
		{Kind: OpGemm, Src: whole(c.p), Dst: whole(c.vs), C: whole(c.o), Policy: ir.FullRow},
	}
}

// chainStore writes O after the column loop.
func (g *gen) chainStore() []Op {
	c := g.gemm.chain
	if c == nil {
		return nil
	}
	out := g.output([]int{RowsDim, c.n2}, g.storeDT(false))
	ref := g.tileRef(out, 0)
	ref.Spec[len(ref.Spec)-1].N = c.n2
	return []Op{{Kind: OpCopy, Src: whole(c.o), Dst: ref}}
}

func (g *gen) pick16() ir.DType {
	if g.coin(2) {
		return ir.F16
	}
	return ir.BF16
}

// gemmInputs adds A [Rows, KT] (or [KT, Rows]) and B [KT, cols] (or
// [cols, KT]).
func (g *gen) gemmInputs(cols int) {
	gp, dt := g.gemm, g.p.Bufs[g.gemm.as].DT
	a, b := []int{RowsDim, gp.kt}, []int{gp.kt, cols}
	if gp.transA {
		a = []int{gp.kt, RowsDim}
	}
	if gp.transB {
		b = []int{cols, gp.kt}
	}
	gp.a = g.add(Buf{Name: "A", Scope: In, DT: dt, Shape: a})
	gp.b = g.add(Buf{Name: "B", Scope: In, DT: dt, Shape: b})
	if c := gp.chain; c != nil {
		c.v = g.add(Buf{Name: "V", Scope: In, DT: dt, Shape: []int{cols, c.n2}})
	}
}

// gemmLoop is the K loop at depth 2 (inside the column loop), its kind
// and whether the Gemm is deferred a step (only in a Pipelined loop, with
// the copies after the Defer so that it reads the previous step's tiles).
func (g *gen) gemmLoop(outerPipelined bool) []Op {
	gp, p := g.gemm, g.p
	const kv, jv = 3, 2 // Spec.Var of the K loop (depth 2) and the column loop (depth 1)
	aRef := Ref{Buf: gp.a, Spec: []Spec{{Var: 1, N: p.BM}, {Var: kv, N: gp.bk}}}
	if gp.transA {
		aRef.Spec = []Spec{{Var: kv, N: gp.bk}, {Var: 1, N: p.BM}}
	}
	bRef := Ref{Buf: gp.b, Spec: []Spec{{Var: kv, N: gp.bk}, {Var: jv, N: p.BN}}}
	if gp.transB {
		bRef.Spec = []Spec{{Var: jv, N: p.BN}, {Var: kv, N: gp.bk}}
	}
	aTile, bTile := kSlice(gp.as, gp.aOff, gp.bk, p.BM, gp.transA), kSlice(gp.bs, gp.bOff, gp.bk, p.BN, !gp.transB)
	copies := []Op{{Kind: OpCopy, Src: aRef, Dst: aTile}, {Kind: OpCopy, Src: bRef, Dst: bTile}}
	aOp := aTile
	if gp.af >= 0 {
		src := aTile
		if g.coin(3) {
			src = aRef
		}
		copies = append(copies, Op{Kind: OpCopy, Src: src, Dst: whole(gp.af)})
		aOp = whole(gp.af)
	}
	mm := Op{Kind: OpGemm, Src: aOp, Dst: bTile, C: whole(gp.c), TransA: gp.transA, TransB: gp.transB, Policy: gp.policy, Clear: gp.nk == 1 && g.coin(2)}
	loop := Op{Kind: OpLoop, N: gp.nk, Loop: LoopKind(g.r.IntN(3))}
	if gp.c2 >= 0 && g.extra.IntN(2) == 0 { // two Gemms a step: in a Pipelined loop their waits are lazy
		loop.Loop = Pipelined
	}
	if loop.Loop == Pipelined && outerPipelined && !g.sw.NestedPipelined {
		loop.Loop = Serial
	}
	if loop.Loop == Pipelined {
		loop.Stages = 2 + g.r.IntN(2)
	}
	if loop.Loop == Pipelined && g.coin(2) {
		loop.Body = append([]Op{{Kind: OpDefer, Body: []Op{mm}}}, copies...)
	} else {
		loop.Body = append(copies, mm)
		if gp.c2 >= 0 {
			mm2 := mm
			mm2.C, mm2.Clear = whole(gp.c2), true
			loop.Body = append(loop.Body, mm2)
		}
	}
	var out []Op
	if !mm.Clear {
		out = append(out, Op{Kind: OpFill, Dst: whole(gp.c)})
	}
	return append(out, loop)
}

// kSlice is the operand region of a shared tile: whole when off < 0, else
// K elements [off, off+bk) along its K dim (the first when kFirst) and all
// of its other dim (n).
func kSlice(buf, off, bk, n int, kFirst bool) Ref {
	if off < 0 {
		return whole(buf)
	}
	k, other := Spec{Const: off, N: bk}, Spec{N: n}
	if kFirst {
		return Ref{Buf: buf, Spec: []Spec{k, other}}
	}
	return Ref{Buf: buf, Spec: []Spec{other, k}}
}
