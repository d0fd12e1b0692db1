package cudagen

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// inferLayouts gives every fragment a register layout. Tensor-core ops fix
// the layouts of their accumulators and register operands; copies between
// fragments, reductions and Parallel loops carry layouts to the fragments
// they touch; what is left gets a plain spread over the threads. A
// fragment whose users need different layouts is an error naming both.
func inferLayouts(c *compilation) error {
	k := c.f.Kernel
	type from struct {
		op  string
		pos ir.Pos
	}
	origin := map[*ir.Buffer]from{}
	set := func(b *ir.Buffer, l *layout.Fragment, pos ir.Pos, why string) error {
		if old, ok := c.layouts[b]; ok {
			if !old.Equal(l) {
				o := origin[b]
				return errAt(why, pos, "fragment %s needs layout %s here, but the %s at %s needs %s; copy it through a shared tile to change layout", b.Name, l, o.op, o.pos, old)
			}
			return nil
		}
		if err := l.Check(); err != nil {
			return errAt(why, pos, "internal compiler error: layout of %s: %v", b.Name, err)
		}
		c.layouts[b] = l
		origin[b] = from{why, pos}
		return nil
	}
	var firstErr error
	fail := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	// Tensor-core ops first: they are the strict constraints.
	ir.Walk(k.Body, func(s ir.Stmt) {
		g, ok := s.(*ir.Gemm)
		if !ok {
			return
		}
		if !g.C.IsWhole() || (g.A.Buf.Scope == ir.Fragment && !g.A.IsWhole()) {
			fail(errAt("gemm", g.P, "fragment operands must be whole fragments, not regions of them"))
			return
		}
		sh := g.C.Shape()
		threads := c.threadsOf(g.C.Buf)
		warps := threads / 32
		if why := wgmmaFits(c, g); why == "" {
			c.wgmma[g] = true
			acc, err := layout.WGAccumulator(sh[0], sh[1], wgSplit(threads/128, sh[0], g.Policy, splitNWanted(c)))
			if err != nil {
				fail(errAt("gemm", g.P, "wgmma accumulator: %v", err))
				return
			}
			fail(set(g.C.Buf, acc, g.P, "gemm"))
			if a := g.A.Buf; a.Scope == ir.Fragment {
				opA, err := layout.WGOperandA(sh[0], g.A.Shape()[1], threads/128)
				if err != nil {
					fail(errAt("gemm", g.P, "wgmma A in registers: %v", err))
					return
				}
				fail(set(a, opA, g.P, "gemm"))
			}
			return
		}
		w, err := chooseWarps(g.Policy, sh[0], sh[1], warps, g.A.Buf.Scope == ir.Fragment)
		if err != nil {
			fail(c.mmaErr(g, "%v", err))
			return
		}
		c.warps[g] = w
		acc, err := layout.Accumulator(sh[0], sh[1], w)
		if err != nil {
			fail(c.mmaErr(g, "%v", err))
			return
		}
		fail(set(g.C.Buf, acc, g.P, "gemm"))
		if g.A.Buf.Scope == ir.Fragment {
			if g.TransA {
				fail(c.mmaErr(g, "A from a fragment cannot be transposed"))
				return
			}
			a, err := layout.OperandA(sh[0], g.A.Shape()[1], w)
			if err != nil {
				fail(errAt("gemm", g.P, "%v", err))
				return
			}
			fail(set(g.A.Buf, a, g.P, "gemm"))
		}
	})
	if firstErr != nil {
		return firstErr
	}
	// Propagate until nothing changes.
	propagate := func() {
		for changed := true; changed && firstErr == nil; {
			changed = false
			n := len(c.layouts)
			ir.Walk(k.Body, func(s ir.Stmt) {
				switch s := s.(type) {
				case *ir.Copy:
					a, b := s.Src.Buf, s.Dst.Buf
					if a.Scope == ir.Fragment && b.Scope == ir.Fragment {
						if l, ok := c.layouts[a]; ok {
							fail(set(b, l, s.P, "copy"))
						} else if l, ok := c.layouts[b]; ok {
							fail(set(a, l, s.P, "copy"))
						}
					}
				case *ir.Reduce:
					if s.Src.Scope != ir.Fragment || s.Dst.Scope != ir.Fragment {
						return
					}
					if l, ok := c.layouts[s.Src]; ok {
						fail(set(s.Dst, l.Project(keepAllBut(len(l.Shape), s.Dim)), s.P, "reduce"))
					}
				case *ir.Parallel:
					if drv, _ := parallelDriver(c, s); drv != nil {
						for _, a := range fragmentAccesses(s) {
							if keep, ok := accessKeep(s, a.idx); ok {
								fail(set(a.buf, c.layouts[drv].Project(keep), s.P, "parallel"))
							}
						}
					}
				}
			})
			changed = len(c.layouts) != n
			// Seed one unconstrained fragment that drives a loop, then go on:
			// of the widest such loop, whose layout projects onto the fragments
			// of the narrower ones (a row's statistics).
			if !changed && firstErr == nil {
				var seed *ir.Parallel
				var seedBuf *ir.Buffer
				ir.Walk(k.Body, func(s ir.Stmt) {
					p, ok := s.(*ir.Parallel)
					if !ok || seed != nil && len(p.Vars) <= len(seed.Vars) {
						return
					}
					if drv, cand := parallelDriver(c, p); drv == nil && cand != nil {
						seed, seedBuf = p, cand
					}
				})
				if seed != nil {
					fail(set(seedBuf, seedLayout(c, seed, c.threadsOf(seedBuf)), seed.P, "parallel"))
					changed = true
				}
			}
		}
	}
	propagate()
	// What is left gets a plain spread, one fragment at a time, each
	// carried on to those its copies and reductions fix: a reduction's
	// source first, so that its result takes the projection (a spread of
	// each apart would not match).
	reduced := map[*ir.Buffer]bool{}
	ir.Walk(k.Body, func(s ir.Stmt) {
		if r, ok := s.(*ir.Reduce); ok && r.Src.Scope == ir.Fragment {
			reduced[r.Dst] = true
		}
	})
	for _, results := range []bool{false, true} {
		for _, b := range k.Allocs {
			if b.Scope == ir.Fragment && c.layouts[b] == nil && firstErr == nil && reduced[b] == results {
				shape, _ := b.StaticShape()
				fail(set(b, layout.Spread(shape, c.threadsOf(b), 1), b.Pos, "alloc"))
				propagate()
			}
		}
	}
	return firstErr
}

// seedLayout is the layout a Parallel loop's driver gets when nothing
// constrains it: spread over the threads, in 16-byte runs of the narrowest
// global element that a whole-fragment copy moves to or from a fragment of
// the loop's shape (so the copies are vector loads and stores, copyVectors),
// and for a rows×cols loop one row a thread where the threads divide so
// (layout.Rows: the rows' statistics, e.g. a merge's, are then one register).
func seedLayout(c *compilation, p *ir.Parallel, threads int) *layout.Fragment {
	whole := map[*ir.Buffer]bool{}
	for _, a := range fragmentAccesses(p) {
		if keep, ok := accessKeep(p, a.idx); ok && len(keep) == len(p.Vars) {
			whole[a.buf] = true
		}
	}
	bytes := 0
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		cp, ok := s.(*ir.Copy)
		if !ok {
			return
		}
		for _, r := range [][2]ir.Region{{cp.Src, cp.Dst}, {cp.Dst, cp.Src}} {
			if whole[r[0].Buf] && r[0].IsWhole() && r[1].Buf.Scope == ir.Global {
				if b := r[1].Buf.DType.Bytes(); bytes == 0 || b < bytes {
					bytes = b
				}
			}
		}
	})
	vec, total := 1, 1
	for _, n := range p.Extents {
		total *= n
	}
	if bytes > 0 {
		vec = 16 / bytes
		for vec > 1 && (p.Extents[len(p.Extents)-1]%vec != 0 || total < threads*vec) {
			vec /= 2
		}
	}
	if vec > 1 && len(p.Extents) == 2 {
		if l := layout.Rows(p.Extents[0], p.Extents[1], threads, vec); l != nil {
			return l
		}
	}
	return layout.Spread(p.Extents, threads, vec)
}

func keepAllBut(n, dim int) []int {
	var keep []int
	for d := range n {
		if d != dim {
			keep = append(keep, d)
		}
	}
	return keep
}

// chooseWarps splits a Gemm's warps by its policy. An A operand in
// registers needs each warp to own whole rows, so it forces FullRow.
func chooseWarps(p ir.Policy, m, n, warps int, aInRegs bool) (layout.Warps, error) {
	fits := func(w layout.Warps) bool { return m%(16*w.M) == 0 && n%(8*w.N) == 0 }
	if aInRegs {
		p = ir.FullRow
	}
	switch p {
	case ir.FullRow:
		if w := (layout.Warps{M: warps, N: 1}); fits(w) {
			return w, nil
		}
		if m%(16*warps) != 0 {
			return layout.Warps{}, fmt.Errorf("policy fullrow: %d warps cannot each own 16-row slices of %d rows", warps, m)
		}
		return layout.Warps{}, fmt.Errorf("policy fullrow: %d columns cannot be cut in 8-column pieces", n)
	case ir.FullCol:
		if w := (layout.Warps{M: 1, N: warps}); fits(w) {
			return w, nil
		}
		if n%(8*warps) != 0 {
			return layout.Warps{}, fmt.Errorf("policy fullcol: %d warps cannot each own 8-column slices of %d columns", warps, n)
		}
		return layout.Warps{}, fmt.Errorf("policy fullcol: %d rows cannot be cut in 16-row pieces", m)
	}
	best, found := layout.Warps{}, false
	for wm := 1; wm <= warps; wm++ {
		if warps%wm != 0 {
			continue
		}
		w := layout.Warps{M: wm, N: warps / wm}
		// Prefer the split whose warp tile is squarest (fewest operand loads).
		if fits(w) && (!found || m/w.M+n/w.N < m/best.M+n/best.N) {
			best, found = w, true
		}
	}
	if !found {
		return best, fmt.Errorf("%d warps cannot tile a %d×%d output in 16×8 pieces", warps, m, n)
	}
	return best, nil
}

// access is one element access of a fragment inside a Parallel loop.
type access struct {
	buf *ir.Buffer
	idx []ir.Expr
}

func fragmentAccesses(p *ir.Parallel) []access {
	var out []access
	visit := func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			if l, ok := x.(*ir.Load); ok && l.Buf.Scope == ir.Fragment {
				out = append(out, access{l.Buf, l.Idx})
			}
		})
	}
	ir.Walk(p.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Store:
			if s.Buf.Scope == ir.Fragment {
				out = append(out, access{s.Buf, s.Idx})
			}
			for _, i := range s.Idx {
				visit(i)
			}
			visit(s.Value)
		case *ir.If:
			visit(s.Cond)
		}
	})
	return out
}

// accessKeep maps an access's indices to the loop dims they name: each
// index must be a distinct loop variable of p.
func accessKeep(p *ir.Parallel, idx []ir.Expr) ([]int, bool) {
	keep := make([]int, len(idx))
	used := map[int]bool{}
	for i, x := range idx {
		v, ok := x.(*ir.Var)
		if !ok {
			return nil, false
		}
		d := -1
		for j, pv := range p.Vars {
			if pv == v {
				d = j
			}
		}
		if d < 0 || used[d] {
			return nil, false
		}
		used[d] = true
		keep[i] = d
	}
	return keep, true
}

// parallelDriver picks the fragment whose layout drives a Parallel loop: one
// indexed by all the loop's variables in order, with a known layout. When
// none has a layout yet, cand is a fragment that could drive it.
func parallelDriver(c *compilation, p *ir.Parallel) (drv, cand *ir.Buffer) {
	for _, a := range fragmentAccesses(p) {
		keep, ok := accessKeep(p, a.idx)
		if !ok || len(keep) != len(p.Vars) {
			continue
		}
		inOrder := true
		for i, d := range keep {
			inOrder = inOrder && i == d
		}
		shape, _ := a.buf.StaticShape()
		if !inOrder || !slices.Equal(shape, p.Extents) {
			continue
		}
		if _, known := c.layouts[a.buf]; known {
			return a.buf, nil
		}
		if cand == nil {
			cand = a.buf
		}
	}
	return nil, cand
}
