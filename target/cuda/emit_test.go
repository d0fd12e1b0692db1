package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// The library's kernels must compile to CUDA for every variant the
// interpreter tests cover; what the source says is checked on the GPU.
func TestEmitLibrary(t *testing.T) {
	progs := map[string]func() (*ir.Func, error){
		"flash": func() (*ir.Func, error) {
			return kernels.FlashAttention(kernels.AttnShape{B: 1, H: 2, HKV: 1, Sq: 100, Skv: 130, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16}, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}).Build()
		},
		"gemm": func() (*ir.Func, error) {
			return kernels.Gemm(kernels.GemmShape{M: 200, N: 300, K: 96, TransB: true, DType: ir.F16, OutDType: ir.F32}, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 3, Threads: 128}).Build()
		},
	}
	for name, build := range progs {
		f, err := build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range []string{"__global__", "mma_", "ldmatrix", "cp_async16"} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: generated code lacks %s", name, want)
			}
		}
		if os.Getenv("TILEGO_SHOW") != "" {
			t.Logf("%s:\n%s", name, p.Source)
		}
	}
}

// On sm_90a the library's gemms become wgmma with descriptors; P·V takes
// P from registers.
func TestEmitWGMMA(t *testing.T) {
	f, err := kernels.FlashAttention(kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 256, Skv: 256, Dqk: 128, Dv: 128, DType: ir.BF16},
		kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wgmma_m64n128k16_ss_bf16<0, 0>", "wgmma_m64n128k16_rs_bf16<1>", "tl::desc(", "fence_proxy_async", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"} {
		if !strings.Contains(p.Source, want) {
			t.Errorf("no %s in the sm_90a code", want)
		}
	}
	if os.Getenv("TILEGO_SHOW") != "" {
		t.Logf("%s", p.Source)
	}
}

// Programs outside the library (symbolic sizes, default layouts, reductions
// across warps, atomics) compile on both paths.
func TestEmitRowScale(t *testing.T) {
	f, err := testprog.RowScale().Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		p, err := Compile(f, Options{Arch: arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		for _, want := range []string{"const int M", "atomicAdd", "tl::shfl_xor", "smem + "} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: no %q in the code", arch, want)
			}
		}
		if os.Getenv("TILEGO_SHOW") != "" {
			t.Logf("%s", p.Source)
		}
	}
}
