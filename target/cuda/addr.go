package cuda

import (
	"fmt"
	"strings"
)

// Shared-memory addresses in hot loops are split into a per-thread part,
// computed once, and a compile-time part that becomes an immediate or one
// XOR: otherwise the compiler hoists one full address per access out of
// the main loop and runs out of registers.
//
// For a swizzled tile, element (R+rc, C+cc) with R, C per thread and rc, cc
// constants lies at R·RB + rc·RB + ((X ^ lo(cc)) + hi(cc)), where
// X = ((C·eb/16) ^ s(R))·16 and lo/hi split cc's chunk index at the swizzle
// width. That holds when the constant parts do not disturb the swizzle
// (rc a multiple of the swizzle period, chunk bits disjoint); splitAddr
// checks it for every thread and constant the kernel uses before relying
// on it.

// swzGo is tl::swz in Go: the byte offset of (row, col) in a shared tile.
func (sb *smemBuf) swzGo(row, col int) int {
	b := col * sb.eb
	chunk := (b >> 4) ^ ((row / sb.swzRep) % sb.swzN)
	return row*sb.cols*sb.eb + chunk<<4 + b&15
}

// laneSplit is the per-thread part of an address split.
type laneSplit struct {
	sb               *smemBuf
	rowLane, colLane func(tid int) int // the per-thread row and column
	rowC, colC       string            // the same as C expressions
}

func (l laneSplit) x(tid int) int {
	r, c := l.rowLane(tid), l.colLane(tid)
	b := c * l.sb.eb
	return ((b>>4)^((r/l.sb.swzRep)%l.sb.swzN))<<4 + b&15
}

func (l laneSplit) constPart(rc, cc int) (lo, imm int) {
	ch := cc * l.sb.eb >> 4
	return (ch % l.sb.swzN) << 4, ((ch - ch%l.sb.swzN) << 4) + rc*l.sb.cols*l.sb.eb
}

// holds verifies the split for all threads and constants.
func (l laneSplit) holds(threads int, rcs, ccs []int) bool {
	for _, cc := range ccs {
		if cc*l.sb.eb%16 != 0 {
			return false
		}
	}
	for tid := range threads {
		r, c := l.rowLane(tid), l.colLane(tid)
		x := l.x(tid)
		for _, rc := range rcs {
			for _, cc := range ccs {
				lo, imm := l.constPart(rc, cc)
				if r*l.sb.cols*l.sb.eb+(x^lo)+imm != l.sb.swzGo(r+rc, c+cc) {
					return false
				}
			}
		}
	}
	return true
}

// declare emits the per-thread parts: a row offset in bytes and X.
func (e *emitter) declareSplit(l laneSplit, name string) {
	sb := l.sb
	e.line("const int %s_row = (%s) * %d;", name, l.rowC, sb.cols*sb.eb)
	e.line("const int %s_x = (((((%s) * %d) >> 4) ^ (((%s) / %d) %% %d)) << 4) + (((%s) * %d) & 15);",
		name, l.colC, sb.eb, l.rowC, sb.swzRep, sb.swzN, l.colC, sb.eb)
}

// at is the C expression of the byte offset of (R+rc, C+cc).
func (l laneSplit) at(name string, rc, cc int) string {
	lo, imm := l.constPart(rc, cc)
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
