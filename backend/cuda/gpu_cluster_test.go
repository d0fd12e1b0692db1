//go:build gpu

package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
)

// FlashAttention in clusters of two blocks that multicast the K and V
// tiles (cluster.go), against float64: one ring and split rings,
// ping-pong, head dims 64-256, GQA, f16, and a K/V length shorter than
// one tile (the rank-1 half of the box lies wholly past the end and
// arrives as zeros). Every program must have come out clustered, or the
// test would check the plain path. Runs apart under a timeout with
// TestGPUTMA: a wrong barrier count hangs.
func TestGPUCluster(t *testing.T) {
	b := openGPU(t)
	if b.arch != "sm_90a" {
		t.Skip("clusters need sm_90a")
	}
	shapes := map[string]kernels.AttnShape{
		"d128_bshd": {B: 2, H: 4, HKV: 4, Sq: 1000, Skv: 1300, Dqk: 128, Dv: 128, BSHD: true, DType: ir.BF16},
		"d64_f16":   {B: 1, H: 8, HKV: 8, Sq: 512, Skv: 700, Dqk: 64, Dv: 64, DType: ir.F16},
		"d256":      {B: 2, H: 2, HKV: 2, Sq: 256, Skv: 517, Dqk: 256, Dv: 256, DType: ir.BF16},
		"gqa":       {B: 1, H: 8, HKV: 2, Sq: 512, Skv: 600, Dqk: 128, Dv: 128, DType: ir.BF16},
		"short_kv":  {B: 2, H: 2, HKV: 2, Sq: 256, Skv: 50, Dqk: 128, Dv: 128, DType: ir.BF16},
	}
	cfgs := map[string]kernels.AttnConfig{
		"ws":      {M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Cluster: 2},
		"ws_ov":   {M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Overlap: true, Cluster: 2},
		"ws_ovpp": {M: 128, N: 176, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Cluster: 2},
	}
	for sname, s := range shapes {
		for cname, c := range cfgs {
			if s.Dqk >= 256 {
				c.N, c.PingPong = 64, false
			}
			t.Run(fmt.Sprintf("%s/%s", sname, cname), func(t *testing.T) {
				f, err := kernels.FlashAttention(s, c).Build(b.Limits())
				if err != nil {
					t.Fatal(err)
				}
				args := kernels.AttentionInputs(s, 43)
				prog := runPoisonedWith(t, b, cudagen.Options{Arch: "sm_90a"}, f, args)
				if !strings.Contains(prog.Source, "__cluster_dims__") {
					t.Fatal("the program did not come out clustered")
				}
				var do, dl ref.Diff
				kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
				if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
					t.Errorf("O: %s; LSE: %s", &do, &dl)
				}
			})
		}
	}
}
