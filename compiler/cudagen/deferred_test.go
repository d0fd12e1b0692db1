package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// FlashAttention with its P·V deferred (AttnConfig.Overlap): the K/V ring
// has one buffer more than the stages; the deferred block runs under
// `if (k0 > lo)` for iteration k0-1 and once more after the loop; on the
// wgmma path the Q·Kᵀ is not waited for until the mask reads S, with one
// group (the deferred P·V) left in flight when the guard committed it, and
// a producer's slot is freed one iteration late. With a producer, K and V
// take rings of their own of the stages each (split_rings.go): K's slot is
// freed in its iteration, V's one later, and the deferred block waits for
// V's slot of its own iteration.
func TestEmitDeferred(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	for _, tc := range []struct {
		name string
		c    kernels.AttnConfig
		arch string
		want []string
		env  string // SwitchSplitRing forced: "0" off
	}{
		{"ws sm_90a", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true}, "sm_90a", []string{
			"if (k0 > lo)", "const int k0_late = k0 - 1;", "const int k0 = k0_late;",
			"if (k0 > lo) tl::wgmma_wait<1>(); else tl::wgmma_wait<0>();",
			// the producer: K's ring, then V's
			"tl::mbar_arrive_expect_tx(tl::smem_addr(smem + 98304) + 8 * (((k0 - lo) % 2)), 16384);",
			"tl::mbar_arrive_expect_tx(tl::smem_addr(smem + 98320) + 8 * (((k0 - lo) % 2)), 16384);",
			// the consumers: V's slot where the deferred block starts, K's freed now, V's an iteration late
			"const int k0 = k0_late;\n          tl::mbar_wait(tl::smem_addr(smem + 98320) + 8 * ((k0 - lo) % 2), ((k0 - lo) / 2) & 1);",
			"if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 98336) + 8 * ((k0 - lo) % 2));",
			"if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + 98352) + 8 * ((k0 - 1 - lo) % 2));",
			"if (hi > lo)", "const int k0_late = hi - 1;\n       {\n        const int k0 = k0_late;\n        tl::mbar_wait(tl::smem_addr(smem + 98320)",
		}, ""},
		{"ws sm_90a, one ring", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true}, "sm_90a", []string{
			"% 3)", "if (k0 > lo)", "const int k0_late = k0 - 1;", "const int k0 = k0_late;",
			"if (k0 > lo) tl::wgmma_wait<1>(); else tl::wgmma_wait<0>();",
			"tl::mbar_arrive(tl::smem_addr(smem + ", "((k0 - 1 - lo) % 3)", "if (hi > lo)", "const int k0_late = hi - 1;",
		}, "0"},
		{"ws pingpong sm_90a", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true}, "sm_90a", []string{
			// One turn issues Q·Kᵀ and the deferred P·V; the hand-over
			// follows the wait for Q·Kᵀ after the guarded block, so it
			// happens in every iteration (and not between an issue and
			// its wait, where ptxas would serialize the wgmmas).
			"tl::bar_sync(2 + tid / 128, 256); // this warpgroup's turn",
			"tl::wgmma_commit();\n      }\n      if (k0 > lo) {",
			"tl::wgmma_commit();\n          }\n        }\n      }\n      if (k0 > lo) tl::wgmma_wait<1>(); else tl::wgmma_wait<0>();\n      tl::bar_arrive(3 - tid / 128, 256); // the other's turn\n",
			"if (tid < 128) tl::bar_sync(2, 256); // warpgroup 1's last turn",
		}, ""},
		{"sm_90a", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Overlap: true}, "sm_90a", []string{
			"% 3)", "const int next = k0 + 1;", "if (k0 > lo) tl::wgmma_wait<1>(); else tl::wgmma_wait<0>();", "const int k0_late = hi - 1;",
		}, ""},
		{"sm_80", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Overlap: true}, "sm_80", []string{
			"% 3)", "const int next = k0 + 1;", "const int k0 = k0_late;", "const int k0_late = hi - 1;",
		}, ""},
		{"one stage", kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128, Overlap: true}, "sm_90a", []string{
			"const int lo = ", "const int k0 = k0_late;", "const int k0_late = hi - 1;", "tl::wgmma_wait<0>();",
		}, ""},
	} {
		p := compileAttn(t, s, tc.c, tc.arch, forced(SwitchSplitRing, tc.env))
		for _, w := range tc.want {
			if !strings.Contains(p.Source, w) {
				t.Errorf("%s: source lacks %q", tc.name, w)
			}
		}
		if tc.arch == "sm_80" && strings.Contains(p.Source, "wgmma") {
			t.Errorf("%s: wgmma on sm_80", tc.name)
		}
		// Every wgmma group committed is waited for: each iteration ends
		// with none in flight, so the deferred Q·Kᵀ wait above is the only
		// one with a group left over.
		if n := strings.Count(p.Source, "tl::wgmma_wait<1>()"); tc.arch == "sm_90a" && tc.c.Stages == 2 && n != 1 {
			t.Errorf("%s: %d waits leave a group in flight, want 1", tc.name, n)
		}
		// A turn taken is handed over once an iteration.
		if turns, overs := strings.Count(p.Source, "// this warpgroup's turn"), strings.Count(p.Source, "// the other's turn"); turns != overs || turns != btoi(tc.c.PingPong) {
			t.Errorf("%s: %d turns taken, %d handed over, want %d", tc.name, turns, overs, btoi(tc.c.PingPong))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
