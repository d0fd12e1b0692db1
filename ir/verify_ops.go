package ir

import "slices"

// expr checks that every buffer and variable an expression uses belongs to
// the program and is in scope, and that fragments are read only inside
// Parallel loops.
func (v *verifier) expr(op string, pos Pos, e Expr) {
	WalkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *Var:
			if !v.bound[x] {
				v.errorf(op, pos, "variable %s is used outside the loop or kernel that binds it", x.Name)
			}
		case *Load:
			v.access(op, pos, x.Buf, x.Idx)
		case *Binary:
			if x.Op.IsLogic() && (x.X.Type() != Bool || x.Y.Type() != Bool) {
				v.errorf(op, pos, "%s needs bool operands, got %s and %s", x.Op, x.X.Type(), x.Y.Type())
			}
		}
	})
}

// access checks one element access (a Load or a Store).
func (v *verifier) access(op string, pos Pos, b *Buffer, idx []Expr) {
	if b == nil {
		v.errorf(op, pos, "missing buffer")
		return
	}
	if !v.known[b] {
		v.errorf(op, pos, "buffer %s does not belong to this function", b.Name)
		return
	}
	if len(idx) != len(b.Shape) {
		v.errorf(op, pos, "%s has %d dims but is indexed with %d", b.Name, len(b.Shape), len(idx))
		return
	}
	if b.Scope == Fragment && v.inPar == 0 {
		v.errorf(op, pos, "fragment %s is accessed element by element outside a Parallel loop; its elements live in different threads' registers", b.Name)
	}
	v.parallelFits(op, pos, b, idx)
	for i, x := range idx {
		if x == nil {
			continue
		}
		v.expr(op, pos, x)
		if !x.Type().IsInt() {
			v.errorf(op, pos, "index %d of %s has type %s; want an integer", i, b.Name, x.Type())
			continue
		}
		c, ok := ConstInt(x)
		d, dok := ConstInt(b.Shape[i])
		if ok && dok && (c < 0 || c >= d) {
			v.errorf(op, pos, "index %d is outside dim %d of %s (size %d)", c, i, b.Name, d)
		}
	}
}

// region checks that a region belongs to the program and lies inside its
// buffer. Global regions may run past the tensor's edge (they are masked)
// but may not start outside it. It returns false when the region has no
// buffer, so the caller checks no further.
func (v *verifier) region(op string, pos Pos, r Region) bool {
	b := r.Buf
	if b == nil {
		v.errorf(op, pos, "missing buffer")
		return false
	}
	if !v.known[b] {
		v.errorf(op, pos, "buffer %s does not belong to this function", b.Name)
		return true
	}
	if len(r.Start) != len(b.Shape) || len(r.Extent) != len(b.Shape) || len(r.Keep) != len(b.Shape) {
		v.errorf(op, pos, "region of %s has %d dims; the buffer has %d", b.Name, len(r.Start), len(b.Shape))
		return true
	}
	for i := range r.Start {
		v.expr(op, pos, r.Start[i])
		if r.Extent[i] <= 0 {
			v.errorf(op, pos, "region of %s has extent %d in dim %d", b.Name, r.Extent[i], i)
		}
		d, dok := ConstInt(b.Shape[i])
		st, sok := ConstInt(r.Start[i])
		if !dok {
			continue
		}
		if sok && (st < 0 || st >= d) {
			v.errorf(op, pos, "region of %s starts at %d in dim %d, outside its size %d", b.Name, st, i, d)
		} else if end, ok := AddChecked(st, int64(r.Extent[i])); b.Scope != Global && sok && (!ok || end > d) {
			v.errorf(op, pos, "region of %s [%d, %d) in dim %d runs past its size %d", b.Name, st, st+int64(r.Extent[i]), i, d)
		} else if b.Scope != Global && int64(r.Extent[i]) > d {
			v.errorf(op, pos, "region of %s has extent %d in dim %d, larger than its size %d", b.Name, r.Extent[i], i, d)
		}
	}
	return true
}

func (v *verifier) sameShape(op string, pos Pos, a, b Region) {
	if sa, sb := a.Shape(), b.Shape(); !slices.Equal(sa, sb) {
		v.errorf(op, pos, "shape mismatch: %s is %v but %s is %v", a.Buf.Name, sa, b.Buf.Name, sb)
	}
}

func (v *verifier) gemm(g *Gemm) {
	pos := g.P
	for _, r := range []Region{g.A, g.B, g.C} {
		v.region("gemm", pos, r)
	}
	if g.A.Buf == nil || g.B.Buf == nil || g.C.Buf == nil || !v.known[g.A.Buf] || !v.known[g.B.Buf] || !v.known[g.C.Buf] {
		return
	}
	a, b, c := g.A.Shape(), g.B.Shape(), g.C.Shape()
	if len(a) != 2 || len(b) != 2 || len(c) != 2 {
		v.errorf("gemm", pos, "operands must be 2-D tiles, got A %v, B %v, C %v", a, b, c)
		return
	}
	switch g.A.Buf.Scope {
	case Shared, Fragment:
	default:
		v.errorf("gemm", pos, "A (%s) must be a shared tile or a fragment, not %s", g.A.Buf.Name, g.A.Buf.Scope)
	}
	if g.B.Buf.Scope != Shared {
		v.errorf("gemm", pos, "B (%s) must be a shared tile, not %s: the tensor cores read B from shared memory", g.B.Buf.Name, g.B.Buf.Scope)
	}
	if g.C.Buf.Scope != Fragment {
		v.errorf("gemm", pos, "C (%s) must be a fragment, not %s", g.C.Buf.Name, g.C.Buf.Scope)
	}
	if g.C.Buf.DType != F32 {
		v.errorf("gemm", pos, "C (%s) must be f32 to accumulate, not %s", g.C.Buf.Name, g.C.Buf.DType)
	}
	if g.Policy > FullCol {
		v.errorf("gemm", pos, "unknown warp policy %s", g.Policy)
	}
	if g.A.Buf.DType != g.B.Buf.DType {
		v.errorf("gemm", pos, "A is %s but B is %s; they must match", g.A.Buf.DType, g.B.Buf.DType)
	}
	if dt := g.A.Buf.DType; dt != F16 && dt != BF16 && dt != F8E4M3 && dt != F8E5M2 {
		v.errorf("gemm", pos, "A and B must be f16, bf16 or f8, not %s", dt)
	}
	m, ka := a[0], a[1]
	if g.TransA {
		m, ka = a[1], a[0]
	}
	kb, n := b[0], b[1]
	if g.TransB {
		kb, n = b[1], b[0]
	}
	if ka != kb {
		v.errorf("gemm", pos, "shapes do not chain: A gives K=%d but B gives K=%d (A %v, B %v, transA=%v, transB=%v)", ka, kb, a, b, g.TransA, g.TransB)
	}
	if c[0] != m || c[1] != n {
		v.errorf("gemm", pos, "C is %v but A·B is [%d %d]", c, m, n)
	}
}

func (v *verifier) reduce(r *Reduce) {
	pos := r.P
	op := "reduce_" + r.Kind.String()
	for _, b := range []*Buffer{r.Src, r.Dst} {
		if b == nil {
			v.errorf(op, pos, "missing buffer")
			return
		}
		if !v.known[b] {
			v.errorf(op, pos, "buffer %s does not belong to this function", b.Name)
			return
		}
		if b.Scope == Global {
			v.errorf(op, pos, "%s is global; reduce a fragment or shared tile", b.Name)
			return
		}
	}
	src, _ := r.Src.StaticShape()
	dst, _ := r.Dst.StaticShape()
	if r.Dim < 0 || r.Dim >= len(src) {
		v.errorf(op, pos, "dim %d is out of range for %s with shape %v", r.Dim, r.Src.Name, src)
		return
	}
	want := slices.Delete(slices.Clone(src), r.Dim, r.Dim+1)
	if len(want) == 0 {
		want = []int{1}
	}
	if !slices.Equal(want, dst) {
		v.errorf(op, pos, "%s has shape %v; reducing %s %v along dim %d gives %v", r.Dst.Name, dst, r.Src.Name, src, r.Dim, want)
	}
	if !r.Src.DType.IsFloat() && r.Src.DType != I32 {
		v.errorf(op, pos, "cannot reduce %s values", r.Src.DType)
	}
}

// counter checks a counter: one element of a global i32 tensor.
func (v *verifier) counter(op string, pos Pos, r Region) {
	if c := r.Buf; c.Scope != Global || c.DType != I32 || !oneElement(r) {
		v.errorf(op, pos, "the counter must be one element of a global i32 tensor, got %s (%s %s)", RegionString(r), c.Scope, c.DType)
	}
}

// oneElement: r is a single element.
func oneElement(r Region) bool {
	for _, e := range r.Extent {
		if e != 1 {
			return false
		}
	}
	return true
}

// signal: a counter the program may write.
func (v *verifier) signal(pos Pos, s *Signal) {
	if v.region("signal", pos, s.Counter) {
		v.counter("signal", pos, s.Counter)
		v.writable("signal", pos, s.Counter.Buf)
	}
}

// waitCount: one element of a global i32 tensor the program does not
// write (an earlier kernel's counter), and an i32 count.
func (v *verifier) waitCount(pos Pos, s *WaitCount) {
	if !v.region("wait_count", pos, s.Counter) {
		return
	}
	v.expr("wait_count", pos, s.Min)
	if t := s.Min.Type(); t != I32 {
		v.errorf("wait_count", pos, "the count to wait for must be an i32, got %s", t)
	}
	v.counter("wait_count", pos, s.Counter)
	c := s.Counter.Buf
	switch {
	case c.Output && !c.Scratch:
		v.errorf("wait_count", pos, "the counter %s is an output of this program: a block would wait for another block of its own grid, which may never run; wait for an earlier kernel's counter", c.Name)
	case v.addsTo(s.Counter) && !v.f.Kernel.Cooperative:
		v.errorf("wait_count", pos, "this kernel's blocks add to the counter %s: a block would wait for another block of its own grid, which may never run; make the kernel Cooperative (every block at once)", c.Name)
	}
}

// addsTo: a Signal or Ticket of the kernel may add to the element r
// names: one of the same tensor that no constant index tells apart (MLA's
// combine waits on a request's column 0 and draws tickets from its 1).
func (v *verifier) addsTo(r Region) bool {
	found := false
	Walk(v.f.Kernel.Body, func(s Stmt) {
		var c Region
		switch s := s.(type) {
		case *Signal:
			c = s.Counter
		case *Ticket:
			c = s.Counter
		default:
			return
		}
		found = found || c.Buf == r.Buf && !constApart(c, r)
	})
	return found
}

// constApart: a and b (regions of one buffer) start at different
// constants in some dim, and so name different elements.
func constApart(a, b Region) bool {
	for d := range min(len(a.Start), len(b.Start)) {
		x, ok1 := ConstInt(a.Start[d])
		y, ok2 := ConstInt(b.Start[d])
		if ok1 && ok2 && x != y {
			return true
		}
	}
	return false
}

// ticket: one element of a global i32 counter the program may write, drawn
// into one element of a shared i32 tile.
func (v *verifier) ticket(pos Pos, s *Ticket) {
	if !v.region("ticket", pos, s.Counter) || !v.region("ticket", pos, s.Dst) {
		return
	}
	c, d := s.Counter.Buf, s.Dst.Buf
	v.counter("ticket", pos, s.Counter)
	if d.Scope != Shared || d.DType != I32 || !oneElement(s.Dst) {
		v.errorf("ticket", pos, "the ticket lands in one element of a shared i32 tile, got %s (%s %s)", RegionString(s.Dst), d.Scope, d.DType)
	}
	v.writable("ticket", pos, c)
	v.writable("ticket", pos, d)
}
