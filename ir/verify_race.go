package ir

import "strings"

// Races the language can see. Tile ops are issued by the whole block in
// program order and the compiler puts a barrier between them, so within a
// block only a Parallel loop's points (run by different threads at once)
// can race; across blocks nothing orders one block's writes before
// another's, so two blocks must never write the same element of an output
// other than by atomics and counters.

// axes is a set of grid axes (bit a for axis a).
type axes uint8

const allAxes axes = 7

// blockTaint finds, for each value a kernel computes, the grid axes it may
// differ along between blocks: a block index, a Spread loop's values
// (dealt to blocks), a ticket (drawn in block order), and whatever is
// computed, stored or decided from those. It is flow-insensitive and
// conservative: a buffer any of whose writes depends on an axis depends
// on it everywhere.
type blockTaint struct {
	loop map[*Var]axes
	buf  map[*Buffer]axes
}

func (t *blockTaint) expr(e Expr) axes {
	var a axes
	WalkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *Var:
			if x.Kind == BlockIdx {
				a |= 1 << x.Axis
			}
			a |= t.loop[x]
		case *Load:
			a |= t.buf[x.Buf]
		}
	})
	return a
}

func (t *blockTaint) starts(r Region) axes {
	var a axes
	for _, s := range r.Start {
		a |= t.expr(s)
	}
	return a
}

// write adds a to b's taint and reports whether it grew.
func (t *blockTaint) write(b *Buffer, a axes) bool {
	if b == nil || t.buf[b]|a == t.buf[b] {
		return false
	}
	t.buf[b] |= a
	return true
}

// pass walks body under control taint ctl once and reports whether any
// taint grew.
func (t *blockTaint) pass(body []Stmt, ctl axes) bool {
	grew := false
	for _, s := range body {
		switch s := s.(type) {
		case *Copy:
			grew = t.write(s.Dst.Buf, ctl|t.starts(s.Src)|t.starts(s.Dst)|t.buf[s.Src.Buf]) || grew
		case *AtomicAdd:
			grew = t.write(s.Dst.Buf, ctl|t.starts(s.Src)|t.starts(s.Dst)|t.buf[s.Src.Buf]) || grew
		case *Gemm:
			grew = t.write(s.C.Buf, ctl|t.starts(s.A)|t.starts(s.B)|t.starts(s.C)|t.buf[s.A.Buf]|t.buf[s.B.Buf]) || grew
		case *Fill:
			grew = t.write(s.Dst.Buf, ctl|t.starts(s.Dst)|t.expr(s.Value)) || grew
		case *Reduce:
			grew = t.write(s.Dst, ctl|t.buf[s.Src]) || grew
		case *Ticket:
			grew = t.write(s.Dst.Buf, allAxes) || grew // the count depends on the order blocks draw in
		case *Store:
			a := ctl | t.expr(s.Value)
			for _, x := range s.Idx {
				a |= t.expr(x)
			}
			grew = t.write(s.Buf, a) || grew
		case *For:
			a := ctl | t.expr(s.Start) | t.expr(s.Stop)
			if s.Kind == Spread {
				a = allAxes
			}
			if t.loop[s.Var]|a != t.loop[s.Var] {
				t.loop[s.Var] |= a
				grew = true
			}
			grew = t.pass(s.Body, t.loop[s.Var]) || grew
		case *Parallel:
			grew = t.pass(s.Body, ctl) || grew
		case *Deferred:
			grew = t.pass(s.Body, ctl) || grew
		case *Warpgroup:
			grew = t.pass(s.Body, ctl) || grew
		case *While:
			grew = t.pass(s.Body, ctl|t.expr(s.Cond)) || grew
		case *If:
			c := ctl | t.expr(s.Cond)
			grew = t.pass(s.Then, c) || grew
			grew = t.pass(s.Else, c) || grew
		}
	}
	return grew
}

func newBlockTaint(body []Stmt) *blockTaint {
	t := &blockTaint{loop: map[*Var]axes{}, buf: map[*Buffer]axes{}}
	for t.pass(body, 0) { // taints only grow, over at most 3 bits a value
	}
	return t
}

// gridVaries is the set of grid axes with more than one block (a symbolic
// extent may have more).
func gridVaries(k *Kernel) axes {
	var a axes
	for i, g := range k.Grid {
		if c, ok := ConstInt(g); !ok || c > 1 {
			a |= 1 << i
		}
	}
	return a
}

func (a axes) String() string {
	var s []string
	for i, n := range []string{"x", "y", "z"} {
		if a&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	return strings.Join(s, ", ")
}

// blockRaces refuses a write to an output that every block along some
// grid axis with more than one block makes alike: a copy or store into a
// global tensor whose region (or element) does not depend on that axis,
// neither through its start nor through the conditions and loop bounds
// around it. Atomic adds and counters (Ticket, Signal, scratch tensors)
// are meant to be shared.
func (v *verifier) blockRaces(k *Kernel) {
	need := gridVaries(k)
	if need == 0 {
		return
	}
	t := newBlockTaint(k.Body)
	var visit func(body []Stmt, ctl axes)
	check := func(op string, pos Pos, b *Buffer, have axes) {
		if b == nil || b.Scope != Global || b.Scratch {
			return
		}
		if miss := need &^ have; miss != 0 {
			v.errorf(op, pos, "every block along grid axis %s writes the same region of %s: blocks would race; index the region by the block (or write it under a condition on the block index), or use AtomicAdd", miss, b.Name)
		}
	}
	visit = func(body []Stmt, ctl axes) {
		for _, s := range body {
			switch s := s.(type) {
			case *Copy:
				check("copy", s.P, s.Dst.Buf, ctl|t.starts(s.Dst))
			case *Store:
				a := ctl
				for _, x := range s.Idx {
					a |= t.expr(x)
				}
				check("store", s.P, s.Buf, a)
			case *For:
				visit(s.Body, ctl|t.loop[s.Var])
			case *Parallel:
				visit(s.Body, ctl)
			case *Deferred:
				visit(s.Body, ctl)
			case *Warpgroup:
				visit(s.Body, ctl)
			case *While:
				visit(s.Body, ctl|t.expr(s.Cond))
			case *If:
				c := ctl | t.expr(s.Cond)
				visit(s.Then, c)
				visit(s.Else, c)
			}
		}
	}
	visit(k.Body, 0)
}

// parallelRaces refuses the races inside a Parallel loop, whose points
// run on different threads at once with no barrier between them: a point
// that reads an element of a shared tile or global tensor another point
// writes (a load of a written buffer at other indices than the write's),
// and points that all write one element (a store whose indices, and the
// conditions around it in the loop, leave out one of the loop's variables
// with an extent above 1). Registers (fragments, locals) are each thread's
// own.
func (v *verifier) parallelRaces(p *Parallel) {
	points := 1
	for _, e := range p.Extents {
		points = satMul(points, max(e, 1))
	}
	if points <= 1 { // one point: one thread, nothing to race with
		return
	}
	type access struct {
		idx  string
		vars map[*Var]bool // the loop's variables the indices and guards name
		pos  Pos
	}
	stores, loads := map[*Buffer][]access{}, map[*Buffer][]access{}
	shared := func(b *Buffer) bool { return b != nil && (b.Scope == Shared || b.Scope == Global) }
	names := func(es []Expr, into map[*Var]bool) {
		for _, e := range es {
			WalkExpr(e, func(x Expr) {
				if lv, ok := x.(*Var); ok {
					into[lv] = true
				}
			})
		}
	}
	load := func(e Expr, pos Pos) {
		WalkExpr(e, func(x Expr) {
			if l, ok := x.(*Load); ok && shared(l.Buf) {
				loads[l.Buf] = append(loads[l.Buf], access{idx: ExprString(&Load{Buf: l.Buf, Idx: l.Idx}), pos: pos})
			}
		})
	}
	var visit func(body []Stmt, guards []Expr)
	visit = func(body []Stmt, guards []Expr) {
		for _, s := range body {
			switch s := s.(type) {
			case *Store:
				load(s.Value, s.P)
				for _, x := range s.Idx {
					load(x, s.P)
				}
				if shared(s.Buf) {
					vars := map[*Var]bool{}
					names(s.Idx, vars)
					names(guards, vars)
					stores[s.Buf] = append(stores[s.Buf], access{idx: ExprString(&Load{Buf: s.Buf, Idx: s.Idx}), vars: vars, pos: s.P})
				}
			case *If:
				load(s.Cond, s.P)
				g := append(append([]Expr{}, guards...), s.Cond)
				visit(s.Then, g)
				visit(s.Else, g)
			}
		}
	}
	visit(p.Body, nil)
	for b, ws := range stores {
		w := ws[0]
		for _, other := range ws {
			for i, x := range p.Vars {
				if p.Extents[i] > 1 && !other.vars[x] {
					v.errorf("parallel", other.pos, "every point along %s writes %s: threads would race; index the element by %s", x.Name, other.idx, x.Name)
				}
			}
			if other.idx != w.idx {
				v.errorf("parallel", other.pos, "points write %s and %s: a point may write only its own element; split the loop in two", w.idx, other.idx)
			}
		}
		for _, r := range loads[b] {
			if r.idx != w.idx {
				v.errorf("parallel", r.pos, "a point reads %s while another writes %s, with no barrier between: threads would race; read it in a loop of its own (the compiler puts a barrier between tile ops)", r.idx, w.idx)
			}
		}
	}
}
