package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
)

// The tail split of a grid of several waves (small SM counts make small
// grids several waves long) agrees with float64 and with the single
// program: whole tiles from the kernel, pieces through the combine.
func TestFlashAttentionTailInterp(t *testing.T) {
	base := AttnShape{B: 1, H: 2, HKV: 2, Sq: 100, Skv: 130, Dqk: 128, Dv: 128, DType: ir.BF16} // one block an SM (attnPerSM)
	cfg := AttnConfig{M: 16, N: 16, Stages: 2, Threads: 128}
	cases := []struct {
		name        string
		sms, splits int
		mod         func(*AttnShape)
	}{
		{"14tiles_sms4_split2", 4, 2, func(*AttnShape) {}},     // 3 full waves, a tail of 2
		{"14tiles_sms5_split5", 5, 5, func(*AttnShape) {}},     // a tail of 4 in 5 pieces (some empty)
		{"14tiles_sms13_split13", 13, 13, func(*AttnShape) {}}, // a tail of 1, 13 pieces of 9 tiles
		{"causal_sq<skv", 4, 2, func(s *AttnShape) { s.Causal = true }},
		{"causal_sq>skv_empty_rows", 3, 3, func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 90, 40 }},
		{"gqa_bshd_f16", 6, 3, func(s *AttnShape) { s.B, s.H, s.HKV, s.BSHD, s.DType = 2, 4, 2, true, ir.F16 }},
		{"sq_not_multiple_of_m", 4, 2, func(s *AttnShape) { s.Sq = 37 }}, // the tail tile's rows past Sq are not stored
	}
	for _, tc := range cases {
		s := base
		tc.mod(&s)
		t.Run(tc.name, func(t *testing.T) {
			if !TailSplitFits(s, cfg, tc.sms) {
				t.Fatalf("%+v on %d SMs is one wave", s, tc.sms)
			}
			steps, err := FlashAttentionTailSteps(s, cfg, tc.sms, tc.splits)
			if err != nil {
				t.Fatal(err)
			}
			args := FlashAttentionTailInputs(s, cfg, tc.sms, tc.splits, 7)
			if err := RunSteps(steps, args, ir.DefaultLimits, interp.Run); err != nil {
				t.Fatal(err)
			}
			checkSplitResult(t, s, cfg, args)
		})
	}
}

// A grid of one wave is not a tail split's (every block is cut instead),
// fewer than 2 splits is no split, and a tail needs SMs and rows: each
// gets an error, not a panic.
func TestFlashAttentionTailRefuses(t *testing.T) {
	s := AttnShape{B: 1, H: 2, HKV: 2, Sq: 100, Skv: 130, Dqk: 128, Dv: 128, DType: ir.BF16}
	c := AttnConfig{M: 16, N: 16, Stages: 2, Threads: 128}
	for _, tc := range []struct {
		sms, splits int
		want        string
	}{
		{14, 2, "fit one wave"},
		{132, 4, "fit one wave"},
		{4, 1, "at least 2 splits"},
		{0, 2, "for 0 SMs"},
		{-3, 2, "for -3 SMs"},
	} {
		_, err := FlashAttentionTailSteps(s, c, tc.sms, tc.splits)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d SMs, %d splits: %v, want %q", tc.sms, tc.splits, err, tc.want)
		}
	}
	if _, err := FlashAttentionTailSteps(s, AttnConfig{N: 16, Stages: 2, Threads: 128}, 4, 2); err == nil || !strings.Contains(err.Error(), "0-row tiles") {
		t.Errorf("M 0: %v", err)
	}
	if TailSplitFits(s, c, 0) || len(TailSplitInputs(s, c, 0, 2, 1)) != 7 {
		t.Error("0 SMs: a tail split, or not the split of every block")
	}
	if _, err := TailSplitSteps(s, c, 0, 2); err != nil {
		t.Errorf("0 SMs: %v (the split of every block applies)", err)
	}
}

// Both programs generate CUDA for both paths at GPU tile sizes.
func TestFlashAttentionTailEmitCUDA(t *testing.T) {
	s := AttnShape{B: 1, H: 34, HKV: 34, Sq: 512, Skv: 8192, Dqk: 128, Dv: 128, DType: ir.BF16, BSHD: true}
	c := AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	steps, err := FlashAttentionTailSteps(s, c, 132, 8) // 136 tiles: a wave of 132 and a tail of 4
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		fn, err := st.Func.Build(ir.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range []string{"sm_90a", "sm_80"} {
			if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
				t.Errorf("%s %s: %v", fn.Name, arch, err)
			}
		}
	}
	if a := tailOf(s, c, 132); a.full != 132 || a.tail != 4 {
		t.Errorf("tiling %+v", a)
	}
	_ = fmt.Sprint()
}
