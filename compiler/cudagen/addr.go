package cudagen

import (
	"fmt"
	"strings"
)

// Shared-memory addresses in hot loops are split into a per-thread part,
// computed once, and a compile-time part that becomes an immediate or one
// XOR: otherwise the compiler hoists one full address per access out of
// the main loop and runs out of registers.
//
// Element (R+rc, C+cc), with R, C per thread and rc, cc constants, lies at
// L + (X ^ lo(cc)) + imm(rc, cc): L is the thread's panel and row, X its
// swizzled chunk, lo the low chunk bits of cc that the swizzle mixes, imm
// the rest. That holds when the constants do not disturb the swizzle or
// cross panels differently per thread; holds checks it for every thread
// and every constant the kernel uses before the emitter relies on it.

// swzGo is tl::swz in Go: the byte offset of (row, col) in a shared tile.
func (sb *smemBuf) swzGo(row, col int) int {
	b := col * sb.eb
	p, w := b/sb.panelW, b%sb.panelW
	chunk := (w >> 4) ^ ((row / sb.swzRep) % sb.swzN)
	return p*sb.rows*sb.panelW + row*sb.panelW + chunk<<4 + w&15
}

// laneSplit is the per-thread part of an address split.
type laneSplit struct {
	sb               *smemBuf
	rowLane, colLane func(tid int) int // the per-thread row and column
	rowC, colC       string            // the same as C expressions
}

func (l laneSplit) lx(tid int) (L, X int) {
	sb := l.sb
	r, c := l.rowLane(tid), l.colLane(tid)
	b := c * sb.eb
	p, w := b/sb.panelW, b%sb.panelW
	return p*sb.rows*sb.panelW + r*sb.panelW, ((w>>4)^((r/sb.swzRep)%sb.swzN))<<4 + w&15
}

func (l laneSplit) lo(cc int) int {
	return ((cc * l.sb.eb % l.sb.panelW >> 4) % l.sb.swzN) << 4
}

// imm is the constant part for (rc, cc), read off thread 0.
func (l laneSplit) imm(rc, cc int) int {
	L, X := l.lx(0)
	return l.sb.swzGo(l.rowLane(0)+rc, l.colLane(0)+cc) - L - (X ^ l.lo(cc))
}

// holds verifies the split for all threads and constants.
func (l laneSplit) holds(threads int, rcs, ccs []int) bool {
	for _, cc := range ccs {
		if cc*l.sb.eb%16 != 0 {
			return false
		}
	}
	for _, rc := range rcs {
		for _, cc := range ccs {
			imm, lo := l.imm(rc, cc), l.lo(cc)
			for tid := range threads {
				L, X := l.lx(tid)
				if L+(X^lo)+imm != l.sb.swzGo(l.rowLane(tid)+rc, l.colLane(tid)+cc) {
					return false
				}
			}
		}
	}
	return true
}

// declareSplit emits the per-thread parts L and X.
func (e *emitter) declareSplit(l laneSplit, name string) {
	sb := l.sb
	e.line("const int %s_row = ((%s) * %d / %d) * %d + (%s) * %d;", name, l.colC, sb.eb, sb.panelW, sb.rows*sb.panelW, l.rowC, sb.panelW)
	e.line("const int %s_x = (((((%s) * %d %% %d) >> 4) ^ (((%s) / %d) %% %d)) << 4) + (((%s) * %d) & 15);",
		name, l.colC, sb.eb, sb.panelW, l.rowC, sb.swzRep, sb.swzN, l.colC, sb.eb)
}

// at is the C expression of the byte offset of (R+rc, C+cc).
func (l laneSplit) at(name string, rc, cc int) string {
	lo, imm := l.lo(cc), l.imm(rc, cc)
	x := name + "_x"
	if lo != 0 {
		x = fmt.Sprintf("(%s ^ %d)", x, lo)
	}
	parts := []string{name + "_row", x}
	if imm != 0 {
		parts = append(parts, fmt.Sprint(imm))
	}
	return strings.Join(parts, " + ")
}
