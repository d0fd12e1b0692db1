package cuda

import "github.com/tilego/tilego/ir"

// ticket lowers Ticket. Every thread's global writes so far are done
// (TMA stores completed, not just read out of shared memory) before the
// barrier; then one thread fences at GPU scope, so that they are ordered
// before its atomic add (release), and fences again after it, so that what
// the block reads next is ordered after the add (acquire); the barrier
// after it hands the count and that order to the other threads. (The
// verifier keeps tickets out of Parallel loops and warpgroup blocks.)
func (e *emitter) ticket(s *ir.Ticket) {
	if len(e.c.tmaStores) > 0 || e.c.halves != nil {
		e.line("tl::bulk_wait<0>(); // TMA stores written, not only read out")
	}
	e.flushAsync()
	e.sync()
	e.line("if (tid == 0) { __threadfence(); %s = atomicAdd(&%s, 1); __threadfence(); }", e.ref(s.Dst.Buf, s.Dst.Start), e.ref(s.Counter.Buf, s.Counter.Start))
	e.dirty = true
	e.sync()
}
