package cudagen

import (
	"testing"

	"github.com/tilego/tilego/layout"
)

// The quad store, modelled on the layouts it takes: lane q of a quad holds
// word k (register r + k·place and the next) before the exchange and its
// quad's lane j's word q as word j after; it stores them at register r's
// element plus quadShift·q columns. Every element of the tile must land once, in
// order, 16 bytes a store: what quadDigits accepts and the emitter's
// offset must agree.
func TestQuadStoreModel(t *testing.T) {
	wg := func(m, n int, w layout.WGs) *layout.Fragment {
		f, err := layout.WGAccumulator(m, n, w)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	mma := func(m, n int, w layout.Warps) *layout.Fragment {
		f, err := layout.Accumulator(m, n, w)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		l     *layout.Fragment
		quads bool
	}{
		{"wgmma 64x64", wg(64, 64, layout.WGs{M: 1, N: 1}), true},
		{"wgmma 128x256 over 2", wg(128, 256, layout.WGs{M: 2, N: 1}), true},
		{"wgmma 64x512 split in N", wg(64, 512, layout.WGs{M: 1, N: 2}), true},
		{"mma 64x64 over 4x1", mma(64, 64, layout.Warps{M: 4, N: 1}), true},
		{"mma 32x64 over 2x2", mma(32, 64, layout.Warps{M: 2, N: 2}), true},
		{"mma 64x32 over 2x2: 2 groups a warp", mma(64, 32, layout.Warps{M: 2, N: 2}), false},
		{"wgmma 64x24: 3 groups", wg(64, 24, layout.WGs{M: 1, N: 1}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			place, ok := quadDigits(tc.l)
			if ok != tc.quads {
				t.Fatalf("quadDigits %v, want %v", ok, tc.quads)
			}
			if !ok {
				return
			}
			rows, cols := tc.l.Shape[0], tc.l.Shape[1]
			seen := make([]int, rows*cols)
			for tid := range tc.l.NumThreads() {
				q, base := tid%4, tid-tid%4
				for r := 0; r < tc.l.NumRegs(); r += 2 {
					if r/place%4 != 0 {
						continue
					}
					at := tc.l.Coord(tid, r)
					row, col := at[0], at[1]+quadShift*q
					if col%8 != 0 {
						t.Fatalf("thread %d register %d stores at column %d, not a 16-byte boundary", tid, r, col)
					}
					for j := range 4 { // word j: lane base+j's word q, a pair
						for e := range 2 {
							c := tc.l.Coord(base+j, r+q*place+e)
							if c[0] != row || c[1] != col+2*j+e {
								t.Fatalf("thread %d register %d: element %d of its store is %v, want (%d, %d)", tid, r, 2*j+e, c, row, col+2*j+e)
							}
							seen[c[0]*cols+c[1]]++
						}
					}
				}
			}
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("element (%d, %d) stored %d times", i/cols, i%cols, n)
				}
			}
		})
	}
}
