package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// The tuner's estimates mirror this backend's rules (kernels/space.go): for
// every config of the space that the estimate keeps, the compiled program
// takes wgmma exactly when the estimate says so and plans at most the
// shared memory it estimates.
func TestSpaceMirrorsBackend(t *testing.T) {
	for _, pv := range []struct {
		kernel string
		vals   map[string]string
	}{
		{"gemm", map[string]string{"m": "1024", "n": "1024", "k": "1024"}},
		{"gemm", map[string]string{"m": "512", "n": "768", "k": "256", "trans-b": "true", "out-dtype": "bf16"}},
		{"flash-attention", map[string]string{"batch": "2", "heads": "4", "seq-q": "1024", "dim": "128", "causal": "true", "layout": "bshd"}},
		{"flash-attention", map[string]string{"batch": "2", "heads": "4", "seq-q": "2048", "dim": "64"}},
	} {
		e, err := kernels.Lookup(pv.kernel)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Problem(pv.vals)
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, c := range kernels.Candidates(p) {
			est := kernels.EstimateConfig(p, c, "sm_90a")
			if est.Reject != "" {
				continue
			}
			kept++
			f, err := kernels.Build(p, c, ir.DefaultLimits)
			if err != nil {
				t.Errorf("%s %s: kept by the estimate, but: %v", pv.kernel, kernels.ConfigFields(c), err)
				continue
			}
			prog, err := Compile(f, Options{Arch: "sm_90a"})
			if err != nil {
				t.Errorf("%s %s: kept by the estimate, but: %v", pv.kernel, kernels.ConfigFields(c), err)
				continue
			}
			if got := strings.Contains(prog.Source, "wgmma.mma_async"); got != est.WGMMA {
				t.Errorf("%s %s: wgmma %v, estimated %v", pv.kernel, kernels.ConfigFields(c), got, est.WGMMA)
			}
			if prog.Shared > est.SharedBytes {
				t.Errorf("%s %s: %d bytes of shared memory, estimated %d", pv.kernel, kernels.ConfigFields(c), prog.Shared, est.SharedBytes)
			}
		}
		if kept == 0 {
			t.Errorf("%s %v: the estimate kept no config", pv.kernel, pv.vals)
		}
	}
}
