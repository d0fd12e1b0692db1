package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// Spread loops (ir.Spread) deal their values out to the grid's blocks.
// Plainly, block b runs Start+b and then every grid-th value. A
// persistent walk whose tiles the producer loads (persistent_loads.go) draws them
// instead: equal tiles run at different speeds on different SMs (an H100's
// busiest SM ran 5-7% above the mean of a static walk at 512 tokens, where
// cuDNN's ran 3.5%), and a block that draws its next tile when it is ready
// for one takes fewer on a slow SM.
//
// The producer's thread draws. Block b's first value is Start+b; each next
// is Start + grid + n, n drawn from a counter by atomicAdd. Before its
// tile's loads the producer writes the value into the walk slot's ticket,
// which the slot's full mbarrier publishes (arrive has release semantics,
// the consumers' wait acquire), and the consumers read their tile there
// (each warp's lane 0, which frees the slot, for the warp: tl::lane0_read). A
// value past the end ends the walk: the producer publishes it with a plain
// arrival and leaves, the consumers leave on reading it. Every block draws
// until it gets such a value, so the launch draws exactly Stop-Start
// values, and the block that draws the last (n = Stop-Start-1) puts the
// counter back to zero for the next launch. The counter is one int each
// launch (Launch) allocates zeroed and passes after every other parameter;
// one Launch must not run on two streams at once.

// counterParam is the kernel parameter that holds a drawn walk's counter.
const counterParam = "walk_counter"

// spreadDrawn: the walk draws its tiles from the counter (planWalk).
func (c *compilation) spreadDrawn(f *ir.For) bool {
	return c.ws != nil && c.ws.walk != nil && c.ws.walk.draw && c.ws.walk.loop == f
}

// wantDraw: the program asks a Spread walk to draw (tl's Draw, a config's
// Draw); SwitchDraw overrides it.
func wantDraw(c *compilation, f *ir.For) bool {
	return f.Kind == ir.Spread && c.opts.Switches.Choose(SwitchDraw, c.f.Kernel.Draw)
}

// blockLinear and blockCount are the block's linear index and the grid's
// block count, as the driver numbers them.
const (
	blockLinear = "(int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))"
	blockCount  = "(int)(gridDim.x * gridDim.y * gridDim.z)"
)

// spreadCount names a Spread loop's count of iterations run so far (walk
// slots, turns).
func spreadCount(f *ir.For) string { return f.Var.Name + "_n" }

// dealtOpen opens a dealt Spread loop: over its count of iterations, each
// value computed from it. (A loop over the values themselves, stepping by
// the grid, ran 7-14% slower at 2k tokens with ping-pong on an H100.)
func (e *emitter) dealtOpen(f *ir.For) {
	n := spreadCount(f)
	e.open("for (int %s = 0; %s < %s; ++%s)", n, n, e.dealtTrips(f), n)
	e.line("const int %s = %s + %s + %s * %s;", f.Var.Name, e.expr(f.Start), blockLinear, n, blockCount)
}

// dealtTrips is how many values of a dealt Spread loop the block runs.
func (e *emitter) dealtTrips(f *ir.For) string {
	return fmt.Sprintf("(%s - %s - %s + %s - 1) / %s", e.expr(f.Stop), e.expr(f.Start), blockLinear, blockCount, blockCount)
}

// spreadOpen opens a Spread loop on the consumers' side (or of a kernel
// without a producer). Drawn, inside a scope that holds its iteration
// count, each iteration starts by waiting for its walk slot and reading
// the tile there, and a value past the end leaves the loop.
func (e *emitter) spreadOpen(f *ir.For) {
	v, n := f.Var.Name, spreadCount(f)
	if !e.c.spreadDrawn(f) {
		e.dealtOpen(f)
		return
	}
	w := e.c.ws.walk
	e.open("")
	e.line("int %s = 0; // the walk's tiles so far", n)
	e.open("for (;; ++%s)", n)
	e.walkWait(w)
	slot, _ := e.walkSlot(w)
	e.line("const int %s = tl::lane0_read((volatile int*)(smem + %d) + %s);", v, w.tickets, slot)
	e.line("if (%s >= %s) break;", v, e.expr(f.Stop))
	w.waited = true
}

// spreadClose closes what spreadOpen opened; a drawn walk's consumers take
// warpgroup 1's last turn here, since only the value past the end tells
// them the tile before was their last (pipelined, emit_pipe.go).
func (e *emitter) spreadClose(f *ir.For) {
	e.close()
	if !e.c.spreadDrawn(f) {
		return
	}
	e.c.ws.walk.waited = false
	if e.walkTurnOwed {
		e.line("if (tid < 128 && %s > 0) tl::bar_sync(%d, 256); // warpgroup 1's last turn of the walk, so no arrival is left over", spreadCount(f), turnBar)
		e.walkTurnOwed = false
	}
	e.close()
}

// spreadProducer opens the producer's drawn walk and issues its walk
// loads; the caller emits the pipelined loop and closes it.
func (e *emitter) spreadProducer(f *ir.For) {
	v, n := f.Var.Name, spreadCount(f)
	w := e.c.ws.walk
	e.line("int ticket = %s + %s; // the first tile is the block's own", e.expr(f.Start), blockLinear)
	e.open("for (int %s = 0;; ++%s)", n, n)
	e.line("const int %s = ticket;", v)
	e.walkAwait(w)
	slot, _ := e.walkSlot(w)
	e.line("((volatile int*)(smem + %d))[%s] = %s;", w.tickets, slot, v)
	e.open("if (%s >= %s)", v, e.expr(f.Stop))
	e.line("if (%s == %s + %s - 1) atomicExch(%s, 0); // the launch's last draw: zero for the next", v, e.expr(f.Stop), blockCount, counterParam)
	e.line("tl::mbar_arrive(tl::smem_addr(smem + %d) + 8 * %s); // the end, published", w.full, slot)
	e.line("break;")
	e.close()
	e.line("ticket = %s + %s + atomicAdd(%s, 1); // drawn now, read a tile later", e.expr(f.Start), blockCount, counterParam)
	e.walkSets(f)
	e.walkLoad(w)
}

// walkFirst and walkLast are the conditions that a walk is at its first
// and at its last tile; a drawn walk knows its last only past it (ok
// false).
func (e *emitter) walkFirst(f *ir.For) string {
	if f.Kind == ir.Spread {
		return spreadCount(f) + " == 0"
	}
	return fmt.Sprintf("%s == %s", f.Var.Name, e.expr(f.Start))
}

func (e *emitter) walkLast(f *ir.For) (cond string, ok bool) {
	switch {
	case e.c.spreadDrawn(f):
		return "", false
	case f.Kind == ir.Spread:
		return fmt.Sprintf("%s == %s - 1", spreadCount(f), e.dealtTrips(f)), true
	}
	return fmt.Sprintf("%s == %s - 1", f.Var.Name, e.expr(f.Stop)), true
}

// lateStart delays the blocks that walk one value fewer of the kernel's
// dealt Spread walk (its last round partial), by the kernel's Late
// cycles (tl's LateStart); SwitchLate off leaves it out. A drawn walk has
// no such blocks.
func (e *emitter) lateStart(k *ir.Kernel) {
	if k.LateStart <= 0 || !e.c.opts.Switches.Choose(SwitchLate, true) {
		return
	}
	for _, s := range k.Body {
		f, ok := s.(*ir.For)
		if !ok || f.Kind != ir.Spread || e.c.spreadDrawn(f) {
			continue
		}
		r := fmt.Sprintf("((%s - %s) %% %s)", e.expr(f.Stop), e.expr(f.Start), blockCount)
		e.line("if (%s != 0 && %s >= %s) tl::spin_cycles(%d); // the blocks that walk a value fewer start late", r, blockLinear, r, k.LateStart)
		return
	}
}
