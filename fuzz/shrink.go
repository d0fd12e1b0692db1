package fuzz

import (
	"bytes"
	"encoding/gob"
	"slices"
)

// Shrink reduces p while check(candidate) still fails the way want does:
// it drops ops (anywhere in the tree), unwraps If and While, cuts loops to
// one trip, simplifies expressions, drops blocks, rows and threads, and
// finally the buffers nothing uses. Candidates that read a tile nothing
// initializes are skipped (their garbage would fail for another reason).
// It returns the smallest program found and how many candidates it tried.
func Shrink(p *Prog, want Outcome, check func(*Prog) Outcome, budget int) (*Prog, int) {
	best, tries := p.clone(), 0
	try := func(c *Prog) bool {
		if tries >= budget || !c.defined() {
			return false
		}
		tries++
		if o := check(c); o.Failed() && o.same(want) {
			best = c
			return true
		}
		return false
	}
	for progress := true; progress && tries < budget; {
		progress = false
		for _, edit := range []func(*Prog) []*Prog{dropOps, unwrapOps, oneTrip, unwrapLoops, simplerExprs, smallerGrid, dropBufs} {
			for _, c := range edit(best) {
				if try(c) {
					progress = true
					break // edits are relative to best: draw them again
				}
			}
		}
	}
	if c := best.pruneBufs(); c != best && try(c) {
		best = c
	}
	return best, tries
}

// clone is a deep copy (through gob: the description is plain data, and
// gob keeps infinities, which JSON refuses).
func (p *Prog) clone() *Prog {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		panic(err)
	}
	var c Prog
	if err := gob.NewDecoder(&buf).Decode(&c); err != nil {
		panic(err)
	}
	return &c
}

// step is one level of a path to an op: its index in the parent's Body,
// or (Else) in the parent If's Else.
type step struct {
	Else bool
	I    int
}

// opPaths lists the path to every op of the tree, outermost first.
func opPaths(ops []Op, prefix []step, inElse bool) [][]step {
	var out [][]step
	for i := range ops {
		path := append(slices.Clone(prefix), step{inElse, i})
		out = append(out, path)
		out = append(out, opPaths(ops[i].Body, path, false)...)
		out = append(out, opPaths(ops[i].Else, path, true)...)
	}
	return out
}

// at returns the list holding the op at path and its index there.
func at(p *Prog, path []step) (*[]Op, int) {
	list := &p.Body
	for d := 0; d < len(path)-1; d++ {
		parent := &(*list)[path[d].I]
		if path[d+1].Else {
			list = &parent.Else
		} else {
			list = &parent.Body
		}
	}
	return list, path[len(path)-1].I
}

// eachOp returns, for each op of p (innermost last), a copy of p that
// edit changed at that op, where it did (it reports whether).
func eachOp(p *Prog, edit func(c *Prog, path []step, list *[]Op, i int) bool) []*Prog {
	var out []*Prog
	for _, path := range opPaths(p.Body, nil, false) {
		c := p.clone()
		list, i := at(c, path)
		if i >= 0 && i < len(*list) && edit(c, path, list, i) {
			out = append(out, c)
		}
	}
	return out
}

// dropOps: p without one op, innermost last (big cuts first).
func dropOps(p *Prog) []*Prog {
	return eachOp(p, func(_ *Prog, _ []step, list *[]Op, i int) bool {
		*list = slices.Delete(*list, i, i+1)
		return true
	})
}

// unwrapOps: an If or While replaced by its body.
func unwrapOps(p *Prog) []*Prog {
	return eachOp(p, func(_ *Prog, _ []step, list *[]Op, i int) bool {
		o := (*list)[i]
		if o.Kind != OpIf && o.Kind != OpWhile {
			return false
		}
		*list = slices.Replace(*list, i, i+1, o.Body...)
		return true
	})
}

// unwrapLoops: a one-trip loop whose index nothing reads replaced by its
// body (the deeper loops' indices renumbered).
func unwrapLoops(p *Prog) []*Prog {
	return eachOp(p, func(c *Prog, path []step, list *[]Op, i int) bool {
		o := (*list)[i]
		if o.Kind != OpLoop || o.N != 1 || hasDefer(o.Body) {
			return false
		}
		depth := loopDepth(c, path) // the loop's index is vars[depth]
		if usesVar(o.Body, depth) {
			return false
		}
		shiftVars(o.Body, depth)
		*list = slices.Replace(*list, i, i+1, o.Body...)
		return true
	})
}

// loopDepth is the depth of the loop at path: 1 + the loops around it.
func loopDepth(p *Prog, path []step) int {
	d := 1
	for k := 1; k < len(path); k++ {
		list, i := at(p, path[:k])
		if (*list)[i].Kind == OpLoop {
			d++
		}
	}
	return d
}

// usesVar: an op of ops reads the index vars[v].
func usesVar(ops []Op, v int) bool {
	used := false
	walkOps(ops, func(o *Op) {
		for _, r := range []Ref{o.Src, o.Dst, o.C} {
			for _, s := range r.Spec {
				used = used || s.Var == v+1
			}
		}
		used = used || o.Kind == OpIf && o.Var == v
	})
	return used
}

// shiftVars renumbers the indices deeper than v after v's loop is gone.
func shiftVars(ops []Op, v int) {
	walkOps(ops, func(o *Op) {
		for _, r := range []*Ref{&o.Src, &o.Dst, &o.C} {
			for k := range r.Spec {
				if r.Spec[k].Var > v+1 {
					r.Spec[k].Var--
				}
			}
		}
		if o.Kind == OpIf && o.Var > v {
			o.Var--
		}
	})
}

// oneTrip: a loop cut to one iteration, a pipeline to fewer stages.
func oneTrip(p *Prog) []*Prog {
	var out []*Prog
	for _, path := range opPaths(p.Body, nil, false) {
		c := p.clone()
		list, i := at(c, path)
		if i < 0 || i >= len(*list) {
			continue
		}
		o := &(*list)[i]
		switch {
		case o.Kind == OpLoop && o.N > 1:
			o.N = 1
		case o.Kind == OpLoop && o.Stages > 2:
			o.Stages = 2
		case o.Kind == OpLoop && o.Loop != Serial:
			o.Loop, o.Stages = Serial, 0
			if hasDefer(o.Body) {
				continue
			}
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

func hasDefer(ops []Op) bool {
	for _, o := range ops {
		if o.Kind == OpDefer {
			return true
		}
	}
	return false
}

// simplerExprs: one expression node replaced by one of its operands.
func simplerExprs(p *Prog) []*Prog {
	var out []*Prog
	for _, path := range opPaths(p.Body, nil, false) {
		list, i := at(p, path)
		if i < 0 || i >= len(*list) || (*list)[i].Kind != OpParallel {
			continue
		}
		n := countNodes((*list)[i].Expr)
		for node := range n {
			for arg := range 4 {
				c := p.clone()
				cl, ci := at(c, path)
				if e, ok := replaceNode((*cl)[ci].Expr, node, arg); ok {
					(*cl)[ci].Expr = e
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func countNodes(e *Expr) int {
	n := 0
	walkExpr(e, func(*Expr) { n++ })
	return n
}

// replaceNode replaces the node-th node (preorder) of e by its arg-th
// operand.
func replaceNode(e *Expr, node, arg int) (*Expr, bool) {
	k := 0
	var rec func(x *Expr) (*Expr, bool)
	rec = func(x *Expr) (*Expr, bool) {
		if k == node {
			k++
			if arg < len(x.Args) {
				return x.Args[arg], true
			}
			return x, false
		}
		k++
		for i, a := range x.Args {
			if r, ok := rec(a); ok || r != a {
				x.Args[i] = r
				return x, ok
			}
		}
		return x, false
	}
	return rec(e)
}

// smallerGrid: one block, whole row tiles, constant rows, fewer threads,
// no hints.
func smallerGrid(p *Prog) []*Prog {
	var out []*Prog
	edit := func(f func(c *Prog) bool) {
		c := p.clone()
		if f(c) {
			out = append(out, c)
		}
	}
	edit(func(c *Prog) bool {
		if c.Blocks == 1 {
			return false
		}
		c.Blocks, c.Rows = 1, min(c.Rows, c.BM)
		return true
	})
	edit(func(c *Prog) bool {
		ok := c.Rows != c.Blocks*c.BM
		c.Rows = c.Blocks * c.BM
		return ok
	})
	edit(func(c *Prog) bool { ok := c.SymRows; c.SymRows = false; return ok })
	edit(func(c *Prog) bool { ok := c.SplitN; c.SplitN = false; return ok })
	edit(func(c *Prog) bool { ok := c.WS; c.WS = false; return ok })
	edit(func(c *Prog) bool { ok := c.Spread > 0; c.Spread = 0; return ok })
	edit(func(c *Prog) bool { ok := c.RowVar; c.RowVar = false; return ok })
	edit(func(c *Prog) bool { ok := c.Repeat > 0; c.Repeat = 0; return ok })
	edit(func(c *Prog) bool {
		ok := false
		walkOps(c.Body, func(o *Op) { ok, o.Mask = ok || o.Mask != "", "" })
		return ok
	})
	edit(func(c *Prog) bool {
		ok := false
		walkOps(c.Body, func(o *Op) { ok, o.Cache = ok || o.Cache != 0, 0 })
		return ok
	})
	edit(func(c *Prog) bool {
		if c.Threads <= 32 {
			return false
		}
		c.Threads /= 2
		return true
	})
	return out
}

// defined: every on-chip tile read is written first: by an op at the top
// of the kernel before the first top-level op that reads it, or, for a
// pipelined loop's tiles, by a copy somewhere.
func (p *Prog) defined() bool {
	written := map[int]bool{}
	copied := map[int]bool{}
	walkOps(p.Body, func(o *Op) {
		if o.Kind == OpCopy {
			copied[o.Dst.Buf] = true
		}
	})
	for i := range p.Body {
		o := &p.Body[i]
		for b := range reads(o) {
			d := p.Bufs[b]
			switch {
			case d.Scope.global():
			case d.Pipeline:
				if !copied[b] {
					return false
				}
			case !written[b]:
				return false
			}
		}
		for _, w := range append([]Op{*o}, warpgroupBody(o)...) {
			switch w.Kind {
			case OpCopy, OpFill, OpParallel:
				written[w.Dst.Buf] = true
			}
		}
	}
	return true
}

// warpgroupBody is the body of a Warpgroup block (whose fills initialize
// its fragments), else nothing.
func warpgroupBody(o *Op) []Op {
	if o.Kind == OpWarpgroup {
		return o.Body
	}
	return nil
}

// reads lists the buffers an op (and the ops inside it) reads.
func reads(o *Op) map[int]bool {
	out := map[int]bool{}
	walkOps([]Op{*o}, func(x *Op) {
		switch x.Kind {
		case OpCopy, OpAtomic:
			out[x.Src.Buf] = true
		case OpReduce:
			out[x.Src.Buf] = true
			if x.Accum {
				out[x.Dst.Buf] = true
			}
		case OpGemm:
			out[x.Src.Buf], out[x.Dst.Buf] = true, true
			if !x.Clear {
				out[x.C.Buf] = true
			}
		case OpParallel:
			walkExpr(x.Expr, func(e *Expr) {
				if e.Op == "load" {
					out[e.Buf] = true
				}
			})
		}
	})
	return out
}

// dropBufs: p without one buffer no op uses (the unused ones go one by
// one, since some are needed: an allocation that alone fails).
func dropBufs(p *Prog) []*Prog {
	var out []*Prog
	used := p.usedBufs()
	for i := range p.Bufs {
		if !used[i] {
			out = append(out, p.keepBufs(func(b int) bool { return b != i }))
		}
	}
	return out
}

// pruneBufs drops every buffer no op uses.
func (p *Prog) pruneBufs() *Prog {
	used := p.usedBufs()
	return p.keepBufs(func(b int) bool { return used[b] })
}

// usedBufs are the buffers some op reads or writes.
func (p *Prog) usedBufs() map[int]bool {
	used := map[int]bool{}
	walkOps(p.Body, func(o *Op) {
		for b := range reads(o) {
			used[b] = true
		}
		switch o.Kind {
		case OpCopy, OpFill, OpAtomic, OpParallel, OpReduce:
			used[o.Dst.Buf] = true
		case OpGemm:
			used[o.C.Buf] = true
		case OpPrefetch:
			used[o.Src.Buf] = true
		}
	})
	return used
}

// keepBufs is p with only the buffers keep accepts, renumbered.
func (p *Prog) keepBufs(keep func(int) bool) *Prog {
	c := p.clone()
	used := map[int]bool{}
	for i := range c.Bufs {
		used[i] = keep(i)
	}
	refs := func(fn func(*int)) {
		walkOps(c.Body, func(o *Op) {
			fn(&o.Src.Buf)
			fn(&o.Dst.Buf)
			fn(&o.C.Buf)
			walkExpr(o.Expr, func(e *Expr) {
				if e.Op == "load" {
					fn(&e.Buf)
				}
			})
		})
	}
	remap, n := map[int]int{}, 0
	var bufs []Buf
	for i, b := range c.Bufs {
		if used[i] {
			remap[i] = n
			n++
			bufs = append(bufs, b)
		}
	}
	if c.SymRows && !anyRowsParam(c, used) { // nothing left binds the Sym
		c.SymRows = false
	}
	refs(func(b *int) {
		if nb, ok := remap[*b]; ok {
			*b = nb
		} else {
			*b = 0
		}
	})
	c.Bufs = bufs
	return c
}

// anyRowsParam: a used parameter has the rows as a dim (and binds the Sym).
func anyRowsParam(p *Prog, used map[int]bool) bool {
	for i, b := range p.Bufs {
		if used[i] && b.Scope.global() && slices.Contains(b.Shape, RowsDim) {
			return true
		}
	}
	return false
}
