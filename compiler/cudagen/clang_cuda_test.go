package cudagen_test

import (
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/clangcuda"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
)

// clangCUDA compiles p's CUDA C++ (the device library inlined) for arch
// with clang (internal/clangcuda).
func clangCUDA(t *testing.T, p *cudagen.Program, arch string) {
	t.Helper()
	if err := clangcuda.Compile(p.FullSource(), arch); err != nil {
		t.Errorf("%s: %v", p.Name, err)
	}
}

// The library's programs, the edge programs and the examples compile as
// CUDA C++ for each CUDA target as that target: sm_80 (no sm_90 helper
// may reach it; its PTX is assembled), sm_90 (the mma.sync path on
// Hopper, without sm_90a's wgmma) and sm_90a.
func TestCUDASourcesCompile(t *testing.T) {
	for _, arch := range []string{"sm_80", "sm_90a"} {
		if !clangcuda.Assembles(arch) {
			t.Fatalf("no %s on the PATH that assembles %s (.ci/run installs Debian trixie's, CUDA 12.4)", clangcuda.Ptxas, arch)
		}
	}
	var fns []struct {
		name string
		fn   *ir.Func
		arch string
	}
	add := func(name, arch string, fn *ir.Func) {
		fns = append(fns, struct {
			name string
			fn   *ir.Func
			arch string
		}{name, fn, arch})
	}
	for _, arch := range []string{"sm_80", "sm_90", "sm_90a"} {
		for _, tc := range []struct {
			kernel string
			vals   map[string]string
		}{
			{"flash-attention", map[string]string{"dim": "128", "seq-q": "1000", "causal": "true"}},
			{"flash-attention", map[string]string{"dim": "256", "seq-q": "8192"}},
			{"flash-attention", map[string]string{"dim": "64", "seq-q": "2048", "heads": "8", "seq-kv": "8192", "splits": "0"}},
			{"flash-attention", map[string]string{"dim": "64", "seq-q": "300", "window": "50,0", "softcap": "20", "doc-lens": "100,200"}},
			{"flash-attention-bwd", map[string]string{"dim": "128", "seq-q": "500", "causal": "true", "alibi": "true"}},
			{"flash-attention-bwd", map[string]string{"dim": "256", "seq-q": "300"}},
			{"flash-attention-varlen-bwd", map[string]string{}},
			{"flash-attention-kvcache", map[string]string{}},
			{"mla-decode", map[string]string{"batch": "16", "heads": "128", "mean-kv": "2000", "splits": "0"}},
			{"gemm", map[string]string{"m": "1000", "n": "600", "k": "300", "bias": "true", "act": "gelu"}},
			{"gemm", map[string]string{"m": "512", "n": "512", "k": "4096", "split-k": "4"}},
			{"rmsnorm", map[string]string{}},
			{"softmax", map[string]string{}},
			{"layernorm", map[string]string{}},
		} {
			for _, fn := range libraryPrograms(t, tc.kernel, tc.vals, arch, "") {
				add(tc.kernel, arch, fn)
			}
		}
		for name, prog := range testprog.Edges {
			fn, err := prog().Build(cudagen.Limits(arch))
			if err != nil {
				t.Fatal(err)
			}
			add(name, arch, fn)
		}
		adds, err := testprog.SharedTileAdds().Build(cudagen.Limits(arch))
		if err != nil {
			t.Fatal(err)
		}
		add("shared_tile_adds", arch, adds)
		for name, ex := range testprog.Examples {
			if name == "gemm_fp8" && arch != "sm_90a" {
				continue
			}
			fn, err := ex.Prog().Build(cudagen.Limits(arch))
			if err != nil {
				t.Fatal(err)
			}
			add(name, arch, fn)
		}
	}
	for _, x := range fns {
		p, err := cudagen.Compile(x.fn, cudagen.Options{Arch: x.arch})
		if err != nil {
			t.Errorf("%s for %s: %v", x.name, x.arch, err)
			continue
		}
		clangCUDA(t, p, x.arch)
	}
}
