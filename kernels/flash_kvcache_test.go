package kernels_test

import (
	"testing"

	"github.com/tilego/tilego/kernels"
)

// FlashAttention over a paged cache through the registry on the
// interpreter against float64 on each entry's keys gathered through its
// shuffled pages: decoding (one token), prefill after a cached prefix
// (causal, GQA), f16 with Dv ≠ Dqk; compiled for every target at its GPU
// config, the smallest case emulated on gfx942.
func TestKVCacheInterp(t *testing.T) {
	eachProblem(t, "flash-attention-kvcache", nil, []map[string]string{
		{"batch": "3", "seq-q": "1", "mean-kv": "300"},
		{"batch": "2", "seq-q": "40", "causal": "true", "heads": "8", "heads-kv": "2", "mean-kv": "500", "page": "32"},
		{"batch": "2", "seq-q": "5", "mean-kv": "130", "page": "16", "dtype": "f16", "dim-v": "32"},
	}, func(t *testing.T, i int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 4)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		if i == 2 {
			checkEmulated(t, p, 5)
		}
	})
	e, err := kernels.Lookup("flash-attention-kvcache")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Problem(map[string]string{"page": "24"}); err == nil {
		t.Error("--page 24 accepted")
	}
}
