//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// openGPU opens device 0; without one the tests skip, unless
// TILEGO_REQUIRE_GPU is set (as on the device machine), where they fail.
func openGPU(t *testing.T) *Backend {
	t.Helper()
	b, err := Open(0)
	if err != nil {
		if os.Getenv("TILEGO_REQUIRE_GPU") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return b
}

// archs are the code paths to test on this device: on Hopper both the
// wgmma path (sm_90a) and the mma.sync path every GPU since sm_80 takes.
func archs(b *Backend) []string {
	if b.arch == "sm_90a" {
		return []string{"sm_90a", "sm_90"}
	}
	return []string{b.arch}
}

// runPoisoned compiles and runs f once on fresh device copies of args, with
// every output poisoned (all bytes 0xFF, NaN) just before the launch.
func runPoisoned(t *testing.T, b *Backend, arch string, f *ir.Func, args []*tensor.Tensor) {
	t.Helper()
	runPoisonedWith(t, b, cudagen.Options{Arch: arch}, f, args)
}

// runPoisonedWith is runPoisoned compiling with opts; it returns the program.
func runPoisonedWith(t *testing.T, b *Backend, opts cudagen.Options, f *ir.Func, args []*tensor.Tensor) *cudagen.Program {
	t.Helper()
	p, err := cudagen.Compile(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Prepare(b, p, args)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Free()
	runs := 1
	if p.Counter { // a drawn walk must leave its counter zeroed for the next launch (grid_loop.go)
		runs = 3
	}
	for range runs {
		if err := l.Poison(); err != nil {
			t.Fatal(err)
		}
		if err := l.Once(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Download(args); err != nil {
		t.Fatal(err)
	}
	if p.Counter {
		var n [4]byte
		if err := b.dev.CopyDtoH(n[:], drv.Buffer{Ptr: l.counter.Ptr, Size: 4}); err != nil {
			t.Fatal(err)
		}
		if n != [4]byte{} {
			t.Errorf("the walk's counter is %v after %d launches, want 0", n, runs)
		}
	}
	return p
}

func TestGPUGemm(t *testing.T) {
	b := openGPU(t)
	shapes := []kernels.GemmShape{{M: 128, N: 128, K: 64}, {M: 200, N: 136, K: 96}, {M: 77, N: 130, K: 40}}
	cfgs := []kernels.GemmConfig{
		{BM: 64, BN: 64, BK: 32, Stages: 3, Threads: 128},
		{BM: 128, BN: 128, BK: 32, Stages: 2, Threads: 256, Raster: 4},
		{BM: 64, BN: 128, BK: 64, Stages: 2, Threads: 256}, // 64 rows over 8 warps; with SwitchWGSplit on, two warpgroups split N on sm_90a
	}
	for _, s0 := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for ci, c := range cfgs {
					for _, dt := range []ir.DType{ir.BF16, ir.F16} {
						s := s0
						s.TransA, s.TransB, s.DType, s.OutDType = ta, tb, dt, ir.F32
						if ci == 1 {
							s.OutDType = dt
						}
						for _, arch := range archs(b) {
							name := fmt.Sprintf("%s/%dx%dx%d_ta%v_tb%v_%s_cfg%d", arch, s.M, s.N, s.K, ta, tb, dt, ci)
							t.Run(name, func(t *testing.T) { checkGemmGPU(t, b, arch, s, c) })
						}
					}
				}
			}
		}
	}
}

func checkGemmGPU(t *testing.T, b *Backend, arch string, s kernels.GemmShape, c kernels.GemmConfig) {
	f, err := kernels.Gemm(s, c).Build()
	if err != nil {
		t.Fatal(err)
	}
	args := kernels.GemmInputs(s, uint64(s.M*7+s.N*3+s.K))
	a, bb, out := args[0], args[1], args[2]
	runPoisoned(t, b, arch, f, []*tensor.Tensor{a, bb, out})
	_, n, want := ref.Gemm(a, bb, s.TransA, s.TransB)
	var d ref.Diff
	for i := range s.M {
		for j := range s.N {
			d.Add(out.At(i, j), want[i*n+j])
		}
	}
	if d.Rel() > kernels.Tolerance(s.OutDType) {
		t.Errorf("%s", &d)
	}
}

// fitAttn is c cut to fit s's head dims in shared memory: 32 keys a tile
// from d256, two stages where Q and K rows together pass 256 columns. The
// GPU tests then expect every case to compile: they fail, not skip, on a
// refusal.
func fitAttn(s kernels.AttnShape, c kernels.AttnConfig) kernels.AttnConfig {
	if s.Dqk >= 256 {
		c.N = 32
	}
	if s.Dqk+s.Dv > 256 && c.Stages > 2 {
		c.Stages = 2
	}
	return c
}

func attnCases() map[string]kernels.AttnShape {
	base := kernels.AttnShape{B: 2, H: 2, HKV: 2, Sq: 200, Skv: 200, Dqk: 64, Dv: 64, DType: ir.BF16}
	mods := map[string]func(*kernels.AttnShape){
		"mha":             func(*kernels.AttnShape) {},
		"causal":          func(s *kernels.AttnShape) { s.Causal = true },
		"causal_sq<skv":   func(s *kernels.AttnShape) { s.Causal, s.Sq, s.Skv = true, 77, 301 },
		"causal_sq>skv":   func(s *kernels.AttnShape) { s.Causal, s.Sq, s.Skv = true, 190, 65 },
		"noncausal_odd":   func(s *kernels.AttnShape) { s.Sq, s.Skv = 45, 167 },
		"gqa":             func(s *kernels.AttnShape) { s.H, s.HKV = 8, 2 },
		"mqa_causal":      func(s *kernels.AttnShape) { s.H, s.HKV, s.Causal = 4, 1, true },
		"d96":             func(s *kernels.AttnShape) { s.Dqk, s.Dv = 96, 96 },
		"d128":            func(s *kernels.AttnShape) { s.Dqk, s.Dv = 128, 128 },
		"d128_causal":     func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.Causal = 128, 128, true },
		"d256":            func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.Sq, s.Skv = 256, 256, 150, 170 },
		"dqk192_dv128":    func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.Causal = 192, 128, true },
		"bshd":            func(s *kernels.AttnShape) { s.BSHD = true },
		"bshd_gqa_causal": func(s *kernels.AttnShape) { s.BSHD, s.H, s.HKV, s.Causal, s.Sq = true, 4, 2, true, 161 },
		"f16":             func(s *kernels.AttnShape) { s.DType = ir.F16 },
		"f16_causal_odd":  func(s *kernels.AttnShape) { s.DType, s.Causal, s.Sq, s.Skv = ir.F16, true, 150, 277 },
		"scale":           func(s *kernels.AttnShape) { s.Scale = 0.3 },
	}
	out := map[string]kernels.AttnShape{}
	for name, m := range mods {
		s := base
		m(&s)
		out[name] = s
	}
	return out
}

func TestGPUFlashAttention(t *testing.T) {
	b := openGPU(t)
	cfgs := []kernels.AttnConfig{{M: 64, N: 64, Stages: 2, Threads: 128}, {M: 128, N: 64, Stages: 2, Threads: 256},
		{M: 128, N: 64, Stages: 2, Threads: 256, Prefetch: true}, {M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Prefetch: true}}
	for name, s := range attnCases() {
		for ci, c := range cfgs {
			if s.Dqk >= 256 && ci == 1 {
				c.N = 32
			}
			for _, arch := range archs(b) {
				t.Run(fmt.Sprintf("%s/%s_cfg%d", arch, name, ci), func(t *testing.T) {
					f, err := kernels.FlashAttention(s, c).Build(b.Limits())
					if err != nil {
						t.Fatal(err)
					}
					args := kernels.AttentionInputs(s, 11)
					runPoisoned(t, b, arch, f, args)
					var do, dl ref.Diff
					kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
					if do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
						t.Errorf("O: %s; LSE: %s", &do, &dl)
					}
				})
			}
		}
	}
}

// A large shape, checked on a random sample of query rows.
func TestGPUFlashAttentionLarge(t *testing.T) {
	b := openGPU(t)
	s := kernels.AttnShape{B: 2, H: 16, HKV: 16, Sq: 2048, Skv: 2048, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16}
	f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build(b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	args := kernels.AttentionInputs(s, 5)
	runPoisoned(t, b, b.arch, f, args)
	var do, dl ref.Diff
	kernels.CheckAttentionRows(s, args, kernels.SampleRows(s, 64, 3), &do, &dl)
	if do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
	// And the backend's own Run path, timed.
	res, err := b.Run(f, args, backend.RunOptions{Warmup: 2, Repeats: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2x16x2048x128 causal: %v", res.Time)
}

// A program with a symbolic size, default fragment layouts, reductions
// across warps and an atomic add, against the interpreter's answer.
func TestGPURowScale(t *testing.T) {
	b := openGPU(t)
	fn, err := testprog.RowScale().Build(b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs(b) {
		for _, M := range []int{32, 100, 7} {
			t.Run(fmt.Sprintf("%s/M%d", arch, M), func(t *testing.T) {
				x := tensor.New(ir.BF16, M, 64).Rand(uint64(M), 1)
				want := []*tensor.Tensor{x, tensor.New(ir.F32, M, 64), tensor.New(ir.F32, 1)}
				if err := interp.Run(fn, want); err != nil {
					t.Fatal(err)
				}
				got := []*tensor.Tensor{x, tensor.New(ir.F32, M, 64), tensor.New(ir.F32, 1)}
				runPoisoned(t, b, arch, fn, got)
				var d ref.Diff
				for i := range got[1].Data {
					d.Add(got[1].Data[i], want[1].Data[i])
				}
				if d.Rel() != 0 {
					t.Errorf("Y: %s", &d)
				}
				if g, w := got[2].At(0), want[2].At(0); math.Abs(g-w) > 1e-5*math.Abs(w) {
					t.Errorf("A = %g, want %g", g, w)
				}
			})
		}
	}
}
