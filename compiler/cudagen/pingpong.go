package cudagen

import (
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

// In a loop with Deferred statements (tl's Defer) a turn lasts from a
// top-level wgmma through the Deferred statements right after it, so a
// warpgroup issues Q·Kᵀ of tile j and the deferred P·V of tile j-1 in one
// turn, as FlashAttention-3 does, and its softmax runs under the other's.
// The turn is handed over after the next wgmma wait (of Q·Kᵀ), not right
// after the issue: with the bar.arrive between the P·V's issue and that
// wait, ptxas (CUDA 13.0) serialized every wgmma of the kernel (C7514,
// seen on the H100 on 2026-11-23), which made the schedule 1.2-1.9×
// slower than without turns.

// turnState is the ping-pong loop being emitted and the Gemm in it (if
// any) that takes a turn now.
type turnState struct {
	loop *ir.For
	gemm *ir.Gemm
	hold bool // the turn goes on through the Deferred statements after gemm
	owed bool // the turn is handed over after the next wgmma wait
}

// pingPongWanted: the program asks (ir.Kernel.PingPong, a config's
// PingPong); SwitchPingPong overrides it.
func pingPongWanted(c *compilation) bool {
	return c.opts.Switches.Choose(SwitchPingPong, c.f.Kernel.PingPong)
}

// planPingPong decides whether the producer's loop takes turns: it is
// wanted, there are two consumer warpgroups, the body apart from its
// prefetches writes no shared memory of its own (the warpgroups run free
// of each other), and a wgmma is a statement of the body itself (one
// nested in an If could be skipped by one warpgroup and not the other).
func planPingPong(c *compilation) {
	if c.ws == nil || !pingPongWanted(c) || c.ws.consumers != 256 {
		return
	}
	rest, isHoisted := producerBody(c)
	if touches(ownStmts(rest, isHoisted), false) {
		return
	}
	for _, st := range rest {
		if g, ok := st.(*ir.Gemm); ok && c.wgmma[g] {
			c.turns = true
			return
		}
	}
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
	if e.turns != nil && e.turns.gemm == g && !e.turns.hold {
		e.turnHandOver()
	}
}

func (e *emitter) turnHandOver() {
	e.line("tl::bar_arrive(%d - tid / 128, 256); // the other's turn", turnBar+1)
}

// turnNext notes the top-level statement of a loop with Deferred
// statements about to be emitted, body[i]: a wgmma takes a turn, held
// through the Deferred statements that follow it.
func (e *emitter) turnNext(body []ir.Stmt, i int) {
	if e.turns == nil {
		return
	}
	g, _ := body[i].(*ir.Gemm)
	e.turns.gemm = g
	e.turns.hold = false
	if g != nil && i+1 < len(body) {
		_, e.turns.hold = body[i+1].(*ir.Deferred)
	}
}

// turnAfterDeferred ends the turn after the Deferred statements that
// followed a wgmma, once the next statement is not one of them: it is
// handed over at the next wait (turnPaid).
func (e *emitter) turnAfterDeferred(body []ir.Stmt, i int) {
	if e.turns == nil || !e.turns.hold {
		return
	}
	if i+1 < len(body) {
		if _, more := body[i+1].(*ir.Deferred); more {
			return
		}
	}
	e.turns.gemm, e.turns.hold, e.turns.owed = nil, false, true
}

// turnPaid hands an owed turn over (after a wgmma wait, or at the end of
// the body when none came).
func (e *emitter) turnPaid() {
	if e.turns != nil && e.turns.owed {
		e.turnHandOver()
		e.turns.owed = false
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
