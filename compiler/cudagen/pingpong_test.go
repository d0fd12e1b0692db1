package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// With a producer and two consumer warpgroups, each of the loop's two
// wgmmas waits for this warpgroup's turn before its first instruction and
// hands the turn over after its commit, before its wait; warpgroup 1
// arrives once before the loop and warpgroup 0 takes one turn after it.
// Where ping-pong cannot apply (one consumer warpgroup, no producer, not
// asked), the source has none of it.
func TestEmitPingPong(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	for _, tc := range []struct {
		name string
		c    kernels.AttnConfig
		want bool
	}{
		{"ws pingpong", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true}, true},
		{"ws", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true}, false},
		{"pingpong without ws", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, PingPong: true}, false},
		{"one warpgroup", kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128, WS: true, PingPong: true}, false},
	} {
		p := compileAttn(t, s, tc.c, "sm_90a")
		src := p.Source
		if p.PingPong != tc.want || strings.Contains(src, "tl::bar_arrive(") != tc.want {
			t.Errorf("%s: ping-pong %v (source: %v), want %v", tc.name, p.PingPong, strings.Contains(src, "tl::bar_arrive("), tc.want)
		}
		if !tc.want {
			continue
		}
		first := strings.Index(src, "if (tid >= 128) tl::bar_arrive(2, 256);")
		loop := strings.LastIndex(src, "for (int k0 = lo; k0 < hi; ++k0)")
		last := strings.Index(src, "if (tid < 128) tl::bar_sync(2, 256);")
		if first < 0 || loop < first || last < loop {
			t.Fatalf("%s: want warpgroup 1's arrival before the consumers' loop and warpgroup 0's last turn after it", tc.name)
		}
		body := src[loop:last]
		if n, m := strings.Count(body, "tl::bar_sync(2 + tid / 128, 256);"), strings.Count(body, "tl::bar_arrive(3 - tid / 128, 256);"); n != 2 || m != 2 {
			t.Errorf("%s: %d turns taken and %d handed over in the loop, want 2 each (Q·Kᵀ and P·V)", tc.name, n, m)
		}
		// Each turn: wait for it, fence, issue, commit, hand it over, then
		// wait for the results.
		for _, turn := range strings.Split(body, "tl::bar_sync(2 + tid / 128, 256);")[1:] {
			order := []string{"tl::wgmma_fence();", "tl::wgmma_commit();", "tl::bar_arrive(3 - tid / 128, 256);", "tl::wgmma_wait<0>();"}
			at := 0
			for _, w := range order {
				i := strings.Index(turn[at:], w)
				if i < 0 {
					t.Errorf("%s: a turn lacks %q after its earlier steps", tc.name, w)
					break
				}
				at += i
			}
		}
		if strings.Contains(body, "tl::bar_sync(1,") {
			t.Errorf("%s: the consumers meet inside a ping-pong loop", tc.name)
		}
	}
}
