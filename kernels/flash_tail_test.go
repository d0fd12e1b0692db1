package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/target/cuda"
)

// The tail split of a grid of several waves (small SM counts make small
// grids several waves long) agrees with float64 and with the single
// program: whole tiles from the kernel, pieces through the combine.
func TestFlashAttentionTailInterp(t *testing.T) {
	base := AttnShape{B: 1, H: 2, HKV: 2, Sq: 100, Skv: 130, Dqk: 32, Dv: 32, DType: ir.BF16}
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
			var do, dl ref.Diff
			CheckAttentionRows(s, args, AllRows(s), &do, &dl)
			if do.Bad > 0 || dl.Bad > 0 || do.Rel() > Tolerance(s.DType) || dl.Rel() > LSETolerance {
				t.Errorf("vs float64: O: %s; LSE: %s", &do, &dl)
			}
			fn, err := FlashAttention(s, cfg).Build()
			if err != nil {
				t.Fatal(err)
			}
			one := AttentionInputs(s, 7)
			if err := interp.Run(fn, one); err != nil {
				t.Fatal(err)
			}
			var so, sl ref.Diff
			for _, r := range AllRows(s) {
				for d := range s.Dv {
					so.Add(args[3].At(r.B, r.H, r.I, d), one[3].At(r.B, r.H, r.I, d))
				}
				sl.Add(args[4].At(r.B, r.H, r.I), one[4].At(r.B, r.H, r.I))
			}
			if so.Bad > 0 || sl.Bad > 0 || so.Rel() > Tolerance(s.DType)/2 || sl.Rel() > 1e-5 {
				t.Errorf("vs single program: O: %s; LSE: %s", &so, &sl)
			}
		})
	}
}

// A grid of one wave is not a tail split's (every block is cut instead),
// and fewer than 2 splits is no split.
func TestFlashAttentionTailRefuses(t *testing.T) {
	s := AttnShape{B: 1, H: 2, HKV: 2, Sq: 100, Skv: 130, Dqk: 32, Dv: 32, DType: ir.BF16}
	c := AttnConfig{M: 16, N: 16, Stages: 2, Threads: 128}
	for _, tc := range []struct {
		sms, splits int
		want        string
	}{
		{14, 2, "fit one wave"},
		{132, 4, "fit one wave"},
		{4, 1, "at least 2 splits"},
	} {
		_, err := FlashAttentionTailSteps(s, c, tc.sms, tc.splits)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d SMs, %d splits: %v, want %q", tc.sms, tc.splits, err, tc.want)
		}
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
			if _, err := cuda.Compile(fn, cuda.Options{Arch: arch}); err != nil {
				t.Errorf("%s %s: %v", fn.Name, arch, err)
			}
		}
	}
	if a := tailOf(s, c, 132); a.full != 132 || a.tail != 4 {
		t.Errorf("tiling %+v", a)
	}
	_ = fmt.Sprint()
}
