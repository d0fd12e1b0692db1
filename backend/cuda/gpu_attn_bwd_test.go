//go:build gpu

package cuda

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// FlashAttention's backward (kernels.AttnBwdSteps) on the GPU, both code
// paths, every element of dQ, dK and dV against ref.AttentionGrads, the
// outputs and the intermediates (Delta, dQacc) NaN-poisoned before each
// run.
func TestGPUAttnBwd(t *testing.T) {
	b := openGPU(t)
	base := kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 200, Skv: 200, Dqk: 64, Dv: 64, DType: ir.BF16}
	cases := []struct {
		name string
		mod  func(*kernels.AttnShape)
		c    kernels.AttnConfig
	}{
		{"mha", func(*kernels.AttnShape) {}, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}},
		{"causal", func(s *kernels.AttnShape) { s.Causal = true }, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}},
		{"gqa_bshd_n128", func(s *kernels.AttnShape) { s.HKV, s.BSHD = 2, true }, kernels.AttnConfig{M: 64, N: 128, Stages: 2, Threads: 256}},
		{"causal_sq<skv_dv32", func(s *kernels.AttnShape) { s.Sq, s.Skv, s.Dv, s.Causal = 130, 300, 32, true }, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}},
		{"causal_sq>skv", func(s *kernels.AttnShape) { s.Sq, s.Skv, s.Causal = 300, 130, true }, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}},
		{"d128_f16", func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.DType = 128, 128, ir.F16 }, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}},
		// P and dS through shared memory: two warpgroups over 64 keys.
		{"d256_sharedp_causal_gqa", func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.HKV, s.Causal = 256, 256, 2, true },
			kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 256, SharedP: true}},
		// issue 52's odd shapes: GQA 6:2, head dim 96, f16 BSHD, S off the tile
		{"gqa6:2_d96_f16_bshd_causal", func(s *kernels.AttnShape) {
			s.H, s.HKV, s.Dqk, s.Dv, s.DType, s.BSHD, s.Causal, s.Sq, s.Skv = 6, 2, 96, 96, ir.F16, true, true, 190, 190
		}, kernels.AttnConfig{M: 64, N: 128, Stages: 2, Threads: 256}},
		{"d128_sharedp_sq<skv", func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.Sq, s.Skv, s.BSHD = 128, 128, 130, 250, true },
			kernels.AttnConfig{M: 64, N: 128, Stages: 2, Threads: 256, SharedP: true}},
	}
	for _, tc := range cases {
		s := base
		tc.mod(&s)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, tc.name), func(t *testing.T) {
				args := kernels.AttnBwdInputs(s, 23)
				runChainPoisoned(t, b, arch, kernels.AttnBwdSteps(s, tc.c), args)
				if r := kernels.AttnBwdCheck(s, args, 1); r.Checked != "all" || !r.OK() {
					t.Errorf("%s (checked %s)", r, r.Checked)
				}
			})
		}
	}
}
