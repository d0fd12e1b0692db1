package bench

import (
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

func field(fs kernels.Fields, name string) any {
	for _, f := range fs {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// The sweep is FlashAttention-3's: 16k tokens per batch, 2048 = heads × dim,
// every point with candidate configs that build for it.
func TestSuites(t *testing.T) {
	want := map[string]int{"fa-sweep": 36, "fa-short": 6, "extra": 3, "gemm": 1}
	for name, n := range want {
		ps, err := Suites[name](false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ps) != n {
			t.Errorf("%s: %d points, want %d", name, len(ps), n)
		}
		for _, p := range ps {
			sh := p.Problem.Shape()
			if len(p.Configs) == 0 {
				t.Errorf("%s %s: no configs", name, sh)
			}
			if p.Problem.Kernel() != "flash-attention" {
				continue
			}
			b, h, s, d := field(sh, "batch").(int), field(sh, "heads").(int), field(sh, "seq_q").(int), field(sh, "dim").(int)
			if name == "fa-sweep" && (b*s != 16384 || h*d != 2048) {
				t.Errorf("%s: batch×seq = %d, heads×dim = %d", sh, b*s, h*d)
			}
			if name == "fa-short" && (field(sh, "causal") != true || s > 1024) {
				t.Errorf("fa-short holds %s", sh)
			}
			for _, c := range p.Configs {
				if _, err := kernels.Build(p.Problem, c, ir.DefaultLimits); err != nil {
					t.Errorf("%s %s: %v", name, kernels.ConfigFields(c), err)
				}
			}
		}
	}
	quick, _ := Suites["fa-sweep"](true)
	if len(quick) != 12 {
		t.Errorf("quick sweep: %d points, want 12", len(quick))
	}
}
