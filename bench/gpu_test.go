//go:build gpu

package bench

import (
	"cmp"
	"os"
	"slices"
	"testing"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Small pairs of the mla and fa-tail suites through RunSuite under every
// flush mode: the split path (a chain of two programs) and the single
// program on its inputs are checked against float64 and timed.
func TestGPUSplitPairs(t *testing.T) {
	b, err := cuda.Open(0)
	if err != nil {
		if os.Getenv("TILEGO_REQUIRE_GPU") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	mla, err := mlaPoints("t", 2, 128, 1, 4000, 132) // two long requests: the scheduler splits them
	if err != nil {
		t.Fatal(err)
	}
	s := kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 128, Skv: 4096, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16, BSHD: true}
	tail, err := tailPoints("t", s, AttnConfigs(128, true), 132)
	if err != nil {
		t.Fatal(err)
	}
	points := append(mla, tail...)
	for _, f := range []Flush{FlushAuto, FlushNone, FlushRotate} {
		var rs []Result
		if err := RunSuite(b, points, Options{Warmup: 2, Repeats: 5, Seed: 1, Flush: f, Logf: t.Logf}, func(r Result) { rs = append(rs, r) }); err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			t.Log(r.Line())
			p := points[i]
			steps := 1
			if splits(p.Problem) > 1 && !slices.Contains(r.Config, kernels.Field{Name: "merge", Value: true}) {
				steps = 2 // the split kernel and the combine; under Merge, no combine
			}
			if r.Error != "" || r.MS <= 0 || r.Steps != steps || r.Splits != splits(p.Problem) || r.Impl != cmp.Or(p.Impl, "tilego") {
				t.Errorf("%v %s %s: %+v", f, r.Impl, r.Shape, r)
			}
			if p.Problem.Kernel() == "mla-decode" && r.GBps <= 0 {
				t.Errorf("%s: no GB/s", r.Shape)
			}
		}
		if len(rs) != len(points) {
			t.Fatalf("%d results for %d points", len(rs), len(points))
		}
	}
}
