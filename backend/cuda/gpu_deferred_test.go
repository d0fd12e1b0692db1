//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
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
			c = fitAttn(s, c)
			for _, arch := range archs(b) {
				if c.WS && arch != "sm_90a" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s_cfg%d", arch, name, ci), func(t *testing.T) {
					f, err := kernels.FlashAttention(s, c).Build(b.Limits())
					if err == nil {
						_, err = cudagen.Compile(f, cudagen.Options{Arch: arch})
					}
					if err != nil {
						t.Fatal(err) // every case compiles (fitAttn): a refusal is a bug
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

// FlashAttention on a persistent grid (AttnConfig.Persistent): a block an
// SM walks several tiles, so these shapes have more tiles than an H100 has
// SMs, unevenly. With a producer, its ring runs on from tile to tile (a
// wrong phase hangs: this runs under TestGPUTMA's timeout). Every output
// is checked for NaN (outputs start poisoned, so a tile no block ran shows)
// and a sample of rows against float64.
func TestGPUPersistent(t *testing.T) {
	b := openGPU(t)
	shapes := map[string]kernels.AttnShape{
		"mha_d64":          {B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 64, Dv: 64, DType: ir.BF16},
		"causal_d128":      {B: 3, H: 8, HKV: 8, Sq: 1100, Skv: 1100, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16},
		"gqa_bshd_d128":    {B: 2, H: 16, HKV: 4, Sq: 900, Skv: 1300, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16},
		"causal_d256":      {B: 4, H: 8, HKV: 8, Sq: 700, Skv: 700, Dqk: 256, Dv: 256, Causal: true, DType: ir.BF16},
		"f16_causal_d64":   {B: 2, H: 16, HKV: 16, Sq: 1200, Skv: 1000, Dqk: 64, Dv: 64, Causal: true, DType: ir.F16},
		"san_d64":          {B: 2, H: 16, HKV: 16, Sq: 500, Skv: 520, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16},   // 128 tiles, 64 pairs of them persistent: small, for the sanitizers
		"tail_causal_d128": {B: 5, H: 16, HKV: 16, Sq: 512, Skv: 512, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16}, // 160 pairs on 132 SMs: the last 28 packed in bins (causalWalk)
		// Non-causal walks draw their tiles (compiler/cudagen/grid_loop.go): more
		// tiles than SMs, and fewer (every block draws only the end).
		"mha_d256":   {B: 2, H: 8, HKV: 8, Sq: 700, Skv: 700, Dqk: 256, Dv: 256, DType: ir.BF16},
		"small_d128": {B: 1, H: 2, HKV: 2, Sq: 300, Skv: 333, Dqk: 128, Dv: 128, DType: ir.BF16},
	}
	cfgs := map[string]kernels.AttnConfig{
		"ws":            {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true},
		"ws_pf":         {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Prefetch: true},
		"ws_ov":         {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true},
		"ws_ovpp":       {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true},
		"ws_pp":         {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Persistent: true},
		"noprod":        {M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true},
		"m64_pf":        {M: 64, N: 64, Stages: 2, Threads: 128, Persistent: true, Prefetch: true},
		"nonpersist_pf": {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Prefetch: true},
		// The query tile in two buffers beside 128-row K/V tiles, and in one
		// beside the deferred ring of 96 (persistent_loads.go).
		"ws_n128":     {M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Persistent: true},
		"ws_ovpp_n96": {M: 128, N: 96, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true},
		"ws_1wg":      {M: 128, N: 128, Stages: 2, Threads: 128, WS: true, Persistent: true}, // one consumer warpgroup
		// The output stored from registers, its staging tile's bytes left
		// to the walk's query tile (d256 fits one beside the ring so).
		"ws_direct":    {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Direct: true},
		"ws_ov_direct": {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true, Direct: true},
		// d256's short-sequence walk; with Overlap the query tile is freed in
		// the main loop's last iteration (a tile of f16_causal_d64 runs none).
		"ws_ovpp_direct": {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true, Direct: true},
		// Walks that draw their tiles (Draw; causal ones draw single tiles,
		// longest first, rather than walk pairs).
		"ws_draw":             {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Draw: true},
		"ws_pf_draw":          {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Prefetch: true, Draw: true},
		"ws_ovpp_draw":        {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true, Draw: true},
		"ws_ovpp_direct_draw": {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true, Direct: true, Draw: true},
	}
	for sname, s := range shapes {
		for cname, c := range cfgs {
			if s.Dqk >= 256 && c.Overlap {
				c.N = 32
			}
			if s.Dqk >= 256 {
				if c.Threads == 128 && c.WS { // 128 rows of 256 columns do not fit one warpgroup's registers
					continue
				}
				c.N = min(c.N, 64)
			}
			for _, arch := range archs(b) {
				if c.WS && arch != "sm_90a" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", arch, sname, cname), func(t *testing.T) {
					f, err := kernels.FlashAttention(s, c).Build(b.Limits())
					if err == nil {
						_, err = cudagen.Compile(f, cudagen.Options{Arch: arch})
					}
					if err != nil {
						t.Fatal(err)
					}
					args := kernels.AttentionInputs(s, 31)
					runPoisoned(t, b, arch, f, args)
					for i, out := range args[3:] {
						for j, v := range out.Data {
							if math.IsNaN(v) {
								t.Fatalf("output %d element %d is NaN: a tile was not run", i, j)
							}
						}
					}
					var do, dl ref.Diff
					kernels.CheckAttentionRows(s, args, kernels.SampleRows(s, 192, 7), &do, &dl)
					if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
						t.Errorf("O: %s; LSE: %s", &do, &dl)
					}
				})
			}
		}
	}
}
