package kernels_test

import (
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// FlashAttention over a paged cache through the registry on the
// interpreter against float64 on each entry's keys gathered through its
// shuffled pages: decoding (one token), prefill after a cached prefix
// (causal, GQA), f16 with Dv ≠ Dqk; compiled for every target at its GPU
// config, the smallest case emulated on gfx942.
func TestKVCacheInterp(t *testing.T) {
	e, err := kernels.Lookup("flash-attention-kvcache")
	if err != nil {
		t.Fatal(err)
	}
	for i, vals := range []map[string]string{
		{"batch": "3", "seq-q": "1", "mean-kv": "300"},
		{"batch": "2", "seq-q": "40", "causal": "true", "heads": "8", "heads-kv": "2", "mean-kv": "500", "page": "32"},
		{"batch": "2", "seq-q": "5", "mean-kv": "130", "page": "16", "dtype": "f16", "dim-v": "32"},
	} {
		p, err := e.Problem(vals)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Shape().String(), func(t *testing.T) {
			fn, err := kernels.Build(p, p.DefaultConfig(), ir.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			args := p.Inputs(4)
			if err := interp.Run(fn, args); err != nil {
				t.Fatal(err)
			}
			if r := p.Check(args, 4); !r.OK() {
				t.Errorf("against float64: %s", r)
			}
			for _, arch := range []string{"sm_80", "sm_90a", "gfx942"} {
				fn, err := kernels.Build(p, kernels.GPUConfigFor(p, arch), cudagen.Limits(arch))
				if err != nil {
					t.Fatalf("%s: %v", arch, err)
				}
				prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
				if err != nil {
					t.Fatalf("%s: %v", arch, err)
				}
				if arch == "gfx942" && i == 2 {
					args := p.Inputs(5)
					if err := emu.Run(prog, args); err != nil {
						t.Fatal(err)
					}
					if r := p.Check(args, 5); !r.OK() {
						t.Errorf("gfx942 emulated, against float64: %s", r)
					}
				}
			}
		})
	}
	if _, err := e.Problem(map[string]string{"page": "24"}); err == nil {
		t.Error("--page 24 accepted")
	}
}
