package cuda

import (
	"os"

	"github.com/tilego/tilego/ir"
)

// Ping-pong (FlashAttention-3's schedule for two consumer warpgroups): in a
// warp-specialized loop whose body needs no barrier of all consumers, each
// warpgroup waits for its turn before issuing a top-level wgmma and hands
// the turn to the other as soon as the instructions are issued, before
// waiting for their results. The tensor cores then alternate between the
// warpgroups' multiplies, and each warpgroup's element-wise work (the
// softmax) runs while the other's multiply computes.
//
// Named barriers turnBar and turnBar+1 are warpgroup 0's and 1's turns:
// 256 arrivals complete one, the 128 threads of the warpgroup whose turn it
// is (bar.sync) and the other's 128 (bar.arrive). Warpgroup 1 arrives once
// before the loop, so warpgroup 0 goes first, and warpgroup 0 takes one
// turn after it, so the last arrival is consumed. Both run the same
// iterations (the loop's bounds are the producer's, pure expressions), so
// the arrivals match.
const turnBar = 2 // 0 is __syncthreads', 1 the consumers' (ws.go)

// turnState is the ping-pong loop being emitted and the Gemm in it (if
// any) that takes a turn now.
type turnState struct {
	loop *ir.For
	gemm *ir.Gemm
}

// pingPongWanted: the program asks (ir.Kernel.PingPong, a config's
// PingPong); TILEGO_PINGPONG=1 or 0 overrides it.
func pingPongWanted(c *compilation) bool {
	switch os.Getenv("TILEGO_PINGPONG") {
	case "1":
		return true
	case "0":
		return false
	}
	return c.f.Kernel.PingPong
}

// pingPong says whether the producer's loop, whose body apart from its
// prefetches is rest, takes turns: it is wanted, there are two consumer
// warpgroups, and a wgmma is a statement of the body itself (one nested in
// an If could be skipped by one warpgroup and not the other).
func (e *emitter) pingPong(rest []ir.Stmt) bool {
	if !pingPongWanted(e.c) || e.c.ws.consumers != 256 || hasDeferred(e.c.ws.loop) {
		return false
	}
	for _, st := range rest {
		if g, ok := st.(*ir.Gemm); ok && e.c.wgmma[g] {
			return true
		}
	}
	return false
}

// turnStmts emits the loop body with its top-level wgmmas taking turns.
func (e *emitter) turnStmts(loop *ir.For, rest []ir.Stmt) {
	e.turns = &turnState{loop: loop}
	e.c.pingPong = true
	for _, st := range rest {
		if e.err != nil {
			break
		}
		g, _ := st.(*ir.Gemm)
		e.turns.gemm = g
		e.stmt(st)
	}
	e.turns = nil
}

func (e *emitter) turnBegin(g *ir.Gemm) {
	if e.turns != nil && e.turns.gemm == g {
		e.line("tl::bar_sync(%d + tid / 128, 256); // this warpgroup's turn", turnBar)
	}
}

func (e *emitter) turnEnd(g *ir.Gemm) {
	if e.turns != nil && e.turns.gemm == g {
		e.line("tl::bar_arrive(%d - tid / 128, 256); // the other's turn", turnBar+1)
	}
}

// noBarrierInTurns fails the compilation where a ping-pong loop's body
// would need a barrier of all consumer threads: a warpgroup waiting there
// for the other, which waits for its turn, would deadlock. pingPong's
// caller only asks for turns in bodies that write no shared memory, so
// this guards the emitter's own bookkeeping.
func (e *emitter) noBarrierInTurns() {
	if e.turns != nil {
		e.fail(errAt("Pipelined", e.turns.loop.P, "ping-pong: the loop body needs a barrier of all consumer warpgroups, which taking turns would deadlock"))
	}
}
