package cudagen

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/ir"
)

// Every shared layout must place each element of a tile at its own offset
// inside the tile's bytes, and keep 16-byte vectors contiguous.
func TestSharedLayoutsAreBijections(t *testing.T) {
	for _, c := range []struct{ rows, cols, eb, panelW, n, rep int }{
		{64, 64, 2, 128, 8, 1},   // one 128B panel
		{64, 128, 2, 128, 8, 1},  // two panels
		{128, 256, 2, 128, 8, 1}, // four panels
		{32, 32, 2, 64, 4, 2},    // 64B rows
		{16, 16, 2, 32, 2, 4},    // 32B rows
		{64, 96, 2, 192, 4, 2},   // 192B rows, one panel
		{64, 64, 4, 128, 8, 1},   // f32
		{8, 7, 2, 14, 1, 1},      // unswizzled odd tile
	} {
		sb := &smemBuf{rows: c.rows, cols: c.cols, eb: c.eb, panelW: c.panelW, swzN: c.n, swzRep: c.rep}
		t.Run(fmt.Sprintf("%dx%dx%d", c.rows, c.cols, c.eb), func(t *testing.T) {
			seen := map[int]bool{}
			for r := range c.rows {
				for col := range c.cols {
					o := sb.swzGo(r, col)
					if o < 0 || o >= c.rows*c.cols*c.eb || o%c.eb != 0 || seen[o] {
						t.Fatalf("(%d, %d) -> %d: outside, misaligned or taken", r, col, o)
					}
					seen[o] = true
					if (col*c.eb)%16 != 0 && c.panelW%16 == 0 && sb.swzGo(r, col-1)+c.eb != o {
						t.Fatalf("(%d, %d) is not next to (%d, %d) within its 16-byte chunk", r, col, r, col-1)
					}
				}
			}
		})
	}
}

// The per-thread/constant address split must agree with the full formula
// wherever holds says it does, and refuse where it does not.
func TestLaneSplit(t *testing.T) {
	sb := &smemBuf{rows: 64, cols: 128, eb: 2, panelW: 128, swzN: 8, swzRep: 1}
	good := laneSplit{sb: sb, rowLane: func(t int) int { return t % 8 }, colLane: func(t int) int { return 8 * (t / 8 % 2) }}
	if !good.holds(128, []int{0, 16, 32}, []int{0, 16, 64, 112}) {
		t.Fatal("an ldmatrix pattern should split")
	}
	bad := laneSplit{sb: sb, rowLane: func(t int) int { return t % 8 }, colLane: func(t int) int { return 8 * (t / 8 % 2) }}
	if bad.holds(128, []int{3}, []int{0}) { // a row offset of 3 changes every thread's swizzle
		t.Fatal("a row offset inside the swizzle period must not split")
	}
}

// hwSwizzle is where the hardware (a TMA box, a wgmma descriptor) puts
// byte offset a of a tile whose base is on a 1024-byte boundary: it XORs
// the 16-byte chunk with the address bits above the 128-byte unit, as
// many of them as the mode mixes (3 for 128B, 2 for 64B, 1 for 32B).
func hwSwizzle(a, mode int) int {
	bits := map[int]int{1: 7, 2: 3, 3: 1}[mode]
	return a ^ ((a>>7)&bits)<<4
}

// hardwareSwizzled must be true exactly when the hardware's placement of
// every element, a panel's box at panel·rows·panelW, is tl::swz's.
func TestHardwareSwizzleMatchesThreads(t *testing.T) {
	for _, c := range []struct {
		rows, cols, eb int
		want           bool
	}{
		{64, 64, 2, true},   // one 128B panel
		{64, 256, 2, true},  // four panels
		{8, 1024, 2, true},  // panels of 1024 bytes
		{4, 64, 2, true},    // one panel of 4 rows: starts on the boundary
		{4, 1024, 2, false}, // the softmax's tile: odd panels start 512 bytes in
		{12, 128, 2, false}, // the second panel starts 1536 bytes in
		{2, 256, 4, false},  // f32, 32 columns a panel
		{16, 32, 2, true},   // 64B rows, one panel
		{6, 16, 2, true},    // 32B rows, one panel
		{24, 192, 2, true},  // 24 rows: 3072-byte panels
		{3, 16, 2, true},    // 32B rows
		{1, 4096, 2, false}, // one row in 64 panels
		{64, 96, 2, false},  // 192B rows: not a descriptor layout
		{128, 128, 1, true}, // f8
		{40, 128, 2, true},  // 40 rows: 5120-byte panels
		{20, 128, 2, false}, // 20 rows
	} {
		b := &ir.Buffer{Name: "t", Scope: ir.Shared, DType: map[int]ir.DType{1: ir.F8E4M3, 2: ir.BF16, 4: ir.F32}[c.eb],
			Shape: []ir.Expr{&ir.Const{T: ir.I32, I: int64(c.rows)}, &ir.Const{T: ir.I32, I: int64(c.cols)}}}
		sb := bufLayout(b)
		agree := sb.swizzleMode() != 0
		for r := 0; agree && r < c.rows; r++ {
			for col := range c.cols {
				at := col * sb.eb
				p, w := at/sb.panelW, at%sb.panelW
				if hwSwizzle(p*sb.rows*sb.panelW+r*sb.panelW+w, sb.swizzleMode()) != sb.swzGo(r, col) {
					agree = false
					break
				}
			}
		}
		if got := sb.hardwareSwizzled(); got != agree || got != c.want {
			t.Errorf("%dx%d %d-byte: hardwareSwizzled %v, placements agree %v, want %v", c.rows, c.cols, c.eb, got, agree, c.want)
		}
	}
}
