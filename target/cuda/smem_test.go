package cuda

import (
	"fmt"
	"testing"
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
