// Package infer gives every fragment of a kernel a register layout, for
// any target: the target fixes what its tensor-core ops need (Target.Gemm),
// and copies between fragments, reductions and Parallel loops carry
// layouts to the fragments they touch; what is left gets a plain spread
// over the threads. A fragment whose users need different layouts is an
// error naming both, at the op's file:line.
package infer

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// Target is what layout inference asks of a code generator.
type Target interface {
	// Threads is how many threads hold fragment b: the block's, or 128
	// for a fragment one warpgroup owns.
	Threads(b *ir.Buffer) int
	// Gemm fixes the layouts g's tensor-core instructions need: its
	// accumulator's and, when A is a fragment, A's, each through set.
	Gemm(g *ir.Gemm, set func(b *ir.Buffer, l *layout.Fragment) error) error
}

// ErrAt is an error at a statement's file:line.
func ErrAt(op string, pos ir.Pos, format string, args ...any) error {
	return &ir.Error{Op: op, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Layouts fills layouts (fragments already there keep theirs) for kernel k.
func Layouts(k *ir.Kernel, t Target, layouts map[*ir.Buffer]*layout.Fragment) error {
	type from struct {
		op  string
		pos ir.Pos
	}
	origin := map[*ir.Buffer]from{}
	set := func(b *ir.Buffer, l *layout.Fragment, pos ir.Pos, why string) error {
		if old, ok := layouts[b]; ok {
			if !old.Equal(l) {
				o := origin[b]
				return ErrAt(why, pos, "fragment %s needs layout %s here, but the %s at %s needs %s; copy it through a shared tile to change layout", b.Name, l, o.op, o.pos, old)
			}
			return nil
		}
		if err := l.Check(); err != nil {
			return ErrAt(why, pos, "internal compiler error: layout of %s: %v", b.Name, err)
		}
		layouts[b] = l
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
		if !ok || firstErr != nil {
			return
		}
		if !g.C.IsWhole() || (g.A.Buf.Scope == ir.Fragment && !g.A.IsWhole()) {
			fail(ErrAt("gemm", g.P, "fragment operands must be whole fragments, not regions of them"))
			return
		}
		fail(t.Gemm(g, func(b *ir.Buffer, l *layout.Fragment) error { return set(b, l, g.P, "gemm") }))
	})
	if firstErr != nil {
		return firstErr
	}
	// Propagate until nothing changes.
	propagate := func() {
		for changed := true; changed && firstErr == nil; {
			changed = false
			n := len(layouts)
			ir.Walk(k.Body, func(s ir.Stmt) {
				switch s := s.(type) {
				case *ir.Copy:
					a, b := s.Src.Buf, s.Dst.Buf
					if a.Scope == ir.Fragment && b.Scope == ir.Fragment {
						if l, ok := layouts[a]; ok {
							fail(set(b, l, s.P, "copy"))
						} else if l, ok := layouts[b]; ok {
							fail(set(a, l, s.P, "copy"))
						}
					}
				case *ir.Reduce:
					if s.Src.Scope != ir.Fragment || s.Dst.Scope != ir.Fragment {
						return
					}
					if l, ok := layouts[s.Src]; ok {
						fail(set(s.Dst, l.Project(KeepAllBut(len(l.Shape), s.Dim)), s.P, "reduce"))
					}
				case *ir.Parallel:
					if drv, _ := Driver(layouts, s); drv != nil {
						for _, a := range Accesses(s) {
							if keep, ok := AccessKeep(s, a.Idx); ok {
								fail(set(a.Buf, layouts[drv].Project(keep), s.P, "parallel"))
							}
						}
					}
				}
			})
			changed = len(layouts) != n
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
					if drv, cand := Driver(layouts, p); drv == nil && cand != nil {
						seed, seedBuf = p, cand
					}
				})
				if seed != nil {
					fail(set(seedBuf, seedLayout(k, seed, t.Threads(seedBuf)), seed.P, "parallel"))
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
			if b.Scope == ir.Fragment && layouts[b] == nil && firstErr == nil && reduced[b] == results {
				shape, _ := b.StaticShape()
				fail(set(b, layout.Spread(shape, t.Threads(b), 1), b.Pos, "alloc"))
				propagate()
			}
		}
	}
	return firstErr
}

// seedLayout is the layout a Parallel loop's driver gets when nothing
// constrains it: spread over the threads, in 16-byte runs of the narrowest
// global element (else shared) that a whole-fragment copy moves to or from
// a fragment of the loop's shape (so the copies are vector loads and stores),
// and for a rows×cols loop one row a thread where the threads divide so
// (layout.Rows: the rows' statistics, e.g. a merge's, are then one register).
func seedLayout(k *ir.Kernel, p *ir.Parallel, threads int) *layout.Fragment {
	whole := map[*ir.Buffer]bool{}
	for _, a := range Accesses(p) {
		if keep, ok := AccessKeep(p, a.Idx); ok && len(keep) == len(p.Vars) {
			whole[a.Buf] = true
		}
	}
	// The narrowest element of the global tensors the fragment's copies
	// move, else of the shared tiles: a run of 16 global bytes keeps a
	// warp's accesses whole sectors.
	narrowest := map[ir.Scope]int{}
	ir.Walk(k.Body, func(s ir.Stmt) {
		cp, ok := s.(*ir.Copy)
		if !ok {
			return
		}
		for _, r := range [][2]ir.Region{{cp.Src, cp.Dst}, {cp.Dst, cp.Src}} {
			if sc := r[1].Buf.Scope; whole[r[0].Buf] && r[0].IsWhole() && (sc == ir.Global || sc == ir.Shared) {
				if b := r[1].Buf.DType.Bytes(); narrowest[sc] == 0 || b < narrowest[sc] {
					narrowest[sc] = b
				}
			}
		}
	})
	bytes := narrowest[ir.Global]
	if bytes == 0 {
		bytes = narrowest[ir.Shared]
	}
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

// KeepAllBut lists the dims 0..n-1 but dim: what a reduction over dim keeps.
func KeepAllBut(n, dim int) []int {
	var keep []int
	for d := range n {
		if d != dim {
			keep = append(keep, d)
		}
	}
	return keep
}

// Access is one element access of a fragment inside a Parallel loop.
type Access struct {
	Buf *ir.Buffer
	Idx []ir.Expr
}

// Accesses lists p's fragment accesses: stores, loads in values, indices
// and conditions.
func Accesses(p *ir.Parallel) []Access {
	var out []Access
	visit := func(e ir.Expr) {
		ir.WalkExpr(e, func(x ir.Expr) {
			if l, ok := x.(*ir.Load); ok && l.Buf.Scope == ir.Fragment {
				out = append(out, Access{l.Buf, l.Idx})
			}
		})
	}
	ir.Walk(p.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Store:
			if s.Buf.Scope == ir.Fragment {
				out = append(out, Access{s.Buf, s.Idx})
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

// AccessKeep maps an access's indices to the loop dims they name: each
// index must be a distinct loop variable of p.
func AccessKeep(p *ir.Parallel, idx []ir.Expr) ([]int, bool) {
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

// Driver picks the fragment whose layout drives a Parallel loop: one
// indexed by all the loop's variables in order, with a known layout. When
// none has a layout yet, cand is a fragment that could drive it.
func Driver(layouts map[*ir.Buffer]*layout.Fragment, p *ir.Parallel) (drv, cand *ir.Buffer) {
	for _, a := range Accesses(p) {
		keep, ok := AccessKeep(p, a.Idx)
		if !ok || len(keep) != len(p.Vars) {
			continue
		}
		inOrder := true
		for i, d := range keep {
			inOrder = inOrder && i == d
		}
		shape, _ := a.Buf.StaticShape()
		if !inOrder || !slices.Equal(shape, p.Extents) {
			continue
		}
		if _, known := layouts[a.Buf]; known {
			return a.Buf, nil
		}
		if cand == nil {
			cand = a.Buf
		}
	}
	return nil, cand
}
