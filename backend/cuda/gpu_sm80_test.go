//go:build gpu

package cuda

import (
	"testing"
)

// The sm_80 path as an A100 compiles it: on a Hopper, programs emitted for
// sm_80 compile to compute_80 PTX (nvrtcArch), so the device library's
// sm_80 code is what runs (elsewhere the tests' mma.sync path is sm_90's).
// The edge programs and the examples against the interpreter, and the
// library's kernels that call the device library's helpers of every
// target (the backward's f32 reductions, MLA's direct stores) against
// float64.
func TestGPUSm80(t *testing.T) {
	b := openGPU(t)
	testProgs(t, b, []string{"sm_80"}, false)
	testProgs(t, b, []string{"sm_80"}, true)
	runCasesGPU(t, b, "flash-attention", []string{"sm_80"}, map[string]string{"seq-q": "300", "dim": "128", "causal": "true", "heads": "4"})
	runCasesGPU(t, b, "flash-attention-bwd", []string{"sm_80"},
		map[string]string{"seq-q": "200", "dim": "64", "causal": "true", "heads": "4", "heads-kv": "2"},
		map[string]string{"seq-q": "130", "dim": "256", "heads": "2"})
	runCasesGPU(t, b, "mla-decode", []string{"sm_80"}, map[string]string{"batch": "4", "heads": "16", "mean-kv": "300"})
}
