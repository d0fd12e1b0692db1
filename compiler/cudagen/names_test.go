package cudagen_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// A user's program whose tensors take names the generated code declares
// (the thread index, the shared-memory base, loop temporaries, C++ words)
// compiles with them renamed and computes the interpreter's answer: on
// gfx942 emulated (clang compiles its source), on sm_90a and sm_80 to
// source that declares the renamed names (TestCUDASourcesCompile compiles
// it); the program keeps its own names.
func TestClashingNames(t *testing.T) {
	const rows, cols = 64, 96
	f := testprog.Edges["clashing_names"]()
	args := []*tensor.Tensor{tensor.New(ir.F32, rows, cols).Rand(1, 1), tensor.New(ir.F32, cols).Rand(2, 1), tensor.New(ir.F32, rows)}
	src := emulateAgainstInterp(t, f, args)
	for _, arch := range []string{"sm_90a", "sm_80"} {
		fn, err := f.Build(cudagen.Limits(arch))
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		src += p.Source
	}
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"}); err != nil {
		t.Fatal(err)
	}
	if fn.Params[0].Name != "lane" || fn.Kernel.Allocs[0].Name != "tid" {
		t.Errorf("the program's names after a compile: %s, %s; want lane, tid", fn.Params[0].Name, fn.Kernel.Allocs[0].Name)
	}
	for _, want := range []string{"float tid_[", "float* __restrict__ lane_", "int_", "val_", "float ok_[", "float c3_["} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in the generated code", want)
		}
	}
}

// declared finds the names a generated program declares: variables,
// arrays, pointers and parameters of the types it uses.
var declared = regexp.MustCompile(`\b(?:int|float|double|unsigned|bool|auto|uint4|uint2|float2|float4|half2|u?int(?:8|16|32|64)_t)\s*[*&]?\s*(?:__restrict__\s+)?(?:\(&)?([A-Za-z_]\w*)\s*(?:=|\[|;|,|\)|:)`)

// The names the emitter makes up itself are the ones emitSafeNames keeps
// a program's tensors and sizes away from: every name the library's
// programs declare that is not the program's own is reservedName's, and
// none ends in "_", which renamed names do.
func TestGeneratedNames(t *testing.T) {
	cases := []struct {
		kernel, arch string
		vals         map[string]string
		config       string
	}{
		{"flash-attention", "sm_90a", map[string]string{"dim": "128", "seq-q": "1000", "causal": "true"}, ""},
		{"flash-attention", "sm_90a", map[string]string{"dim": "128", "seq-q": "4096", "batch": "4", "heads": "16"}, "ws overlap pingpong persistent"},
		{"flash-attention", "sm_90a", map[string]string{"dim": "64", "seq-q": "2048", "heads": "8", "seq-kv": "8192", "splits": "0"}, ""},
		{"flash-attention", "sm_80", map[string]string{"dim": "64", "seq-q": "300", "window": "50,0", "softcap": "20"}, ""},
		{"flash-attention", "gfx942", map[string]string{"dim": "128", "seq-q": "300", "causal": "true"}, ""},
		{"flash-attention-bwd", "sm_90a", map[string]string{"dim": "128", "seq-q": "500", "causal": "true"}, ""},
		{"flash-attention-bwd", "gfx942", map[string]string{"dim": "64", "seq-q": "300"}, ""},
		{"flash-attention-kvcache", "sm_90a", map[string]string{}, ""},
		{"mla-decode", "sm_90a", map[string]string{"batch": "16", "heads": "128", "mean-kv": "2000", "splits": "0"}, ""},
		{"gemm", "sm_90a", map[string]string{"m": "1000", "n": "600", "k": "300", "bias": "true", "act": "gelu"}, "ws"},
		{"gemm", "sm_90a", map[string]string{"m": "512", "n": "512", "k": "4096", "split-k": "4"}, ""},
		{"gemm", "gfx942", map[string]string{"m": "300", "n": "200", "k": "96", "trans-b": "true"}, ""},
		{"rmsnorm", "sm_90a", map[string]string{}, ""},
		{"softmax", "sm_80", map[string]string{}, ""},
		{"layernorm", "gfx942", map[string]string{}, ""},
		{"flash-attention", "sm_90a", map[string]string{"dim": "256", "seq-q": "1024"}, "ws overlap persistent direct"},
		{"flash-attention", "sm_90a", map[string]string{"dim": "128", "seq-q": "2048", "batch": "2"}, "ws cluster=2"},
		{"flash-attention", "sm_90a", map[string]string{"dim": "128", "seq-q": "512", "causal": "true", "batch": "32"}, "ws pingpong persistent draw"},
		{"flash-attention", "sm_90a", map[string]string{"dim": "128", "heads": "8", "seq-q": "512", "seq-kv": "8192", "splits": "0"}, ""},
		{"flash-attention-varlen", "sm_90a", map[string]string{}, ""},
		{"flash-attention-varlen-bwd", "sm_90a", map[string]string{}, ""},
		{"mla-decode", "sm_90a", map[string]string{"batch": "64", "heads": "128", "mean-kv": "8192", "splits": "0"}, "merge=true early=false"},
		{"mla-decode", "sm_80", map[string]string{"batch": "64", "heads": "128", "mean-kv": "8192", "splits": "0"}, ""},
		{"gemm", "sm_80", map[string]string{"m": "1000", "n": "600", "k": "300", "trans-a": "true", "residual": "true"}, ""},
		{"gemm", "sm_90a", map[string]string{"m": "4096", "n": "4096", "k": "4096", "dtype": "f8e4m3", "trans-b": "true", "scale-a": "row", "scale-b": "col"}, "promote"},
		{"rmsnorm", "gfx942", map[string]string{}, ""},
		{"softmax", "sm_90a", map[string]string{"rows": "4096", "cols": "16384"}, ""},
		{"layernorm", "sm_80", map[string]string{}, ""},
	}
	for _, tc := range cases {
		for _, fn := range libraryPrograms(t, tc.kernel, tc.vals, tc.arch, tc.config) {
			prog, err := cudagen.Compile(fn, cudagen.Options{Arch: tc.arch})
			if err != nil {
				t.Fatalf("%s %s: %v", tc.kernel, tc.arch, err)
			}
			own := ownNames(fn)
			seen := map[string]bool{}
			// The kernel's body: helpers before it have scopes of their own.
			body := prog.Source[strings.Index(prog.Source, "__global__"):]
			for _, m := range declared.FindAllStringSubmatch(body, -1) {
				n := m[1]
				if own[n] || own[strings.TrimRight(n, "_")] || seen[n] { // the program's own, maybe renamed
					continue
				}
				seen[n] = true
				if !cudagen.ReservedName(n) {
					t.Errorf("%s (%s, %s) declares %q, which a program's tensor could be named", fn.Name, tc.kernel, tc.arch, n)
				}
				if strings.HasSuffix(n, "_") {
					t.Errorf("%s (%s, %s) declares %q, ending in the renamed names' \"_\"", fn.Name, tc.kernel, tc.arch, n)
				}
			}
		}
	}
}

// ownNames are fn's names: its tensors', sizes', loop variables' and block
// indices'.
func ownNames(fn *ir.Func) map[string]bool {
	own := map[string]bool{fn.Name: true}
	for _, b := range fn.Params {
		own[b.Name] = true
	}
	for _, v := range fn.Syms {
		own[v.Name] = true
	}
	if fn.SMs != nil {
		own[fn.SMs.Name] = true
	}
	for _, b := range fn.Kernel.Allocs {
		own[b.Name] = true
	}
	for _, v := range fn.Kernel.Idx {
		own[v.Name] = true
	}
	ir.Walk(fn.Kernel.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.For:
			own[s.Var.Name] = true
		case *ir.Parallel:
			for _, v := range s.Vars {
				own[v.Name] = true
			}
		}
	})
	return own
}
