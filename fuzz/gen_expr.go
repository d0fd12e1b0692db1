package fuzz

import "github.com/tilego/tilego/ir"

// parallel2D is dst[i, j] = expr over a [BM,BN] loop. The loop touches at
// most one fragment family (its fragments share a layout, so every thread
// reads only its own registers); a fragment is read at the loop's own
// indices, shared tiles and locals anywhere (shifted, mod their size), and
// dst only at [i, j] (another element would race with its writer).
func (g *gen) parallel2D() (Op, bool) {
	dst := g.pickTile2()
	fam := g.famOf(dst)
	if fam < 0 && g.coin(2) {
		fam = g.floatFam()
	}
	leaf := func() *Expr {
		var cands []*Expr
		if fam >= 0 {
			for _, b := range g.frag2[fam] {
				if g.p.Bufs[b].DT.IsFloat() {
					cands = append(cands, &Expr{Op: "load", Buf: b, Map: []int{0, 1}})
				}
			}
			for _, b := range g.rowF[fam] {
				cands = append(cands, &Expr{Op: "load", Buf: b, Map: []int{0}})
			}
			for _, b := range g.colF[fam] {
				cands = append(cands, &Expr{Op: "load", Buf: b, Map: []int{1}})
			}
		}
		sh := g.sh2
		if g.inRing {
			sh = append(append([]int(nil), sh...), g.ring...)
		}
		for _, b := range sh {
			cands = append(cands, g.sharedLoad(b, []int{0, 1}, b != dst))
		}
		for _, b := range g.shRow {
			cands = append(cands, g.sharedLoad(b, []int{0}, true))
		}
		for _, b := range append(append([]int(nil), g.shCol...), g.loc...) {
			cands = append(cands, g.sharedLoad(b, []int{1}, true))
		}
		if g.inRing {
			for _, b := range g.ringCol {
				cands = append(cands, &Expr{Op: "load", Buf: b, Map: []int{1}})
			}
		}
		if len(g.inCol) > 0 && g.extra.IntN(4) == 0 { // drawn apart: the other leaves' draws stay
			return g.sharedLoad(g.inCol[g.extra.IntN(len(g.inCol))], []int{1}, false)
		}
		if g.scalar >= 0 {
			cands = append(cands, &Expr{Op: "load", Buf: g.scalar, Map: []int{}})
		}
		cands = append(cands, &Expr{Op: "const", Val: g.finite()}, g.indexExpr(2))
		return cands[g.r.IntN(len(cands))]
	}
	e := g.expr(3, leaf)
	var ext []int
	if g.sw.ParallelPastFrag && g.famOf(dst) >= 0 && g.coin(4) {
		ext = []int{g.p.BM, 2 * g.p.BN}
	}
	if fam >= 0 && g.famOf(dst) != fam { // a loop over a family's elements is driven by its [BM,BN] fragment
		e = &Expr{Op: "max", Args: []*Expr{e, {Op: "load", Buf: g.frag2[fam][0], Map: []int{0, 1}}}}
	}
	return Op{Kind: OpParallel, Dst: whole(dst), Expr: e, Ext: ext}, true
}

// parallelRow is dst[i] = expr over the rows: a family's row statistics
// and shared row tiles.
func (g *gen) parallelRow() (Op, bool) {
	fam := g.floatFam()
	dsts := append(append([]int(nil), g.rowF[fam]...), g.shRow...)
	if len(dsts) == 0 {
		return Op{}, false
	}
	dst := dsts[g.r.IntN(len(dsts))]
	if g.famOf(dst) < 0 && g.coin(2) {
		fam = -1
	}
	leaf := func() *Expr {
		var cands []*Expr
		if fam >= 0 {
			for _, b := range g.rowF[fam] {
				cands = append(cands, &Expr{Op: "load", Buf: b, Map: []int{0}})
			}
		}
		for _, b := range g.shRow {
			cands = append(cands, g.sharedLoad(b, []int{0}, b != dst))
		}
		cands = append(cands, &Expr{Op: "const", Val: g.finite()}, g.indexExpr(1))
		return cands[g.r.IntN(len(cands))]
	}
	return Op{Kind: OpParallel, Dst: whole(dst), Expr: g.expr(2, leaf)}, true
}

// sharedLoad reads a shared tile or local, shifted when shift allows.
func (g *gen) sharedLoad(b int, m []int, shift bool) *Expr {
	e := &Expr{Op: "load", Buf: b, Map: m}
	if shift && g.coin(2) {
		e.Off = make([]int, len(m))
		for i := range e.Off {
			e.Off[i] = g.r.IntN(3)
		}
	}
	return e
}

// indexExpr is index arithmetic: (bx + i·a + j·b) mod m, as f32 or (dt
// set by the caller) i32.
func (g *gen) indexExpr(rank int) *Expr {
	e := &Expr{Op: "index", Mod: g.pick(3, 7, 16, 64)}
	e.Mul[0] = g.r.IntN(4)
	if rank > 1 {
		e.Mul[1] = g.r.IntN(4)
	}
	return e
}

// expr draws an arithmetic tree of depth at most d over leaf. Values stay
// small (exp2 of at most 4, products by constants), so no storage type
// overflows.
func (g *gen) expr(d int, leaf func() *Expr) *Expr {
	if d == 0 || g.coin(3) {
		return leaf()
	}
	sub := func() *Expr { return g.expr(d-1, leaf) }
	switch g.r.IntN(11) {
	case 0, 1:
		return &Expr{Op: "add", Args: []*Expr{sub(), sub()}}
	case 2:
		return &Expr{Op: "sub", Args: []*Expr{sub(), sub()}}
	case 3:
		return &Expr{Op: "mul", Args: []*Expr{sub(), {Op: "const", Val: []float64{0.5, -1.5, 1.25, 2}[g.r.IntN(4)]}}}
	case 4:
		return &Expr{Op: "max", Args: []*Expr{sub(), sub()}}
	case 5:
		return &Expr{Op: "min", Args: []*Expr{sub(), sub()}}
	case 6:
		return &Expr{Op: []string{"neg", "abs"}[g.r.IntN(2)], Args: []*Expr{sub()}}
	case 7: // exp2 half the time, else another math function
		return &Expr{Op: []string{"exp2", "exp2", "exp2", "exp2", "tanh", "erf", "sigmoid", "log1p", "expm1", "sin", "cos", "pow"}[g.r.IntN(12)], Args: []*Expr{sub()}}
	case 8:
		return &Expr{Op: "cast", DT: g.pick16(), Args: []*Expr{sub()}}
	default: // compares leaves only: a computed value may round differently on each backend and flip the choice
		return &Expr{Op: "select", Args: []*Expr{leaf(), leaf(), sub(), sub()}}
	}
}

// floatFam picks a family with a float [BM,BN] fragment.
func (g *gen) floatFam() int {
	var fs []int
	for f := range g.nfam {
		if len(g.frag2[f]) > 0 {
			fs = append(fs, f)
		}
	}
	return fs[g.r.IntN(len(fs))]
}

// finite is a constant operand: never zero or infinite.
func (g *gen) finite() float64 { return []float64{0.5, -1.25, 2, 0.75, -3, 1.5}[g.r.IntN(6)] }

// intIndex is indexExpr computed in i32.
func (g *gen) intIndex(rank int) *Expr {
	e := g.indexExpr(rank)
	e.DT = ir.I32
	if g.sw.IntOverflow && g.coin(3) { // (bx + i·2^29 + j·2^30) mod m wraps in i32
		e.Mul = [2]int{1 << 29, 1 << 30}
		e.Mod = 1000003
	}
	return e
}
