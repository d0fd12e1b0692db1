package cudagen

import "github.com/tilego/tilego/ir"

// ticket lowers Ticket. Every thread's global writes so far are done
// (TMA stores completed, not just read out of shared memory) before the
// barrier; then one thread adds with acquire-release semantics at GPU
// scope (tl::ticket), so that they are ordered before its add, and what
// the block reads next after it; the barrier after it hands the count and
// that order to the other threads. (The verifier keeps tickets out of
// Parallel loops and warpgroup blocks.)
func (e *emitter) ticket(s *ir.Ticket) {
	e.writesDone()
	e.line("if (tid == 0) %s = tl::ticket(&%s);", e.ref(s.Dst.Buf, s.Dst.Start), e.ref(s.Counter.Buf, s.Counter.Start))
	e.written()
	e.sync()
}

// signal lowers Signal: the block's global writes done and a barrier, as
// for a ticket, then one thread adds with release semantics and no wait
// (tl::signal), and no barrier after. The thread is the first of the
// block's last warp: in a kernel whose warpgroups take roles that is the
// one that waits for the other's hand-off at the next page (MLA's
// warpgroup 1), where the add's wait for the writes costs nothing;
// warpgroup 0's thread 0 with a barrier after cost MLA's split kernel 13%
// (H200, 2026-11-25, docs/perf.md).
func (e *emitter) signal(s *ir.Signal) {
	e.writesDone()
	threads := e.c.f.Kernel.Threads
	if e.c.ws != nil {
		threads = e.c.ws.consumers
	}
	e.line("if (tid == %d) tl::signal(&%s);", threads-32, e.ref(s.Counter.Buf, s.Counter.Start))
}

// writesDone ends the block's writes before a ticket or signal: TMA
// stores and reductions completed (not only read out of shared memory), cp.async copies
// landed, then a barrier.
func (e *emitter) writesDone() {
	if len(e.c.tmaStores) > 0 || len(e.c.tmaReduces) > 0 || e.c.halves != nil {
		e.line("tl::bulk_wait<0>(); // TMA stores and reductions written, not only read out")
	}
	e.flushAsync()
	e.sync()
}

// waitCount lowers WaitCount: one thread polls the counter with acquire
// loads (tl::wait_count: backing off, and trapping after about a minute
// rather than hanging), then the barrier hands what it saw to the block.
// The barrier before it keeps the block's earlier reads of a tile it
// guards from passing it: nothing does now, as WaitCount leads the blocks
// that use it.
func (e *emitter) waitCount(s *ir.WaitCount) {
	e.line("if (tid == 0) tl::wait_count(&%s, %s);", e.ref(s.Counter.Buf, s.Counter.Start), e.expr(s.Min))
	e.sync()
}
