package kernels_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/target/cuda"
)

// The MLA programs generate CUDA on both code paths at the registry's GPU
// configs for each architecture, split or not (no GPU needed: the source
// is not compiled here).
func TestMLAEmitCUDA(t *testing.T) {
	e, err := kernels.Lookup("mla-decode")
	if err != nil {
		t.Fatal(err)
	}
	for _, hq := range []int{16, 32, 128} {
		for _, sq := range []int{1, 2} {
			for _, splits := range []string{"1", "3"} {
				vals := map[string]string{"heads": fmt.Sprint(hq), "seq-q": fmt.Sprint(sq), "splits": splits, "mean-kv": "300"}
				p, err := e.Problem(vals)
				if err != nil {
					t.Fatal(err)
				}
				for _, arch := range []string{"sm_80", "sm_90a"} {
					steps, err := p.(kernels.Chain).Steps(kernels.GPUConfigFor(p, arch))
					if err != nil {
						t.Fatal(err)
					}
					for _, st := range steps {
						fn, err := st.Func.Build(ir.DefaultLimits)
						if err != nil {
							t.Fatalf("%v: %v", vals, err)
						}
						prog, err := cuda.Compile(fn, cuda.Options{Arch: arch})
						if err != nil {
							t.Errorf("%v %s %s: %v", vals, fn.Name, arch, err)
							continue
						}
						if !strings.Contains(prog.Source, "__global__") {
							t.Errorf("%v %s %s: no kernel in the source", vals, fn.Name, arch)
						}
						// The split kernel's producer (sm_90a, 64-row blocks) walks
						// pieces with Q as the walk's tile: its second page waits
						// for Q and the first at the start (ws.go's firstFill); no
						// other program has that wait.
						want := 0
						if arch == "sm_90a" && fn.Name == "mla_decode" && hq == 128 && splits == "3" {
							want = 1
						}
						if got := strings.Count(prog.Source, "the first tiles first"); got != want && (want == 1 || arch == "sm_80" || fn.Name == "mla_combine") {
							t.Errorf("%v %s %s: %d first-fill waits, want %d", vals, fn.Name, arch, got, want)
						}
					}
				}
			}
		}
	}
}
