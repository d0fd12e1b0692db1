package interp

import (
	"math"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

func (c *compiler) stmts(body []ir.Stmt) exec {
	fns := make([]exec, len(body))
	for i, s := range body {
		fns[i] = c.stmt(s)
	}
	return func(st *state) {
		for i, fn := range fns {
			if st.err != nil {
				return
			}
			st.at = body[i]
			fn(st)
		}
	}
}

func (c *compiler) stmt(s ir.Stmt) exec {
	switch s := s.(type) {
	case *ir.Copy:
		return c.copy(s.P, s.Src, s.Dst, false)
	case *ir.AtomicAdd:
		return c.copy(s.P, s.Src, s.Dst, true)
	case *ir.Ticket:
		return c.ticket(s)
	case *ir.WaitCount:
		return c.waitCount(s)
	case *ir.Signal:
		return c.signal(s)
	case *ir.Prefetch: // a cache hint: nothing to do
		return func(*state) {}
	case *ir.Gemm:
		return c.gemm(s)
	case *ir.Fill:
		dst := c.tile(s.Dst, s.P)
		v := c.value(dst.b, s.Value)
		return func(st *state) {
			x := v(st)
			dst.each(st, func(d []float64, off int, in bool) {
				if in {
					d[off] = x
				}
			})
		}
	case *ir.Reduce:
		return c.reduce(s)
	case *ir.Store:
		b := c.bufs[c.buf[s.Buf]]
		at, v := c.addr(b, s.Idx), c.value(b, s.Value)
		return func(st *state) {
			off, ok := at(st)
			if !ok {
				st.failIdx(s.Buf, s.Idx, c, "write")
				return
			}
			st.data(b)[off] = v(st)
		}
	case *ir.Parallel:
		slots := make([]int, len(s.Vars))
		for i, v := range s.Vars {
			slots[i] = c.varSlot(v)
		}
		body := c.stmts(s.Body)
		return func(st *state) {
			var rec func(d int)
			rec = func(d int) {
				if d == len(slots) {
					body(st)
					return
				}
				for i := 0; i < s.Extents[d] && st.err == nil; i++ {
					if st.halted(s.P, "parallel") {
						return
					}
					st.vars[slots[d]] = float64(i)
					rec(d + 1)
				}
			}
			rec(0)
		}
	case *ir.For:
		slot := c.varSlot(s.Var)
		lo, hi := c.expr(s.Start), c.expr(s.Stop)
		if s.Kind == ir.Pipelined && hasDeferred(s) {
			return c.lateFor(s, slot, lo, hi)
		}
		body, op := c.stmts(s.Body), s.Kind.String()
		if s.Kind == ir.Spread { // the block's linear index, then every grid-th
			return func(st *state) {
				end := hi(st)
				for i := lo(st) + float64(st.block); i < end && st.err == nil && !st.halted(s.P, "spread"); i += float64(st.blocks) {
					st.vars[slot] = i
					body(st)
				}
			}
		}
		return func(st *state) {
			end := hi(st)
			for i := lo(st); i < end && st.err == nil && !st.halted(s.P, op); i++ {
				st.vars[slot] = i
				body(st)
			}
		}
	case *ir.Deferred:
		// lateFor runs the legal ones; the verifier rejects the rest.
		c.errorf("interp: %s: defer: only a statement of a Pipelined loop's body may be deferred", s.P)
		return func(*state) {}
	case *ir.Warpgroup: // which threads run it does not change its results
		return c.stmts(s.Body)
	case *ir.While:
		cond, body := c.expr(s.Cond), c.stmts(s.Body)
		return func(st *state) {
			for st.err == nil && !st.halted(s.P, "while") && cond(st) != 0 {
				body(st)
			}
		}
	case *ir.If:
		cond, then, els := c.expr(s.Cond), c.stmts(s.Then), c.stmts(s.Else)
		return func(st *state) {
			if cond(st) != 0 {
				then(st)
			} else {
				els(st)
			}
		}
	}
	c.errorf("interp: unknown statement %T", s)
	return func(*state) {}
}

// value compiles the element b stores for the value of e (ints.go's
// conversions: integers exact and wrapped, floats to integers as cvt.rzi).
func (c *compiler) value(b *buffer, e ir.Expr) eval {
	if e != nil && e.Type().IsInt() {
		iv := c.iexpr(e)
		return func(st *state) float64 { return b.fromInt(iv(st)) }
	}
	v, t := c.expr(e), ir.Invalid
	if e != nil {
		t = e.Type()
	}
	return func(st *state) float64 { return b.from(t, v(st)) }
}

// hasDeferred says whether f has Deferred statements of its own.
func hasDeferred(f *ir.For) bool {
	for _, s := range f.Body {
		if _, ok := s.(*ir.Deferred); ok {
			return true
		}
	}
	return false
}

// lateFor runs a Pipelined loop with Deferred statements: iteration i runs
// each Deferred body at its place with the loop variable set to i-1 (none
// in the first iteration), and the last iteration's Deferred bodies run
// after the loop, in body order. Kept apart from the plain loop so that one
// without Deferred statements pays nothing for them.
func (c *compiler) lateFor(f *ir.For, slot int, lo, hi eval) exec {
	type part struct {
		run  exec
		late bool
	}
	parts := make([]part, len(f.Body))
	for i, s := range f.Body {
		if d, ok := s.(*ir.Deferred); ok {
			parts[i] = part{c.stmts(d.Body), true}
		} else {
			parts[i] = part{c.stmt(s), false}
		}
	}
	return func(st *state) {
		end := hi(st)
		start := lo(st)
		for i := start; i < end && st.err == nil && !st.halted(f.P, "pipelined"); i++ {
			st.vars[slot] = i
			for _, p := range parts {
				if st.err != nil {
					return
				}
				if !p.late {
					p.run(st)
				} else if i > start {
					st.vars[slot] = i - 1
					p.run(st)
					st.vars[slot] = i
				}
			}
		}
		if end <= start {
			return
		}
		st.vars[slot] = end - 1
		for _, p := range parts {
			if p.late && st.err == nil {
				p.run(st)
			}
		}
	}
}

// tile is a compiled region: it visits the region's elements in row-major
// tile order, giving each one's offset and whether it lies in the buffer.
type tile struct {
	b      *buffer
	starts []eval
	r      ir.Region
	pos    ir.Pos
}

func (c *compiler) tile(r ir.Region, pos ir.Pos) *tile {
	t := &tile{b: c.bufs[c.buf[r.Buf]], r: r, pos: pos}
	for _, s := range r.Start {
		t.starts = append(t.starts, c.expr(s))
	}
	return t
}

func (t *tile) each(st *state, fn func(d []float64, off int, in bool)) {
	n := len(t.starts)
	start := make([]int, n)
	for i, s := range t.starts {
		start[i] = int(s(st))
		// A region may run past a tensor's edge but must start inside it:
		// a start outside is a bug in the program, not a masked edge.
		if start[i] < 0 || (start[i] >= t.b.shape[i] && t.b.shape[i] > 0) {
			st.fail(t.pos, "region of %s starts at %d in dim %d, outside its size %d", t.r.Buf.Name, start[i], i, t.b.shape[i])
			return
		}
	}
	d := st.data(t.b)
	idx := make([]int, n)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			off, in := 0, true
			for i := range idx {
				x := start[i] + idx[i]
				if x < 0 || x >= t.b.shape[i] {
					in = false
					break
				}
				off += x * t.b.strides[i]
			}
			fn(d, off, in)
			return
		}
		for idx[k] = 0; idx[k] < t.r.Extent[k]; idx[k]++ {
			rec(k + 1)
		}
	}
	rec(0)
}

// copy implements Copy and AtomicAdd: out-of-bounds global elements read
// as zero and are not written; on-chip ones are an error.
func (c *compiler) copy(pos ir.Pos, src, dst ir.Region, atomic bool) exec {
	s, d := c.tile(src, pos), c.tile(dst, pos)
	dt := dst.Buf.DType
	cv := conv(s.b, d.b) // each element as dst stores it
	return func(st *state) {
		var vals []float64
		s.each(st, func(data []float64, off int, in bool) {
			switch {
			case in:
				vals = append(vals, cv(data[off]))
			case s.b.global != nil:
				vals = append(vals, cv(0))
			default:
				st.fail(pos, "copy reads %s outside its shape", src.Buf.Name)
				vals = append(vals, 0)
			}
		})
		if st.err != nil { // the source region was invalid
			return
		}
		if atomic {
			st.mu.Lock()
			defer st.mu.Unlock()
		}
		i := 0
		d.each(st, func(data []float64, off int, in bool) {
			v := vals[i]
			i++
			switch {
			case in && atomic:
				data[off] = tensor.Round(dt, data[off]+v)
			case in:
				data[off] = v
			case d.b.global == nil:
				st.fail(pos, "copy writes %s outside its shape", dst.Buf.Name)
			}
		})
	}
}

// matrix reads a 2-D region into a row-major slice.
func (t *tile) matrix(st *state, pos ir.Pos, trans bool) (rows, cols int, m []float64) {
	sh := t.r.Shape()
	rows, cols = sh[0], sh[1]
	m = make([]float64, 0, rows*cols)
	t.each(st, func(d []float64, off int, in bool) {
		if !in {
			st.fail(pos, "gemm operand %s is read outside its shape", t.r.Buf.Name)
			m = append(m, 0)
			return
		}
		m = append(m, d[off])
	})
	if len(m) != rows*cols { // each stopped at an invalid region
		return rows, cols, make([]float64, rows*cols)
	}
	if !trans {
		return rows, cols, m
	}
	tm := make([]float64, len(m))
	for i := range rows {
		for j := range cols {
			tm[j*rows+i] = m[i*cols+j]
		}
	}
	return cols, rows, tm
}

func (c *compiler) gemm(g *ir.Gemm) exec {
	a, b, cc := c.tile(g.A, g.P), c.tile(g.B, g.P), c.tile(g.C, g.P)
	return func(st *state) {
		M, K, am := a.matrix(st, g.P, g.TransA)
		_, N, bm := b.matrix(st, g.P, g.TransB)
		if st.err != nil {
			return
		}
		bt := make([]float64, K*N) // column-major B for a contiguous inner loop
		for k := range K {
			for n := range N {
				bt[n*K+k] = bm[k*N+n]
			}
		}
		out := make([]float64, M*N)
		for m := range M {
			ar := am[m*K : m*K+K]
			for n := range N {
				bc := bt[n*K : n*K+K]
				var s float64
				for k := range K {
					s += ar[k] * bc[k]
				}
				out[m*N+n] = s
			}
		}
		i := 0
		cc.each(st, func(d []float64, off int, in bool) {
			if g.Clear {
				d[off] = 0
			}
			d[off] = f32(d[off] + out[i])
			i++
		})
	}
}

func (c *compiler) reduce(r *ir.Reduce) exec {
	src, dst := c.bufs[c.buf[r.Src]], c.bufs[c.buf[r.Dst]]
	t := r.Src.DType.Compute()
	outer, n, inner := 1, src.shape[r.Dim], 1
	for i, d := range src.shape {
		if i < r.Dim {
			outer *= d
		} else if i > r.Dim {
			inner *= d
		}
	}
	var (
		init float64
		op   func(acc, x float64) float64
	)
	switch r.Kind {
	case ir.ReduceSum:
		op = func(acc, x float64) float64 { return acc + x }
	case ir.ReduceMax:
		init, op = math.Inf(-1), fmax
	case ir.ReduceMin:
		init, op = math.Inf(1), fmin
	case ir.ReduceAbsMax:
		op = func(acc, x float64) float64 { return fmax(acc, math.Abs(x)) }
	}
	return func(st *state) {
		s, d := st.data(src), st.data(dst)
		for o := range outer {
			for in := range inner {
				acc := init
				for k := range n {
					acc = op(acc, src.readFloat(s[(o*n+k)*inner+in]))
				}
				j := o*inner + in
				if !r.Clear {
					acc = op(dst.readFloat(d[j]), acc)
				}
				d[j] = dst.from(t, acc)
			}
		}
	}
}

// signal implements Signal: a ticket whose count no one reads.
func (c *compiler) signal(s *ir.Signal) exec {
	add := c.countAdd("signal", s.Counter, s.P)
	return func(st *state) { add(st) }
}

// countAdd adds 1 to a counter under the shared lock, which orders the
// block's earlier global writes before the add as the GPU's release does,
// and returns the count before it (NaN when the counter is outside its
// tensor, which fails the run).
func (c *compiler) countAdd(op string, r ir.Region, pos ir.Pos) func(*state) float64 {
	cnt := c.tile(r, pos)
	return func(st *state) float64 {
		old := math.NaN()
		st.mu.Lock()
		defer st.mu.Unlock()
		cnt.each(st, func(d []float64, off int, in bool) {
			if !in {
				st.fail(pos, "%s's counter %s is outside its tensor", op, r.Buf.Name)
				return
			}
			old = d[off]
			d[off] = tensor.Round(ir.I32, old+1)
		})
		if st.coop != nil { // a block of the grid may wait for this count
			st.coop.cond.Broadcast()
		}
		return old
	}
}

// waitCount implements WaitCount. Outside a cooperative kernel the
// interpreter runs a chain's steps one after another, so the count an
// earlier step adds is whole by now: one short of it would wait forever.
// In a cooperative kernel the block waits for the grid's other blocks to
// add, and fails only when none still running can.
func (c *compiler) waitCount(s *ir.WaitCount) exec {
	cnt, n := c.tile(s.Counter, s.P), c.expr(s.Min)
	name, coop := s.Counter.Buf.Name, c.f.Kernel.Cooperative
	return func(st *state) {
		want := n(st)
		st.mu.Lock()
		defer st.mu.Unlock()
		// short finds an element of the counter below want, and its count.
		short := func() (have float64, ok bool) {
			cnt.each(st, func(d []float64, off int, in bool) {
				if in && !ok && d[off] < want {
					have, ok = d[off], true
				}
			})
			return have, ok
		}
		cnt.each(st, func(_ []float64, _ int, in bool) {
			if !in {
				st.fail(s.P, "wait_count's counter %s is outside its tensor", name)
			}
		})
		have, isShort := short()
		switch {
		case st.err != nil || !isShort:
		case !coop:
			st.fail(s.P, "wait_count: counter %s is %v and the block waits for %v; the kernels before this one have ended, so it would wait forever", name, have, want)
		case !st.coop.wait(st, func() bool { _, ok := short(); return !ok }):
			have, _ = short()
			if st.halted(s.P, "wait_count") {
				return
			}
			if st.coop.stuck {
				st.fail(s.P, "wait_count: counter %s is %v and the block waits for %v; every other block of the grid has ended or waits too, so no block still running adds to the counter: it would wait forever", name, have, want)
			} else {
				st.fail(s.P, "wait_count: counter %s is %v and the block waits for %v; it stops because another block of the grid failed", name, have, want)
			}
		}
	}
}

// ticket implements Ticket: the shared lock orders the block's earlier
// global writes before the draws that follow it, as the GPU's fences do.
func (c *compiler) ticket(s *ir.Ticket) exec {
	add, dst := c.countAdd("ticket", s.Counter, s.P), c.tile(s.Dst, s.P)
	return func(st *state) {
		old := add(st)
		dst.each(st, func(d []float64, off int, in bool) {
			if in {
				d[off] = old
			}
		})
	}
}
