package bench

import (
	"fmt"
	"maps"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// GemmLLMPoints are the gemm-llm suite's points (issue 55's), bf16 in and
// out, as gemm's flag values: 8192³, a feed-forward up projection
// (4096×14336×4096) and down projection (14336×4096×4096), each also with B
// stored N×K (a Linear layer's weight), and the fused bias + tanh-GELU
// epilogue at 2048³ and at the up projection. scripts/gemm_peers.py times
// cuBLAS and torch.compile on the same list.
var GemmLLMPoints = []map[string]string{
	{"m": "8192", "n": "8192", "k": "8192"},
	{"m": "4096", "n": "14336", "k": "4096"},
	{"m": "4096", "n": "14336", "k": "4096", "trans-b": "true"},
	{"m": "14336", "n": "4096", "k": "4096"},
	{"m": "14336", "n": "4096", "k": "4096", "trans-b": "true"},
	{"m": "2048", "n": "2048", "k": "2048", "bias": "true", "act": "gelu"},
	{"m": "4096", "n": "14336", "k": "4096", "bias": "true", "act": "gelu"},
}

// gemmLLM: GemmLLMPoints (--quick: the first and the last), each over the
// Hopper tilings worth trying: 128×256 and 256×128 with a producer
// warpgroup, and 128×128 for grids that would not fill the GPU.
func gemmLLM(o SuiteOptions) ([]Point, error) {
	pts := GemmLLMPoints
	if o.Quick {
		pts = []map[string]string{pts[0], pts[len(pts)-1]}
	}
	cfgs := append(GemmConfigs()[:3:3],
		kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square, Raster: 8, WS: true})
	return gemmPoints("gemm-llm", map[string]string{"dtype": "bf16", "out-dtype": "bf16"}, pts, cfgs)
}

// gemmPoints are suite's points, gemm problems at base's flag values
// updated by each of pts, each over cfgs.
func gemmPoints(suite string, base map[string]string, pts []map[string]string, cfgs []kernels.Config) ([]Point, error) {
	e, err := kernels.Lookup("gemm")
	if err != nil {
		return nil, err
	}
	var ps []Point
	for _, v := range pts {
		vals := maps.Clone(base)
		maps.Copy(vals, v)
		p, err := e.Problem(vals)
		if err != nil {
			return nil, fmt.Errorf("%s %v: %w", suite, v, err)
		}
		ps = append(ps, Point{Suite: suite, Problem: p, Configs: cfgs})
	}
	return ps, nil
}

// GemmFP8Points are the gemm-fp8 suite's points: e4m3 inputs, B stored N×K
// (wgmma's 8-bit operands are K-major), bf16 out, scaled per tensor as
// torch._scaled_mm's default, and at 8192³ also per row of A and column
// of B; scripts/gemm_peers.py --fp8 times torch._scaled_mm on the list.
var GemmFP8Points = []map[string]string{
	{"m": "8192", "n": "8192", "k": "8192", "scale-a": "tensor", "scale-b": "tensor"},
	{"m": "4096", "n": "14336", "k": "4096", "scale-a": "tensor", "scale-b": "tensor"},
	{"m": "14336", "n": "4096", "k": "4096", "scale-a": "tensor", "scale-b": "tensor"},
	{"m": "8192", "n": "8192", "k": "8192", "scale-a": "row", "scale-b": "col"},
}

// gemmFP8: GemmFP8Points (--quick: the first) over 128-deep tilings (a
// tile's rows are then 128 bytes, TMA's and wgmma's swizzle) with a
// producer warpgroup; each point twice, accumulating in the tensor cores
// (impl tilego) and promoted to f32 a K tile (impl tilego-promote).
func gemmFP8(o SuiteOptions) ([]Point, error) {
	pts := GemmFP8Points
	if o.Quick {
		pts = pts[:1]
	}
	var cfgs, promoted []kernels.Config
	for _, t := range [][3]int{{128, 256, 3}, {128, 256, 4}, {256, 128, 3}, {128, 128, 4}} {
		c := kernels.GemmConfig{BM: t[0], BN: t[1], BK: 128, Stages: t[2], Threads: 256, Policy: ir.Square, Raster: 8, WS: true}
		cfgs = append(cfgs, c)
		c.Promote = true
		promoted = append(promoted, c)
	}
	base := map[string]string{"dtype": "f8e4m3", "trans-b": "true", "out-dtype": "bf16"}
	ps, err := gemmPoints("gemm-fp8", base, pts, cfgs)
	if err != nil {
		return nil, err
	}
	// The same points accumulating over K in f32 (GemmConfig.Promote), as
	// impl tilego-promote: torch._scaled_mm's default is their peer.
	pp, err := gemmPoints("gemm-fp8", base, pts, promoted)
	for i := range pp {
		pp[i].Impl = "tilego-promote"
	}
	return append(ps, pp...), err
}
