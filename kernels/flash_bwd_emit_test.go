package kernels_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// The backward's three programs generate CUDA on both code paths (no GPU
// needed: the source is not compiled here): the main program's Sᵀ on
// wgmma for sm_90a and on mma.sync for sm_80, and dQ added atomically,
// two columns a reduction.
func TestAttnBwdEmitCUDA(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 8, HKV: 4, Sq: 1000, Skv: 1024, Dqk: 128, Dv: 128, DType: ir.BF16, Causal: true}
	for _, c := range []kernels.AttnConfig{{M: 64, N: 128, Stages: 2, Threads: 256}, {M: 64, N: 64, Stages: 1, Threads: 128}} {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			t.Run(fmt.Sprintf("m%d_n%d_st%d_%s", c.M, c.N, c.Stages, arch), func(t *testing.T) {
				for i, st := range kernels.AttnBwdSteps(s, c) {
					fn, err := st.Func.Build(ir.DefaultLimits)
					if err != nil {
						t.Fatalf("step %d: %v", i+1, err)
					}
					src, err := cuda.Emitter{Arch: arch}.Emit(fn)
					if err != nil {
						t.Fatalf("step %d: %v", i+1, err)
					}
					if i != 1 {
						continue
					}
					want := []string{"tl::red_add_f32x2(gp", "mma_bf16_16816(&St["}
					if arch == "sm_90a" {
						want = []string{"tl::red_add_f32x2(gp", "wgmma_m64n64k16_ss_bf16<0, 0>(&St[0]", "wgmma_m64n64k16_ss_bf16<0, 0>(&dPt[0]"}
					}
					for _, w := range want {
						if !strings.Contains(src, w) {
							t.Errorf("step 2 has no %q", w)
						}
					}
				}
			})
		}
	}
}
