package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// TMA stores for epilogues (sm_90a, with the TMA loads; Options.NoTMA or
// SwitchTMA off turn both off). A copy of a whole shared tile to a global
// region that TMA can address (tmaBox's rules) is issued by one thread as
// one bulk store per 128-byte panel; the thread waits only until the
// stores have read shared memory, so the block can retire while the writes
// drain, and the next block on the SM starts sooner. Rows past the
// tensor's end are dropped by TMA, as the masked stores drop them.
//
// Not where the program reads the output back: the bulk writes are not
// waited for.

// planTMAStores picks the copies that store by TMA and gives each its
// tensor map.
func planTMAStores(c *compilation) {
	if c.opts.Arch != "sm_90a" || !tmaEnabled(c.opts) {
		return
	}
	ir.Walk(c.f.Kernel.Body, func(st ir.Stmt) {
		cp, ok := st.(*ir.Copy)
		if !ok || cp.Src.Buf.Scope != ir.Shared || !cp.Src.IsWhole() || readsBuffer(c.f.Kernel.Body, cp.Dst.Buf) {
			return
		}
		tc, spec, ok := c.tmaBox(cp.Dst, c.smem.bufs[cp.Src.Buf])
		if !ok {
			return
		}
		c.addTMASpec(tc, spec)
		if c.tmaStores == nil {
			c.tmaStores = map[*ir.Copy]*tmaCopy{}
		}
		c.tmaStores[cp] = tc
	})
}

// addTMASpec gives tc the next of the program's tensor maps, spec.
func (c *compilation) addTMASpec(tc *tmaCopy, spec TMASpec) {
	tc.spec = len(c.tmaSpecs)
	c.tmaSpecs = append(c.tmaSpecs, spec)
}

// tmaStore emits cp as TMA stores, after the barrier that makes the tile
// whole (and, on sm_90a, visible to the async proxy).
func (e *emitter) tmaStore(cp *ir.Copy, tc *tmaCopy) {
	e.syncIfDirty(true)
	if e.c.halves != nil && e.c.halves.store == cp {
		e.halfStore(cp, tc)
		return
	}
	sb := e.c.smem.bufs[cp.Src.Buf]
	e.open("if (tid == 0)")
	for p := range tc.panels {
		src := fmt.Sprintf("tl::smem_addr(%s) + %d", e.sharedBase(cp.Src.Buf), p*sb.rows*128)
		e.line("tl::tma_store_%dd(&tm%d, %s, %s);", tc.rank, tc.spec, e.tmaCoords(cp.Dst, p), src)
	}
	e.line("tl::bulk_commit();")
	e.line("tl::bulk_wait_read<0>();") // the tile may be overwritten after the next barrier
	e.close()
	e.read = true
}

// TMA reductions (sm_90a, with the TMA stores): an AtomicAdd of a whole
// shared f32 tile into a global region that TMA can address is issued by
// one thread as one bulk reduce-add per 128-byte panel, which the L2
// applies element by element (rows past the tensor's end dropped, as the
// masked atomics drop them). The threads' own atomics would each travel
// to the L2 from a register pair; the bulk form leaves them free once the
// tile is in shared memory. Not where the kernel reads the tensor back.

// planTMAReduces picks the atomic adds that reduce by TMA and gives each
// its tensor map.
func planTMAReduces(c *compilation) {
	if c.opts.Arch != "sm_90a" || !tmaEnabled(c.opts) {
		return
	}
	ir.Walk(c.f.Kernel.Body, func(st ir.Stmt) {
		a, ok := st.(*ir.AtomicAdd)
		if !ok || a.Src.Buf.Scope != ir.Shared || !a.Src.IsWhole() || a.Dst.Buf.DType != ir.F32 {
			return
		}
		// Other atomic adds into the tensor may stay the threads' own: the
		// L2 applies both kinds atomically.
		if readsBufferBeside(c.f.Kernel.Body, a.Dst.Buf, false) || storesTo(c.f.Kernel.Body, a.Dst.Buf) {
			return
		}
		tc, spec, ok := c.tmaBoxOf(a.Dst, c.smem.bufs[a.Src.Buf], func(dt ir.DType) bool { return dt == ir.F32 })
		if !ok {
			return
		}
		c.addTMASpec(tc, spec)
		if c.tmaReduces == nil {
			c.tmaReduces = map[*ir.AtomicAdd]*tmaCopy{}
		}
		c.tmaReduces[a] = tc
	})
}

// storesTo reports whether body writes b other than by atomic adds (which
// the async proxy's reductions would not be ordered after).
func storesTo(body []ir.Stmt, b *ir.Buffer) bool {
	found := false
	ir.Walk(body, func(st ir.Stmt) {
		switch s := st.(type) {
		case *ir.Copy:
			found = found || s.Dst.Buf == b
		case *ir.Store:
			found = found || s.Buf == b
		case *ir.Fill:
			found = found || s.Dst.Buf == b
		case *ir.Ticket:
			found = found || s.Counter.Buf == b || s.Dst.Buf == b
		case *ir.Signal:
			found = found || s.Counter.Buf == b
		}
	})
	return found
}

// tmaReduce emits a as TMA reduce-adds, after the barrier that makes the
// tile whole and visible to the async proxy; the issuing thread waits
// until they have read the tile, which the next barrier then frees.
func (e *emitter) tmaReduce(a *ir.AtomicAdd, tc *tmaCopy) {
	e.syncIfDirty(true)
	sb := e.c.smem.bufs[a.Src.Buf]
	e.open("if (tid == 0)")
	for p := range tc.panels {
		src := fmt.Sprintf("tl::smem_addr(%s) + %d", e.sharedBase(a.Src.Buf), p*sb.rows*128)
		e.line("tl::tma_reduce_add_%dd(&tm%d, %s, %s);", tc.rank, tc.spec, e.tmaCoords(a.Dst, p), src)
	}
	e.line("tl::bulk_commit();")
	e.line("tl::bulk_wait_read<0>();")
	e.close()
	e.read = true
}

// readsBuffer reports whether any statement of body reads b: as a copy's
// or a GEMM's operand, a reduction's source, or a load in an expression
// (an atomic add reads its destination too).
func readsBuffer(body []ir.Stmt, b *ir.Buffer) bool { return readsBufferBeside(body, b, true) }

// readsBufferBeside is readsBuffer with the atomic adds into b counted as
// reads of it or (adds false) not; their regions' starts count either way.
func readsBufferBeside(body []ir.Stmt, b *ir.Buffer, adds bool) bool {
	found := false
	exprs := func(xs ...ir.Expr) {
		for _, x := range xs {
			if x == nil {
				continue
			}
			ir.WalkExpr(x, func(y ir.Expr) {
				if l, ok := y.(*ir.Load); ok && l.Buf == b {
					found = true
				}
			})
		}
	}
	regions := func(rs ...ir.Region) {
		for _, r := range rs {
			exprs(r.Start...)
		}
	}
	ir.Walk(body, func(st ir.Stmt) {
		switch s := st.(type) {
		case *ir.Copy:
			found = found || s.Src.Buf == b
			regions(s.Src, s.Dst)
		case *ir.AtomicAdd:
			found = found || s.Src.Buf == b || s.Dst.Buf == b && adds
			regions(s.Src, s.Dst)
		case *ir.Ticket:
			found = found || s.Counter.Buf == b
			regions(s.Counter, s.Dst)
		case *ir.Signal:
			found = found || s.Counter.Buf == b
			regions(s.Counter)
		case *ir.WaitCount:
			found = found || s.Counter.Buf == b
			regions(s.Counter)
			exprs(s.Min)
		case *ir.Prefetch:
			found = found || s.Src.Buf == b
			regions(s.Src)
		case *ir.Gemm:
			found = found || s.A.Buf == b || s.B.Buf == b || s.C.Buf == b
			regions(s.A, s.B, s.C)
		case *ir.Reduce:
			found = found || s.Src == b
		case *ir.Fill:
			regions(s.Dst)
			exprs(s.Value)
		case *ir.Store:
			exprs(s.Idx...)
			exprs(s.Value)
		case *ir.For:
			exprs(s.Start, s.Stop)
		case *ir.While:
			exprs(s.Cond)
		case *ir.If:
			exprs(s.Cond)
		}
	})
	return found
}
