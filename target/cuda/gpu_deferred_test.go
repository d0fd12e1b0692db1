//go:build gpu

package cuda

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
)

// FlashAttention with each tile's P·V deferred to the next iteration
// (AttnConfig.Overlap, tl's Defer), against float64: with a producer
// warpgroup and lazy wgmma waits (sm_90a), with its two consumer
// warpgroups taking turns (PingPong), with the consumers issuing the
// ring's loads (TMA on sm_90a, cp.async with mma.sync on sm_90), and with
// one stage (no ring). Runs apart under a timeout with TestGPUTMA: a wrong
// slot release would hang the producer.
func TestGPUDeferred(t *testing.T) {
	b := openGPU(t)
	cfgs := []kernels.AttnConfig{
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true},
		{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Overlap: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, Overlap: true},
		{M: 64, N: 64, Stages: 1, Threads: 128, Overlap: true},
		{M: 64, N: 64, Stages: 2, Threads: 128, WS: true, Overlap: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true},
		{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true},
	}
	for name, s := range attnCases() {
		for ci, c := range cfgs {
			if s.Dqk >= 256 {
				c.N = 32
			}
			for _, arch := range archs(b) {
				if c.WS && arch != "sm_90a" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s_cfg%d", arch, name, ci), func(t *testing.T) {
					f, err := kernels.FlashAttention(s, c).Build(b.Limits())
					if err == nil {
						_, err = Compile(f, Options{Arch: arch})
					}
					if err != nil {
						t.Skip(err) // a tiling this shape cannot take
					}
					args := kernels.AttentionInputs(s, 23)
					runPoisoned(t, b, arch, f, args)
					var do, dl ref.Diff
					kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
					if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
						t.Errorf("O: %s; LSE: %s", &do, &dl)
					}
				})
			}
		}
	}
}
