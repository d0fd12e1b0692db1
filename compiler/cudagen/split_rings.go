package cudagen

import "github.com/tilego/tilego/ir"

// Split rings (sm_90a, with a producer). A pipelined loop with Deferred
// statements (FlashAttention's Overlap: P·V of tile j-1 after Q·Kᵀ of tile
// j) reads the tiles its Deferred body uses (V) an iteration later than
// the others (K). On one ring of slots holding both, a slot is freed only
// after the late read, so the ring needs a buffer more than the stages for
// the next K to have somewhere to land. With a ring each, K's slot is
// freed after its own iteration and V's one iteration later, and each
// ring has just the stages: at d128 with 128-key tiles that is 160 KB of
// shared memory in place of 224, room for 176-key tiles or a persistent
// walk's two query buffers. Each ring has its full and empty mbarriers;
// the consumers wait for K's slot at the iteration's start and for V's
// where the Deferred body starts.

// splitRing is a loop's two rings: the copies its Deferred body's tiles
// take (late) and the others (early).
type splitRing struct {
	early, late []*ir.Copy
}

// ringSize is the number of buffers of each of f's rings: its stages,
// plus one when Deferred statements read its one ring an iteration late.
func (c *compilation) ringSize(f *ir.For) int {
	if c.split[f] != nil {
		return f.Stages
	}
	return ringSize(f)
}

// rings is how many rings of barriers f's loads complete on: two when
// split.
func (c *compilation) rings(f *ir.For) int {
	if c.split[f] != nil {
		return 2
	}
	return 1
}

// planSplit picks the loop whose rings split: the one the producer will
// run (wsLoopAhead), when it has Deferred statements, its prefetched tiles each
// read either only in the Deferred body or only outside it, some of each.
func planSplit(c *compilation) {
	c.split = map[*ir.For]*splitRing{}
	f, _ := wsLoopAhead(c)
	if f == nil {
		return
	}
	if !hasDeferred(f) || !c.opts.Switches.Choose(SwitchSplitRing, true) {
		return
	}
	late := map[*ir.Buffer]bool{}
	for _, st := range f.Body {
		if d, ok := st.(*ir.Deferred); ok {
			for _, s := range ownStmts(d.Body, nil) {
				for b := range stmtBuffers(s) {
					late[b] = true
				}
			}
		}
	}
	early := map[*ir.Buffer]bool{}
	for _, st := range f.Body {
		if _, ok := st.(*ir.Deferred); !ok {
			for b := range stmtBuffers(st) {
				early[b] = true
			}
		}
	}
	sr := &splitRing{}
	for _, cp := range c.hoistable(f) {
		b := cp.Dst.Buf
		if !c.pureAll(cp.Src.Start) || !tmaBoxOK(c, cp.Src, bufLayout(b)) {
			return
		}
		switch {
		case late[b] && !early[b]:
			sr.late = append(sr.late, cp)
		case early[b] && !late[b]:
			sr.early = append(sr.early, cp)
		default:
			return
		}
	}
	if len(sr.early) > 0 && len(sr.late) > 0 {
		c.split[f] = sr
	}
}

// checkSplit: a loop planned with split rings got its producer; without
// one its ring would be a buffer short.
func checkSplit(c *compilation) error {
	for f := range c.split {
		if c.ws == nil || c.ws.loop != f || c.tma[f] == nil {
			return errAt("pipelined", f.P, "internal: the loop's rings were split for a producer warpgroup it did not get")
		}
	}
	return nil
}

// splitWaitLate waits, in a Deferred body (the loop variable v naming its
// own iteration), for the late ring's slot of that iteration.
func (e *emitter) splitWaitLate(f *ir.For) {
	if e.c.split[f] == nil || e.c.ws == nil || e.c.ws.loop != f {
		return
	}
	l := e.c.tma[f]
	pos := e.ringPos(l, f.Var.Name)
	R := e.c.ringSize(f)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * (%s %% %d), (%s / %d) & 1);", l.lateBar, pos, R, pos, R)
}
