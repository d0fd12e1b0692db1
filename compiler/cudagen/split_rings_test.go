package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// A deferred loop's K and V take rings of their own, of the stages each,
// only with a producer on sm_90a: elsewhere their one ring takes a buffer
// more. Split, the kernel sets up four rings of barriers (K's and V's full
// and empty ones) and its tiles take 64 KB less at d128 with 128-key tiles.
func TestSplitRings(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, BSHD: true, DType: ir.BF16}
	ov := kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Overlap: true}
	noWS, noOv, walk := ov, ov, ov
	noWS.WS = false
	noOv.Overlap = false
	walk.Persistent = true
	for _, tc := range []struct {
		name  string
		c     kernels.AttnConfig
		arch  string
		env   string // TILEGO_SPLITRING
		split bool
		ring  int // buffers of K and of V
	}{
		{"ws overlap", ov, "sm_90a", "", true, 2},
		{"walk", walk, "sm_90a", "", true, 2},
		{"switched off", ov, "sm_90a", "0", false, 3},
		{"no producer", noWS, "sm_90a", "", false, 3},
		{"no overlap", noOv, "sm_90a", "", false, 2},
		{"sm_80", ov, "sm_80", "", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compileAttn(t, s, tc.c, tc.arch, forced(SwitchSplitRing, tc.env))
			for b, sb := range p.smem.bufs {
				if (b.Name == "ks" || b.Name == "vs") && sb.stages != tc.ring {
					t.Errorf("%s: %d buffers, want %d", b.Name, sb.stages, tc.ring)
				}
			}
			rings := strings.Count(p.Source, "tl::mbar_init(")
			want := 0
			switch {
			case tc.split && tc.c.Persistent:
				want = 6 // and the walk's full and empty
			case tc.split:
				want = 4
			case tc.c.WS && tc.arch == "sm_90a":
				want = 2
			case tc.arch == "sm_90a":
				want = 1 // the consumers' TMA ring: full barriers only
			}
			if rings != want {
				t.Errorf("%d rings of barriers set up, want %d", rings, want)
			}
		})
	}
}
