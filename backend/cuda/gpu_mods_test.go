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
	p, err := kernels.NewProblem(kernel, vals)
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

// runCasesGPU runs kernel at each case's flag values on each of archs
// (runProblemGPU), a subtest each.
func runCasesGPU(t *testing.T, b *Backend, kernel string, archs []string, cases ...map[string]string) {
	t.Helper()
	for _, vals := range cases {
		p := registryProblem(t, kernel, vals)
		for _, arch := range archs {
			t.Run(fmt.Sprintf("%s/%s/%s", kernel, arch, p.Shape()), func(t *testing.T) { runProblemGPU(t, b, arch, p) })
		}
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
	for _, vals := range append(fwd, bwd...) {
		if vals["heads"] == "" {
			vals["heads"] = "4"
		}
		vals["batch"] = "2"
	}
	runCasesGPU(t, b, "flash-attention", archs(b), fwd...)
	runCasesGPU(t, b, "flash-attention-bwd", archs(b), bwd...)
	// The backward with the tiles a mask shows whole left unmasked.
	for _, vals := range append(bwd, map[string]string{"causal": "true", "seq-q": "333", "seq-kv": "400", "dim": "128", "heads": "4", "batch": "2"}) {
		p := registryProblem(t, "flash-attention-bwd", vals)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("whole/%s/%s", arch, p.Shape()), func(t *testing.T) {
				c := kernels.GPUConfigFor(p, arch).(kernels.AttnConfig)
				c.WholeTiles = true
				args := p.Inputs(11)
				steps, err := p.(kernels.Chain).Steps(c)
				if err != nil {
					t.Fatal(err)
				}
				runChainPoisoned(t, b, arch, steps, args)
				if r := p.Check(args, 11); !r.OK() {
					t.Errorf("%s (%s): %s", p.Shape(), kernels.ConfigFields(c), r)
				}
			})
		}
	}
}

// gemm's fused epilogue and split-K on the GPU, both code paths, at odd
// sizes and at a Hopper-sized one, against float64.
func TestGPUGemmEpilogueSplitK(t *testing.T) {
	b := openGPU(t)
	runCasesGPU(t, b, "gemm", archs(b),
		map[string]string{"m": "1000", "n": "776", "k": "520", "bias": "true", "act": "gelu", "out-dtype": "bf16"},
		map[string]string{"m": "2048", "n": "2048", "k": "1024", "bias": "true", "act": "silu", "residual": "true", "out-dtype": "bf16"},
		map[string]string{"m": "333", "n": "200", "k": "96", "act": "relu", "trans-b": "true", "dtype": "f16", "out-dtype": "f16"},
		map[string]string{"m": "16", "n": "4096", "k": "8192", "split-k": "8", "out-dtype": "bf16"},
		map[string]string{"m": "100", "n": "300", "k": "1000", "split-k": "3", "trans-a": "true"},
	)
}

// Varlen FlashAttention on the GPU, both code paths, forward and
// backward: lengths 1, 17, 1000 and 4097 in one batch, causal and GQA, a
// short last sequence, against float64.
func TestGPUVarlen(t *testing.T) {
	b := openGPU(t)
	runCasesGPU(t, b, "flash-attention-varlen", archs(b),
		map[string]string{"lens": "1,17,1000,4097", "heads": "8", "dim": "128"},
		map[string]string{"lens": "1,17,1000,4097", "lens-kv": "5,17,1200,4000", "causal": "true", "heads": "8", "heads-kv": "2", "dim": "64"},
		map[string]string{"lens": "1000,5", "heads": "4", "dim": "128", "causal": "true"},
	)
	runCasesGPU(t, b, "flash-attention-varlen-bwd", archs(b),
		map[string]string{"lens": "1,17,1000,4097", "heads": "8", "dim": "128"},
		map[string]string{"lens": "1,17,1000,300", "lens-kv": "5,17,1200,200", "causal": "true", "heads": "8", "heads-kv": "2", "dim": "64"},
		// 16384 tokens: rows of LSE and Delta whose strides TMA takes, from
		// the sequences' odd offsets.
		map[string]string{"lens": "1,17,1000,4097,5000,6269", "heads": "2", "dim": "128"},
	)
}

// FlashAttention over a paged cache on the GPU, both code paths: decoding
// and a causal prefill after a cached prefix with GQA, against float64 on
// the gathered keys.
func TestGPUKVCache(t *testing.T) {
	b := openGPU(t)
	runCasesGPU(t, b, "flash-attention-kvcache", archs(b),
		map[string]string{"batch": "8", "seq-q": "1", "mean-kv": "3000", "heads": "32", "heads-kv": "8", "dim": "128"},
		map[string]string{"batch": "4", "seq-q": "200", "causal": "true", "mean-kv": "2000", "heads": "16", "heads-kv": "4", "dim": "128", "page": "128"},
	)
}

// 8-bit float GEMMs on Hopper's wgmma (B stored N×K), at odd sizes and
// with epilogues (bias and GELU; per-row and per-column scales), against
// float64.
func TestGPUGemmF8(t *testing.T) {
	b := openGPU(t)
	if b.arch != "sm_90a" {
		t.Skipf("8-bit wgmma needs sm_90a; this device is %s", b.arch)
	}
	runCasesGPU(t, b, "gemm", []string{"sm_90a"},
		map[string]string{"m": "1000", "n": "776", "k": "520", "dtype": "f8e4m3", "trans-b": "true", "out-dtype": "bf16"},
		map[string]string{"m": "2048", "n": "2048", "k": "1024", "dtype": "f8e5m2", "trans-b": "true", "out-dtype": "bf16", "bias": "true", "act": "gelu"},
		map[string]string{"m": "256", "n": "384", "k": "4096", "dtype": "f8e4m3", "trans-b": "true", "scale-a": "row", "scale-b": "col"},
	)
	// Promote adds each 128-deep K tile's sum into f32: C's error a tenth
	// of the tensor cores' own accumulation's (1.2e-4 and 1.3e-3 measured
	// at K 4096 on an H200), both within the 8-bit tolerance.
	p := registryProblem(t, "gemm", map[string]string{"m": "256", "n": "384", "k": "4096", "dtype": "f8e4m3", "trans-b": "true",
		"scale-a": "row", "scale-b": "col"})
	var rel [2]float64
	for i, promote := range []bool{false, true} {
		c := kernels.GPUConfigFor(p, "sm_90a").(kernels.GemmConfig)
		c.Promote = promote
		fn, err := kernels.Build(p, c, b.Limits())
		if err != nil {
			t.Fatal(err)
		}
		args := p.Inputs(11)
		runPoisoned(t, b, "sm_90a", fn, args)
		r := p.Check(args, 11)
		rel[i] = r.Measures[0].Diff.Rel()
		t.Logf("promote=%v: C rel %.3g", promote, rel[i])
		if !r.OK() {
			t.Errorf("promote=%v: %s", promote, r)
		}
	}
	if rel[1] > rel[0]/4 {
		t.Errorf("promoted C rel %.3g, not a quarter of the unpromoted %.3g", rel[1], rel[0])
	}
}
