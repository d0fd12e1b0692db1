//go:build gpu

package cuda

import (
	"testing"

	"github.com/tilego/tilego/internal/testprog"
)

// The sm_80 path as an A100 compiles it: on a Hopper, programs emitted for
// sm_80 compile to compute_80 PTX (nvrtcArch), so the device library's
// sm_80 code is what runs (elsewhere the tests' mma.sync path is sm_90's).
// The edge programs and the examples against the interpreter, and the
// library's kernels that call the helpers once kept for sm_90 only (the
// backward's f32 reductions, MLA's direct stores) against float64.
func TestGPUSm80(t *testing.T) {
	b := openGPU(t)
	for name, prog := range testprog.Edges {
		fn, err := prog().Build(b.Limits())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Run("edge/"+name, func(t *testing.T) { againstInterp(t, b, "sm_80", fn, 1e-5) })
	}
	for name, ex := range testprog.Examples {
		if name == "gemm_fp8" {
			continue // mma.sync takes no 8-bit floats
		}
		fn, err := ex.Prog().Build(b.Limits())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Run("example/"+name, func(t *testing.T) { againstInterp(t, b, "sm_80", fn, ex.Tol) })
	}
	runCasesGPU(t, b, "flash-attention", []string{"sm_80"}, map[string]string{"seq-q": "300", "dim": "128", "causal": "true", "heads": "4"})
	runCasesGPU(t, b, "flash-attention-bwd", []string{"sm_80"},
		map[string]string{"seq-q": "200", "dim": "64", "causal": "true", "heads": "4", "heads-kv": "2"},
		map[string]string{"seq-q": "130", "dim": "256", "heads": "2"})
	runCasesGPU(t, b, "mla-decode", []string{"sm_80"}, map[string]string{"batch": "4", "heads": "16", "mean-kv": "300"})
}
