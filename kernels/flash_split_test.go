package kernels

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// The split path (split kernel, then combine) agrees with float64 within
// FlashAttention's tolerances, and with the single-program kernel closely,
// whatever the cut: one piece, two, three, more pieces than KV tiles
// (empty pieces), causal rows with no keys at all.
func TestFlashAttentionSplitInterp(t *testing.T) {
	base := AttnShape{B: 1, H: 2, HKV: 2, Sq: 40, Skv: 100, Dqk: 32, Dv: 32, DType: ir.BF16}
	cfg := AttnConfig{M: 16, N: 16, Stages: 2, Threads: 128}
	cases := []struct {
		name   string
		splits int
		mod    func(*AttnShape)
	}{
		{"split1", 1, func(*AttnShape) {}},
		{"split2", 2, func(*AttnShape) {}},
		{"split3", 3, func(*AttnShape) {}},
		{"split9>tiles", 9, func(s *AttnShape) { s.Skv = 50 }}, // 4 KV tiles
		{"causal_sq<skv_split3", 3, func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 37, 101 }},
		{"causal_sq>skv_split2", 2, func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 70, 30 }},
		{"causal_sq>skv_split5", 5, func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 50, 20 }},
		{"gqa_split3", 3, func(s *AttnShape) { s.H, s.HKV, s.B = 4, 2, 2 }},
		{"bshd_gqa_causal_split2", 2, func(s *AttnShape) { s.BSHD, s.H, s.HKV, s.Causal = true, 4, 1, true }},
		{"f16_split3", 3, func(s *AttnShape) { s.DType = ir.F16 }},
		{"f16_bshd_causal_split4", 4, func(s *AttnShape) { s.DType, s.BSHD, s.Causal, s.Sq, s.Skv = ir.F16, true, true, 33, 77 }},
		{"dqk48_dv32_scale_split2", 2, func(s *AttnShape) { s.Dqk, s.Scale = 48, 0.3 }},
	}
	for _, tc := range cases {
		s := base
		tc.mod(&s)
		t.Run(tc.name, func(t *testing.T) { checkAttentionSplit(t, s, cfg, tc.splits) })
	}
}

func checkAttentionSplit(t *testing.T, s AttnShape, c AttnConfig, splits int) {
	t.Helper()
	args := FlashAttentionSplitInputs(s, splits, 7)
	if err := RunFlashAttentionSplit(s, c, splits, args, ir.DefaultLimits, interp.Run); err != nil {
		t.Fatal(err)
	}
	checkSplitResult(t, s, c, args)
}

// checkSplitResult compares O and LSE (args[3], args[4]) of a split path,
// run on inputs of seed 7, with float64 and with the single program.
func checkSplitResult(t *testing.T, s AttnShape, c AttnConfig, args []*tensor.Tensor) {
	t.Helper()
	var do, dl ref.Diff
	CheckAttentionRows(s, args, AllRows(s), &do, &dl)
	t.Logf("vs float64: O rel %.3g, LSE rel %.3g", do.Rel(), dl.Rel())
	if do.Bad > 0 || dl.Bad > 0 || do.Rel() > Tolerance(s.DType) || dl.Rel() > LSETolerance {
		t.Errorf("vs float64: O: %s; LSE: %s", &do, &dl)
	}

	// The single program on the same inputs.
	fn, err := FlashAttention(s, c).Build()
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
	// The pieces round P to the dtype the same way; only the f32 sums'
	// order and the output's final rounding differ.
	t.Logf("vs single program: O rel %.3g, LSE rel %.3g", so.Rel(), sl.Rel())
	if so.Bad > 0 || sl.Bad > 0 || so.Rel() > Tolerance(s.DType)/2 || sl.Rel() > 1e-5 {
		t.Errorf("vs single program: O: %s; LSE: %s", &so, &sl)
	}
}

// Rows that see no key get O = 0 and LSE = -inf through the combine.
func TestFlashAttentionSplitEmptyRows(t *testing.T) {
	s := AttnShape{B: 1, H: 1, HKV: 1, Sq: 40, Skv: 20, Dqk: 32, Dv: 32, DType: ir.BF16, Causal: true}
	c := AttnConfig{M: 16, N: 16, Stages: 1, Threads: 128}
	args := FlashAttentionSplitInputs(s, 3, 1)
	if err := RunFlashAttentionSplit(s, c, 3, args, ir.DefaultLimits, interp.Run); err != nil {
		t.Fatal(err)
	}
	for i := range s.Sq - s.Skv { // row i sees keys j <= i - 20
		if l := args[4].At(0, 0, i); !math.IsInf(l, -1) {
			t.Errorf("row %d: LSE %g, want -inf", i, l)
		}
		for d := range s.Dv {
			if o := args[3].At(0, 0, i, d); o != 0 {
				t.Fatalf("row %d: O[%d] = %g, want 0", i, d, o)
			}
		}
	}
}

// Both programs generate CUDA for sm_80 and sm_90a at GPU-sized tiles (no
// GPU needed: the source is not compiled here).
func TestFlashAttentionSplitEmitCUDA(t *testing.T) {
	shapes := []AttnShape{
		{B: 1, H: 4, HKV: 4, Sq: 512, Skv: 8192, Dqk: 128, Dv: 128, DType: ir.BF16},
		{B: 1, H: 8, HKV: 2, Sq: 300, Skv: 4000, Dqk: 128, Dv: 128, DType: ir.F16, Causal: true, BSHD: true},
		{B: 2, H: 2, HKV: 2, Sq: 256, Skv: 2048, Dqk: 64, Dv: 64, DType: ir.BF16, Causal: true},
	}
	for _, s := range shapes {
		c := AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
		if s.Dqk == 64 {
			c = AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}
		}
		steps, err := FlashAttentionSplitSteps(s, c, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			fn, err := st.Func.Build(ir.DefaultLimits)
			if err != nil {
				t.Fatalf("%+v: %v", s, err)
			}
			for _, arch := range []string{"sm_80", "sm_90a"} {
				prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
				if err != nil {
					t.Errorf("%+v %s %s: %v", s, fn.Name, arch, err)
					continue
				}
				if !strings.Contains(prog.Source, "__global__") {
					t.Errorf("%+v %s %s: no kernel in the source", s, fn.Name, arch)
				}
			}
		}
	}
}

// The steps' tensor indices match FlashAttentionSplitInputs.
func TestFlashAttentionSplitSteps(t *testing.T) {
	s := AttnShape{B: 1, H: 2, HKV: 1, Sq: 20, Skv: 30, Dqk: 32, Dv: 32, DType: ir.F16}
	c := AttnConfig{M: 16, N: 16, Stages: 1, Threads: 128}
	if _, err := FlashAttentionSplitSteps(s, c, 0); err == nil {
		t.Error("0 splits: no error")
	}
	for _, splits := range []int{1, 2} {
		steps, err := FlashAttentionSplitSteps(s, c, splits)
		if err != nil {
			t.Fatal(err)
		}
		args := FlashAttentionSplitInputs(s, splits, 1)
		for _, st := range steps {
			fn, err := st.Func.Build()
			if err != nil {
				t.Fatal(err)
			}
			if len(fn.Params) != len(st.Args) {
				t.Fatalf("%s: %d params, %d args", fn.Name, len(fn.Params), len(st.Args))
			}
			for i, a := range st.Args {
				p, got := fn.Params[i], args[a]
				shape, ok := p.StaticShape()
				if !ok || fmt.Sprint(shape) != fmt.Sprint(got.Shape) || p.DType != got.DType {
					t.Errorf("%s param %s: %s %v, arg %d is %s %v", fn.Name, p.Name, p.DType, shape, a, got.DType, got.Shape)
				}
			}
		}
	}
}

// The split count follows TailSplits, and the programs follow the grid:
// every block cut for one wave, the last wave's for more.
func TestFlashAttentionSplits(t *testing.T) {
	c := AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
	s := AttnShape{B: 1, H: 4, HKV: 4, Sq: 128, Skv: 8192, Dqk: 128, Dv: 128, DType: ir.BF16}
	n := FlashAttentionSplits(s, c, 132)
	if want := TailSplits(SplitGrid{Blocks: 4, Keys: 8192, Dim: 128, SMs: 132}); n != want || n < 2 {
		t.Errorf("4 blocks over 8192 keys: %d splits, want TailSplits' %d (> 1)", n, want)
	}
	if st, err := TailSplitSteps(s, c, 132, n); err != nil || stepName(t, st[0]) != "flash_attention_split" {
		t.Errorf("one wave: %v %v", st, err)
	}
	s.Sq = 128 * 34 // 136 blocks: a wave and a tail of 4
	n = FlashAttentionSplits(s, c, 132)
	if n < 2 || 4*n > 132 {
		t.Errorf("a tail of 4: %d splits", n)
	}
	if st, err := TailSplitSteps(s, c, 132, n); err != nil || stepName(t, st[0]) != "flash_attention_tail" {
		t.Errorf("two waves: %v %v", st, err)
	}
	if got := len(TailSplitInputs(s, c, 132, n, 1)); got != 7 {
		t.Errorf("%d tensors", got)
	}
	s.Skv, s.Sq = 256, 128 // too short to cut
	if got := FlashAttentionSplits(s, c, 132); got != 1 {
		t.Errorf("256 keys: %d splits, want 1", got)
	}
	if st, err := TailSplitSteps(s, c, 132, 1); err != nil || len(st) != 1 || stepName(t, st[0]) != "flash_attention" {
		t.Errorf("one split: %v %v", st, err)
	}
}

// stepName is the name of the program a step builds.
func stepName(t *testing.T, st Step) string {
	t.Helper()
	fn, err := st.Func.Build()
	if err != nil {
		t.Fatal(err)
	}
	return fn.Name
}
