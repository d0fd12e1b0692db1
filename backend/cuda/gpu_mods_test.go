//go:build gpu

package cuda

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/kernels"
)

// registryProblem is a registry kernel at the flag values.
func registryProblem(t *testing.T, kernel string, vals map[string]string) kernels.Problem {
	t.Helper()
	e, err := kernels.Lookup(kernel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(vals)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runProblemGPU runs p (a single program, or a Chain's steps) at its GPU
// config for arch on fresh inputs, outputs poisoned, and checks it against
// float64.
func runProblemGPU(t *testing.T, b *Backend, arch string, p kernels.Problem) {
	t.Helper()
	c := kernels.GPUConfigFor(p, arch)
	args := p.Inputs(11)
	if ch, ok := p.(kernels.Chain); ok {
		steps, err := ch.Steps(c)
		if err != nil {
			t.Fatal(err)
		}
		runChainPoisoned(t, b, arch, steps, args)
	} else {
		fn, err := kernels.Build(p, c, b.Limits())
		if err != nil {
			t.Fatal(err)
		}
		runPoisoned(t, b, arch, fn, args)
	}
	if r := p.Check(args, 11); !r.OK() {
		t.Errorf("%s (%s): %s", p.Shape(), kernels.ConfigFields(c), r)
	}
}

// FlashAttention's modifiers on the GPU, both code paths, at each path's
// GPU config (Hopper's persistent, warp-specialized walks at d128), the
// forward and the backward, against float64.
func TestGPUAttnMods(t *testing.T) {
	b := openGPU(t)
	fwd := []map[string]string{
		{"window": "100,0", "causal": "true", "seq-q": "700", "dim": "128"},
		{"window": "64,64", "softcap": "20", "seq-q": "500", "seq-kv": "640", "dim": "64", "layout": "bshd"},
		{"alibi": "true", "heads": "8", "heads-kv": "2", "causal": "true", "seq-q": "1000", "dim": "128"},
		{"prefix": "128", "seq-q": "900", "dim": "128", "dtype": "f16"},
		{"doc-lens": "300,1,250,449", "causal": "true", "seq-q": "1000", "dim": "128"},
		{"window": "256,0", "causal": "true", "seq-q": "2000", "dim": "256"},
	}
	bwd := []map[string]string{
		{"window": "100,0", "softcap": "10", "causal": "true", "seq-q": "300", "dim": "64"},
		{"alibi": "true", "prefix": "50", "heads": "8", "heads-kv": "4", "seq-q": "260", "dim": "128"},
		{"doc-lens": "300,1,250,449", "causal": "true", "seq-q": "1000", "dim": "128"},
	}
	for _, set := range []struct {
		kernel string
		cases  []map[string]string
	}{{"flash-attention", fwd}, {"flash-attention-bwd", bwd}} {
		for _, vals := range set.cases {
			if vals["heads"] == "" {
				vals["heads"] = "4"
			}
			vals["batch"] = "2"
			p := registryProblem(t, set.kernel, vals)
			for _, arch := range archs(b) {
				t.Run(fmt.Sprintf("%s/%s/%s", set.kernel, arch, p.Shape()), func(t *testing.T) { runProblemGPU(t, b, arch, p) })
			}
		}
	}
}

// gemm's fused epilogue and split-K on the GPU, both code paths, at odd
// sizes and at a Hopper-sized one, against float64.
func TestGPUGemmEpilogueSplitK(t *testing.T) {
	b := openGPU(t)
	for _, vals := range []map[string]string{
		{"m": "1000", "n": "776", "k": "520", "bias": "true", "act": "gelu", "out-dtype": "bf16"},
		{"m": "2048", "n": "2048", "k": "1024", "bias": "true", "act": "silu", "residual": "true", "out-dtype": "bf16"},
		{"m": "333", "n": "200", "k": "96", "act": "relu", "trans-b": "true", "dtype": "f16", "out-dtype": "f16"},
		{"m": "16", "n": "4096", "k": "8192", "split-k": "8", "out-dtype": "bf16"},
		{"m": "100", "n": "300", "k": "1000", "split-k": "3", "trans-a": "true"},
	} {
		p := registryProblem(t, "gemm", vals)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, p.Shape()), func(t *testing.T) { runProblemGPU(t, b, arch, p) })
		}
	}
}

// Varlen FlashAttention on the GPU, both code paths, forward and
// backward: lengths 1, 17, 1000 and 4097 in one batch, causal and GQA, a
// short last sequence, against float64.
func TestGPUVarlen(t *testing.T) {
	b := openGPU(t)
	for _, c := range []struct {
		kernel string
		vals   map[string]string
	}{
		{"flash-attention-varlen", map[string]string{"lens": "1,17,1000,4097", "heads": "8", "dim": "128"}},
		{"flash-attention-varlen", map[string]string{"lens": "1,17,1000,4097", "lens-kv": "5,17,1200,4000", "causal": "true", "heads": "8", "heads-kv": "2", "dim": "64"}},
		{"flash-attention-varlen", map[string]string{"lens": "1000,5", "heads": "4", "dim": "128", "causal": "true"}},
		{"flash-attention-varlen-bwd", map[string]string{"lens": "1,17,1000,4097", "heads": "8", "dim": "128"}},
		{"flash-attention-varlen-bwd", map[string]string{"lens": "1,17,1000,300", "lens-kv": "5,17,1200,200", "causal": "true", "heads": "8", "heads-kv": "2", "dim": "64"}},
	} {
		vals := c.vals
		p := registryProblem(t, c.kernel, vals)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s/%s", c.kernel, arch, p.Shape()), func(t *testing.T) { runProblemGPU(t, b, arch, p) })
		}
	}
}

// FlashAttention over a paged cache on the GPU, both code paths: decoding
// and a causal prefill after a cached prefix with GQA, against float64 on
// the gathered keys.
func TestGPUKVCache(t *testing.T) {
	b := openGPU(t)
	for _, vals := range []map[string]string{
		{"batch": "8", "seq-q": "1", "mean-kv": "3000", "heads": "32", "heads-kv": "8", "dim": "128"},
		{"batch": "4", "seq-q": "200", "causal": "true", "mean-kv": "2000", "heads": "16", "heads-kv": "4", "dim": "128", "page": "128"},
	} {
		p := registryProblem(t, "flash-attention-kvcache", vals)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, p.Shape()), func(t *testing.T) { runProblemGPU(t, b, arch, p) })
		}
	}
}

// 8-bit float GEMMs on Hopper's wgmma (B stored N×K), at odd sizes and
// with an epilogue, against float64.
func TestGPUGemmF8(t *testing.T) {
	b := openGPU(t)
	if b.arch != "sm_90a" {
		t.Skipf("8-bit wgmma needs sm_90a; this device is %s", b.arch)
	}
	for _, vals := range []map[string]string{
		{"m": "1000", "n": "776", "k": "520", "dtype": "f8e4m3", "trans-b": "true", "out-dtype": "bf16"},
		{"m": "2048", "n": "2048", "k": "1024", "dtype": "f8e5m2", "trans-b": "true", "out-dtype": "bf16", "bias": "true", "act": "gelu"},
		{"m": "256", "n": "384", "k": "4096", "dtype": "f8e4m3", "trans-b": "true"},
	} {
		p := registryProblem(t, "gemm", vals)
		t.Run(p.Shape().String(), func(t *testing.T) { runProblemGPU(t, b, "sm_90a", p) })
	}
}
