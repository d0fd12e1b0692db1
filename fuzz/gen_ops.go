package fuzz

import "github.com/tilego/tilego/ir"

// randomOp draws one op of the column loop's body over the tiles in scope.
func (g *gen) randomOp() Op {
	for {
		var o Op
		var ok bool
		switch g.r.IntN(9) {
		case 0, 1:
			o, ok = g.copy2D()
		case 2, 3:
			o, ok = g.parallel2D()
			g.mask(&o)
		case 4:
			o, ok = g.parallelRow()
			g.mask(&o)
		case 5:
			o, ok = g.reduce()
		case 6:
			o, ok = g.copy1D()
		case 7:
			if g.coin(2) {
				o, ok = g.atomic()
			} else {
				o, ok = g.wideCopy()
			}
		default:
			o, ok = g.intOp()
		}
		if ok {
			return o
		}
	}
}

// mask puts a Parallel loop's store under a mask, sometimes: the other
// elements keep their values.
func (g *gen) mask(o *Op) {
	if o.Kind == OpParallel && g.coin(4) {
		o.Mask, o.Off = []string{"le", "gt"}[g.r.IntN(2)], g.r.IntN(5)-2
	}
}

// famOf is a fragment's family, or -1 for another scope.
func (g *gen) famOf(b int) int {
	if d := g.p.Bufs[b]; d.Scope == Frag {
		return d.Family
	}
	return -1
}

// copy2D copies between [BM,BN] tiles of any scopes (a fragment to a
// fragment only within a family: the same layout), converting types.
func (g *gen) copy2D() (Op, bool) {
	src, dst := g.pickTile2(), g.pickTile2()
	if src == dst {
		return Op{}, false
	}
	if fs, fd := g.famOf(src), g.famOf(dst); fs >= 0 && fd >= 0 && fs != fd {
		return Op{}, false
	}
	return Op{Kind: OpCopy, Src: whole(src), Dst: whole(dst)}, true
}

// wideCopy copies column tile j of the wide shared tile to or from a
// [BM,BN] tile.
func (g *gen) wideCopy() (Op, bool) {
	if g.wide < 0 {
		return Op{}, false
	}
	r := Ref{Buf: g.wide, Spec: []Spec{{N: g.p.BM}, {Var: jv, N: g.p.BN}}}
	t := g.pickTile2()
	if g.coin(2) {
		return Op{Kind: OpCopy, Src: r, Dst: whole(t)}, true
	}
	return Op{Kind: OpCopy, Src: whole(t), Dst: r}, true
}

// copy1D copies row statistics within a family or through shared memory,
// and columns between shared tiles and locals.
func (g *gen) copy1D() (Op, bool) {
	type pair struct{ a, b []int }
	var pairs []pair
	for f := range g.nfam {
		pairs = append(pairs, pair{g.rowF[f], g.rowF[f]}, pair{g.rowF[f], g.shRow}, pair{g.shRow, g.rowF[f]},
			pair{g.colF[f], g.shCol}, pair{g.shCol, g.colF[f]})
		if g.sw.FragLocalCopy {
			pairs = append(pairs, pair{g.colF[f], g.loc}, pair{g.loc, g.colF[f]})
		}
	}
	pairs = append(pairs, pair{g.loc, g.shCol}, pair{g.shCol, g.loc}, pair{g.shCol, g.shCol}, pair{g.shRow, g.shRow})
	pr := pairs[g.r.IntN(len(pairs))]
	if len(pr.a) == 0 || len(pr.b) == 0 {
		return Op{}, false
	}
	src, dst := pr.a[g.r.IntN(len(pr.a))], pr.b[g.r.IntN(len(pr.b))]
	if src == dst {
		return Op{}, false
	}
	return Op{Kind: OpCopy, Src: whole(src), Dst: whole(dst)}, true
}

// reduce folds a family's [BM,BN] fragment into a row or column
// projection, or a row projection into a scalar.
func (g *gen) reduce() (Op, bool) {
	f := g.floatFam()
	o := Op{Kind: OpReduce, Reduce: ir.ReduceKind(g.r.IntN(4)), Accum: g.coin(2)}
	var srcs []int
	for _, b := range g.frag2[f] {
		if g.p.Bufs[b].DT.IsFloat() {
			srcs = append(srcs, b)
		}
	}
	switch g.r.IntN(4) {
	case 0:
		if len(g.oneF[f]) == 0 {
			return o, false
		}
		srcs, o.Dst, o.Dim = g.rowF[f], whole(g.oneF[f][0]), 0
	case 1:
		if len(g.colF[f]) == 0 {
			return o, false
		}
		o.Dst, o.Dim = whole(g.colF[f][g.r.IntN(len(g.colF[f]))]), 0
	default:
		if len(g.rowF[f]) == 0 {
			return o, false
		}
		o.Dst, o.Dim = whole(g.rowF[f][g.r.IntN(len(g.rowF[f]))]), 1
	}
	if len(srcs) == 0 {
		return o, false
	}
	o.Src = whole(srcs[g.r.IntN(len(srcs))])
	if g.sw.ReduceShared && g.coin(2) { // a shared tile into a shared row or column
		dsts := map[int][]int{1: g.shRow, 0: g.shCol}[o.Dim]
		if len(dsts) > 0 && len(g.sh2) > 0 && o.Dst.Buf != g.oneOf(f) {
			o.Src, o.Dst = whole(g.sh2[g.r.IntN(len(g.sh2))]), whole(dsts[g.r.IntN(len(dsts))])
		}
	}
	return o, true
}

// oneOf is the family's scalar fragment, or -1.
func (g *gen) oneOf(f int) int {
	if len(g.oneF[f]) == 0 {
		return -1
	}
	return g.oneF[f][0]
}

// atomic adds an f32 [BM,BN] tile into a new accumulating output.
func (g *gen) atomic() (Op, bool) {
	src := g.pickTile2()
	b := g.p.Bufs[src]
	if b.DT != ir.F32 && !(b.DT == ir.F16 && g.sw.AtomicF16) {
		return Op{}, false
	}
	cols := g.colsOf()
	dt := ir.F32
	if g.sw.AtomicF16 && g.coin(4) {
		dt = ir.F16
	}
	out := g.add(Buf{Scope: Out, DT: dt, Shape: []int{RowsDim, cols}, Accum: true})
	return Op{Kind: OpAtomic, Src: whole(src), Dst: g.tileRef(out, jv)}, true
}

// colsOf is the column count of the inputs.
func (g *gen) colsOf() int {
	s := g.p.Bufs[g.xs[0]].Shape
	return s[len(s)-1]
}

// intOp updates an i32 tile with index arithmetic (exact on every
// backend).
func (g *gen) intOp() (Op, bool) {
	if len(g.i32) == 0 {
		return Op{}, false
	}
	dst := g.i32[g.r.IntN(len(g.i32))]
	self := &Expr{Op: "load", Buf: dst, Map: []int{0, 1}}
	e := &Expr{Op: []string{"add", "max", "min", "sub"}[g.r.IntN(4)], Args: []*Expr{self, g.intIndex(2)}}
	return Op{Kind: OpParallel, Dst: whole(dst), Expr: e}, true
}
