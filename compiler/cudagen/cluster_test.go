package cudagen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Clusters apply where both blocks of a pair load the same ring tiles:
// the producer then multicasts half of each (boxes of half the rows, at
// the rank's offset), the empty barriers expect both blocks' warps and
// every consumer warp frees a slot in both, and the blocks meet after
// setup and before exit. Elsewhere the hint changes nothing.
func TestCluster(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 1024, Skv: 1000, Dqk: 128, Dv: 128, BSHD: true, DType: ir.BF16}
	base := kernels.AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Cluster: 2}
	mod := func(f func(*kernels.AttnShape, *kernels.AttnConfig)) (kernels.AttnShape, kernels.AttnConfig) {
		s, c := s, base
		f(&s, &c)
		return s, c
	}
	for _, tc := range []struct {
		name string
		f    func(*kernels.AttnShape, *kernels.AttnConfig)
		env  string
		want bool
		half int // rows of each multicast half
	}{
		{"d128 n176", func(*kernels.AttnShape, *kernels.AttnConfig) {}, "", true, 88},
		{"one ring", func(_ *kernels.AttnShape, c *kernels.AttnConfig) { c.Overlap, c.PingPong, c.N = false, false, 128 }, "", true, 64},
		{"d256 n80", func(s *kernels.AttnShape, c *kernels.AttnConfig) {
			s.Dqk, s.Dv, c.N, c.PingPong = 256, 256, 80, false
		}, "", true, 40},
		{"causal", func(s *kernels.AttnShape, _ *kernels.AttnConfig) { s.Causal = true }, "", false, 0},
		{"odd grid", func(s *kernels.AttnShape, _ *kernels.AttnConfig) { s.Sq = 3 * 128 }, "", false, 0},
		{"walk", func(_ *kernels.AttnShape, c *kernels.AttnConfig) { c.Persistent = true }, "", false, 0},
		{"no producer", func(_ *kernels.AttnShape, c *kernels.AttnConfig) {
			c.WS, c.PingPong, c.Overlap, c.N = false, false, false, 128
		}, "", false, 0},
		{"no hint", func(_ *kernels.AttnShape, c *kernels.AttnConfig) { c.Cluster = 0 }, "", false, 0},
		{"switched off", func(*kernels.AttnShape, *kernels.AttnConfig) {}, "0", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := mod(tc.f)
			p := compileAttn(t, s, c, "sm_90a", forced(SwitchCluster, tc.env))
			src := p.Source
			if got := strings.Contains(src, "__cluster_dims__(2, 1, 1)"); got != tc.want {
				t.Fatalf("clustered: %v, want %v", got, tc.want)
			}
			if !tc.want {
				if strings.Contains(src, "tma_load_mc_") || strings.Contains(src, "cluster_sync") {
					t.Errorf("an unclustered kernel multicasts or meets its partner")
				}
				return
			}
			if n := strings.Count(src, "tl::cluster_sync();"); n != 2 {
				t.Errorf("%d cluster barriers, want 2 (after setup, before exit)", n)
			}
			if strings.Count(src, "tl::tma_load_mc_4d(") == 0 || strings.Contains(src[:strings.Index(src, "return;")], "tl::tma_load_4d(") {
				t.Errorf("the producer does not multicast every ring load")
			}
			if !strings.Contains(src, "+ crank * "+strconv.Itoa(tc.half)+",") {
				t.Errorf("no rows offset of half %d by rank", tc.half)
			}
			if strings.Contains(src, "if (lane == 0) tl::mbar_arrive(") || !strings.Contains(src, "tl::mbar_arrive_cluster(") || !strings.Contains(src, "tl::cluster_rank() ^ 1)") {
				t.Errorf("a consumer warp frees a slot in its own block only")
			}
			if !strings.Contains(src, "8 * s, 16);") { // 256 consumers: 8 warps a block, both blocks
				t.Errorf("empty barriers do not expect both blocks' warps")
			}
			halves := 0
			for _, spec := range p.TMA {
				if spec.Box[1] == uint32(tc.half) {
					halves++
				}
			}
			if halves == 0 {
				t.Errorf("no TMA box of %d rows among %v", tc.half, p.TMA)
			}
		})
	}
}

// MLA's two 64-row blocks of a request's 128 heads read the same pages
// (through the block table, independent of the block's x): single and
// split programs come out clustered; with 64 heads there is one block a
// request, and nothing to pair.
func TestClusterMLA(t *testing.T) {
	c := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true, Cluster: 2}
	for _, tc := range []struct {
		hq    int
		split bool
		want  bool
	}{{128, false, true}, {128, true, true}, {64, false, false}} {
		s := kernels.MLAShape{Hq: tc.hq, Sq: 1, DType: ir.BF16}
		build := kernels.MLADecode
		if tc.split {
			build = kernels.MLADecodeSplit
		}
		p := compileFunc(t, build(s, c), "sm_90a")
		if got := strings.Contains(p.Source, "__cluster_dims__(2, 1, 1)"); got != tc.want {
			t.Errorf("h_q %d split %v: clustered %v, want %v", tc.hq, tc.split, got, tc.want)
		}
	}
}
