package cudagen

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Warp specialization (sm_90a, on top of TMA), where the program asks for
// it (tl's WarpSpecialize, the kernels' WS config field) or
// Options.WarpSpecialize does. A kernel whose one top-level
// pipelined loop prefetches by TMA gets a producer warpgroup after its
// threads: one of its threads walks the loop's iterations, waits until the
// consumers have freed a ring slot (the slot's "empty" mbarrier), and
// issues the next TMA loads into it. The kernel's own threads, the
// consumers, run the program as before except that they no longer issue
// the prefetches: each iteration waits on its slot's "full" barrier and,
// at the end, each warp arrives on its "empty" one. Consumers synchronize among
// themselves on a named barrier, since the producer has left. With two
// consumer warpgroups the producer gives its registers to them
// (setmaxnreg: 40 for the producer, 232 for each consumer thread). In a
// persistent walk the producer also loads the tiles each walk iteration
// starts with (persistent_loads.go).

// wsPlan is a warp-specialized kernel's plan.
type wsPlan struct {
	loop      *ir.For
	consumers int       // the program's threads
	empty     int       // shared offset of the loop's stages' empty barriers
	lateEmpty int       // with split rings (split_rings.go), the late ring's
	regs      [2]int    // setmaxnreg of the producer and the consumers (0: none)
	walk      *walkLoad // the walk's tile loads the producer issues (persistent_loads.go), or nil
	// hand is the shared offset of the warpgroup blocks' mbarriers
	// (planHandBars: handBars of them), or -1.
	hand int
}

// wsWanted: the program asks (ir.Kernel.WarpSpecialize, a config's WS) or
// Options.WarpSpecialize does; SwitchWS overrides both.
func wsWanted(c *compilation) bool {
	return c.opts.Switches.Choose(SwitchWS, c.opts.WarpSpecialize || c.f.Kernel.WarpSpecialize)
}

// planWS picks the loop the producer runs: the kernel's only TMA loop, a
// statement of the kernel body itself (so it runs once, and the producer
// knows its bounds) or of a serial loop there (a persistent kernel's walk
// over its tiles, which the producer walks too), whose bounds and copy
// addresses need nothing the consumers compute.
func planWS(c *compilation) {
	if len(c.tma) != 1 || !wsWanted(c) {
		return
	}
	k := c.f.Kernel
	var loop, outer *ir.For
	for f, l := range c.tma { // the one
		loop, outer = f, l.outer
	}
	if !slices.Contains(k.Body, ir.Stmt(loop)) && outer == nil {
		return
	}
	if outer != nil && (!c.pureExpr(outer.Start) || !c.pureExpr(outer.Stop)) {
		return
	}
	if k.Threads%128 != 0 || k.Threads+128 > 1024 || !c.pureExpr(loop.Start) || !c.pureExpr(loop.Stop) {
		return
	}
	for cp := range c.tma[loop].copies {
		if !c.pureAll(cp.Src.Start) {
			return
		}
	}
	if align(c.smem.total, 8)+8*c.rings(loop)*c.ringSize(loop) > ir.DefaultLimits.MaxSharedBytes {
		return
	}
	c.smem.total = align(c.smem.total, 8)
	w := &wsPlan{loop: loop, consumers: k.Threads, empty: c.smem.total}
	c.smem.total += 8 * c.ringSize(loop)
	if c.rings(loop) == 2 {
		w.lateEmpty = c.smem.total
		c.smem.total += 8 * c.ringSize(loop)
	}
	// One block an SM. Two blocks of one consumer warpgroup each (launch
	// bounds 256, 2; setmaxnreg 24/232) were measured on an H100 on
	// 2026-11-23 and lost at every short sweep point (docs/perf.md), and
	// ptxas kept such kernels to 128 registers, too few for d256's wgmma.
	if k.Threads == 256 { // 384 threads start at 168 registers: 128·40 + 256·232 fit in 64K
		w.regs = [2]int{40, 232}
	}
	c.ws = w
}

// wsLoopAhead is, before shared memory is placed, the loop planWS will
// give a producer by its rules, and the walk it is a statement of (nil if
// none): sm_90a with TMA on, asked for, whole consumer warpgroups, the
// kernel's only pipelined loop with prefetches, at top level or in a
// top-level serial loop, with bounds any thread can compute. Nil when
// there is none. The walk loads and split rings (persistent_loads.go, split_rings.go), which
// change how shared memory is placed, are planned for this loop.
func wsLoopAhead(c *compilation) (loop, walk *ir.For) {
	k := c.f.Kernel
	if c.opts.Arch != "sm_90a" || !tmaEnabled(c.opts) || !wsWanted(c) || k.Threads%128 != 0 || k.Threads+128 > 1024 {
		return nil, nil
	}
	var loops []*ir.For
	ir.Walk(k.Body, func(s ir.Stmt) {
		if f, ok := s.(*ir.For); ok && f.Kind == ir.Pipelined && f.Stages >= 2 && len(c.hoistable(f)) > 0 {
			loops = append(loops, f)
		}
	})
	if len(loops) != 1 {
		return nil, nil
	}
	f := loops[0]
	outer, _ := loopNesting(k.Body)
	o := outer[f]
	if o == nil && !slices.Contains(k.Body, ir.Stmt(f)) {
		return nil, nil
	}
	if !c.pureExpr(f.Start) || !c.pureExpr(f.Stop) || o != nil && (!c.pureExpr(o.Start) || !c.pureExpr(o.Stop)) {
		return nil, nil
	}
	return f, o
}

// pureExpr: e reads no on-chip buffer and no output, so any thread can
// evaluate it at any time; a walk's variables (persistent_vars.go) count, since
// the producer sets them too.
func (c *compilation) pureExpr(e ir.Expr) bool { return pureWith(e, c.walkVars().vars) }

// pureAll: every one of es is pureExpr (a copy's start, say).
func (c *compilation) pureAll(es []ir.Expr) bool {
	return !slices.ContainsFunc(es, func(e ir.Expr) bool { return !c.pureExpr(e) })
}

// pureWith is pureExpr with vars the local buffers that count.
func pureWith(e ir.Expr, vars map[*ir.Buffer]bool) bool {
	pure := true
	ir.WalkExpr(e, func(x ir.Expr) {
		if l, ok := x.(*ir.Load); ok && !vars[l.Buf] && (l.Buf.Scope != ir.Global || l.Buf.Output) {
			pure = false
		}
	})
	return pure
}

// launchThreads is the block size: the program's threads, and the
// producer warpgroup when there is one.
func (c *compilation) launchThreads() int {
	if c.ws != nil {
		return c.f.Kernel.Threads + 128
	}
	return c.f.Kernel.Threads
}

// wsSplit initializes the ring's barriers, then sends the producer
// warpgroup into its loop; the consumers go on with the program.
//
// Around a serial loop (a persistent kernel), the producer walks that loop
// too, and the ring runs on across its iterations: both sides count the
// iterations done so far in ring, and iteration v of the pipelined loop
// is ring position v - rb, rb = lo - ring.
func (e *emitter) wsSplit() {
	w, f := e.c.ws, e.c.ws.loop
	l, S, T, v := e.c.tma[f], e.c.ringSize(f), w.consumers, f.Var.Name
	freers := T / 32 // one lane per consumer warp, of both blocks in a cluster (cluster.go)
	if e.c.cluster {
		freers *= 2
	}
	rings := []barRing{{l.bar, S, 1}, {w.empty, S, freers}} // full: the producer's expect_tx
	sr := e.c.split[f]
	if sr != nil {
		rings = append(rings, barRing{l.lateBar, S, 1}, barRing{w.lateEmpty, S, freers})
	}
	if wl := w.walk; wl != nil {
		rings = append(rings, barRing{wl.full, wl.stages, 1}, barRing{wl.empty, wl.stages, T / 32})
	}
	if w.hand >= 0 { // every thread of the warpgroup that signals, or meets
		rings = append(rings, barRing{w.hand, w.handBars(), 128})
	}
	e.initBars(rings...)
	e.open("if (tid >= %d)", T)
	if w.regs[0] > 0 {
		e.line("tl::setmaxnreg_dec<%d>();", w.regs[0])
	}
	e.open("if (tid == %d)", T)
	if e.c.cluster {
		e.line("const int crank = (int)tl::cluster_rank();")
	}
	if o := l.outer; o != nil {
		e.line("int ring = 0;")
		switch {
		case e.c.spreadDrawn(o):
			e.spreadProducer(o)
		case o.Kind == ir.Spread:
			e.dealtOpen(o)
		default:
			e.open("for (int %s = %s; %s < %s; ++%s)", o.Var.Name, e.expr(o.Start), o.Var.Name, e.expr(o.Stop), o.Var.Name)
		}
		if !e.c.spreadDrawn(o) {
			e.walkSets(o)
			if w.walk != nil {
				e.walkIssue(w.walk)
			}
		}
	}
	if l.outer == nil {
		e.producerSets(f, l)
	}
	e.line("const int lo = %s, hi = %s;", e.expr(f.Start), e.expr(f.Stop))
	e.ringBase(l)
	e.open("for (int %s = lo; %s < hi; ++%s)", v, v, v)
	pos := e.ringPos(l, v)
	slot := fmt.Sprintf("(%s %% %d)", pos, S)
	// A fresh barrier has completed the phase of parity 1, so the first
	// round's waits pass: every slot starts free.
	issue := func(empty, full int, copies []*ir.Copy) {
		for _, cp := range copies {
			e.stage[cp.Dst.Buf] = slot
		}
		e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * %s, ((%s / %d) & 1) ^ 1);", empty, slot, pos, S)
		e.multicast = e.c.cluster // the ring's tiles, not the walk's (cluster.go)
		e.tmaIssue(full, l.copies, copies, slot, "")
		e.multicast = false
		for _, cp := range copies {
			delete(e.stage, cp.Dst.Buf)
		}
	}
	if wl := w.walk; wl != nil && l.outer != nil && sr == nil && S > 1 && e.c.f.Kernel.FirstTilesFirst {
		e.firstFill(pos, wl.full, l.bar)
	}
	if sr != nil { // K's slot frees an iteration before V's (split_rings.go)
		issue(w.empty, l.bar, sr.early)
		issue(w.lateEmpty, l.lateBar, sr.late)
	} else {
		issue(w.empty, l.bar, e.c.smem.hoisted[f])
	}
	e.close()
	if l.outer != nil {
		e.ringAdvance(l)
		e.close()
	}
	e.close()
	e.line("return;")
	e.close()
	if w.regs[1] > 0 {
		e.line("tl::setmaxnreg_inc<%d>();", w.regs[1])
	}
	if l.outer != nil {
		e.line("int ring = 0; // the ring positions used so far (ringPos)")
	}
}

// firstFill, where the program asks (ir.Kernel.FirstTilesFirst), holds the
// ring's second fill, at a kernel's start, until the walk's first tile and
// the ring's first slot have landed: every block asks for its first tiles
// at once, so the DRAM is the bound, and the first multiply needs only
// those two (MLA's split kernel: 72 KB of Q and a 72 KB page; the
// second page issued with them delays both, 0.1-0.6% at b64 kv8k on an
// H200). Only in the walk's first
// iteration (ring 0): there both barriers are in their first phase, which
// parity 0 names; later a walk tile's barrier may have moved on two phases.
func (e *emitter) firstFill(pos string, walkFull, ringFull int) {
	e.open("if (ring == 0 && %s == 1)", pos)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d), 0); // the first tiles first", walkFull)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d), 0);", ringFull)
	e.close()
}

// wsRelease frees iteration iter's slot of a ring of R for the producer:
// one arrival per warp, once all its lanes are done (256 arrivals on one
// word would queue behind each other every iteration).
func (e *emitter) wsRelease(iter string, R int) { e.wsReleaseAt(e.c.ws.empty, iter, R) }

// wsReleaseAt is wsRelease on the ring of empty barriers at shared offset
// empty (a split loop's late ring: split_rings.go).
func (e *emitter) wsReleaseAt(empty int, iter string, R int) {
	w := e.c.ws
	slot := fmt.Sprintf("(%s %% %d)", e.ringPos(e.c.tma[w.loop], iter), R)
	e.line("__syncwarp();")
	bar := fmt.Sprintf("tl::smem_addr(smem + %d) + 8 * %s", empty, slot)
	if e.c.cluster { // the slot is both blocks' (cluster.go)
		e.line("if (lane == 0) { tl::mbar_arrive(%s); tl::mbar_arrive_cluster(%s, tl::cluster_rank() ^ 1); }", bar, bar)
		return
	}
	e.line("if (lane == 0) tl::mbar_arrive(%s);", bar)
}
