package kernels

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

func TestGemmInterp(t *testing.T) {
	shapes := []GemmShape{
		{M: 64, N: 64, K: 64},
		{M: 70, N: 45, K: 83}, // odd: partial tiles on every edge
		{M: 33, N: 130, K: 17},
	}
	cfg := GemmConfig{BM: 32, BN: 32, BK: 32, Stages: 2, Threads: 128}
	for _, sh := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, dt := range []ir.DType{ir.F16, ir.BF16} {
					s := sh
					s.TransA, s.TransB, s.DType, s.OutDType = ta, tb, dt, ir.F32
					t.Run(fmt.Sprintf("%dx%dx%d_ta%v_tb%v_%s", s.M, s.N, s.K, ta, tb, dt), func(t *testing.T) {
						checkGemm(t, s, cfg)
					})
				}
			}
		}
	}
}

func checkGemm(t *testing.T, s GemmShape, c GemmConfig) {
	t.Helper()
	fn, err := Gemm(s, c).Build()
	if err != nil {
		t.Fatal(err)
	}
	args := GemmInputs(s, 1)
	a, b, out := args[0], args[1], args[2]
	if err := interp.Run(fn, []*tensor.Tensor{a, b, out}); err != nil {
		t.Fatal(err)
	}
	_, n, want := ref.Gemm(a, b, s.TransA, s.TransB)
	var d ref.Diff
	for i := range s.M {
		for j := range s.N {
			d.Add(out.At(i, j), want[i*n+j])
		}
	}
	if d.Rel() > 1e-5 {
		t.Errorf("%s", &d)
	}
}

// attnCase builds random inputs for a shape, runs the kernel on the
// interpreter and compares every output element and LSE with float64.
func checkAttention(t *testing.T, s AttnShape, c AttnConfig) {
	t.Helper()
	fn, err := FlashAttention(s, c).Build()
	if err != nil {
		t.Fatal(err)
	}
	args := AttentionInputs(s, 7)
	if err := interp.Run(fn, args); err != nil {
		t.Fatal(err)
	}
	var do, dl ref.Diff
	CheckAttentionRows(s, args, AllRows(s), &do, &dl)
	tol := Tolerance(s.DType)
	if do.Rel() > tol || dl.Rel() > 1e-4 {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
}

func TestFlashAttentionInterp(t *testing.T) {
	base := AttnShape{B: 2, H: 2, HKV: 2, Sq: 80, Skv: 80, Dqk: 64, Dv: 64, DType: ir.BF16}
	cfg := AttnConfig{M: 32, N: 32, Stages: 2, Threads: 128}
	cases := map[string]func(*AttnShape){
		"mha":             func(*AttnShape) {},
		"causal":          func(s *AttnShape) { s.Causal = true },
		"causal_sq<skv":   func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 37, 101 },
		"causal_sq>skv":   func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 90, 45 },
		"causal_4_tiles":  func(s *AttnShape) { s.Causal, s.Sq, s.Skv, s.H, s.HKV = true, 120, 150, 3, 3 }, // persistent: 12 tile pairs over 3 blocks
		"noncausal_odd":   func(s *AttnShape) { s.Sq, s.Skv = 45, 67 },
		"gqa":             func(s *AttnShape) { s.H, s.HKV = 4, 2 },
		"mqa_causal":      func(s *AttnShape) { s.H, s.HKV, s.Causal = 4, 1, true },
		"d96":             func(s *AttnShape) { s.Dqk, s.Dv = 96, 96 },
		"d128":            func(s *AttnShape) { s.Dqk, s.Dv = 128, 128 },
		"d256":            func(s *AttnShape) { s.Dqk, s.Dv, s.Sq, s.Skv = 256, 256, 40, 50 },
		"dqk192_dv128":    func(s *AttnShape) { s.Dqk, s.Dv, s.Causal = 192, 128, true },
		"bshd":            func(s *AttnShape) { s.BSHD = true },
		"bshd_gqa_causal": func(s *AttnShape) { s.BSHD, s.H, s.HKV, s.Causal, s.Sq = true, 4, 2, true, 61 },
		"f16":             func(s *AttnShape) { s.DType = ir.F16 },
		"f16_causal_odd":  func(s *AttnShape) { s.DType, s.Causal, s.Sq, s.Skv = ir.F16, true, 50, 77 },
		"scale":           func(s *AttnShape) { s.Scale = 0.3 },
	}
	for name, mod := range cases {
		s := base
		mod(&s)
		t.Run(name, func(t *testing.T) { checkAttention(t, s, cfg) })
	}
	// Prefetching the next wave's tiles is a hint: results must not move,
	// the last blocks (no next wave) included.
	pf := cfg
	pf.Prefetch = true
	for _, name := range []string{"mha", "causal_sq>skv", "mqa_causal", "bshd_gqa_causal"} {
		s := base
		cases[name](&s)
		t.Run("prefetch_"+name, func(t *testing.T) { checkAttention(t, s, pf) })
	}
	// A persistent grid (interp.InterpSMs blocks) walks every tile once.
	for _, name := range []string{"mha", "causal", "causal_sq<skv", "causal_4_tiles", "gqa", "d256"} {
		s := base
		cases[name](&s)
		for _, c := range []AttnConfig{{M: 32, N: 32, Stages: 2, Threads: 128, Persistent: true}, {M: 32, N: 32, Stages: 2, Threads: 128, Persistent: true, Prefetch: true}, {M: 32, N: 32, Stages: 2, Threads: 128, Persistent: true, Direct: true}} {
			t.Run(fmt.Sprintf("persistent_%s_prefetch=%v_direct=%v", name, c.Prefetch, c.Direct), func(t *testing.T) { checkAttention(t, s, c) })
		}
	}
}
