package kernels

import (
	"fmt"
	"math/rand/v2"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ---- gemm ----

var gemmEntry = &Entry{
	Name: "gemm",
	Doc:  "matrix multiply C = op(A)·op(B), f32 accumulation",
	Flags: []Flag{
		{Name: "m", Default: "512", Help: "rows of C"},
		{Name: "n", Default: "512", Help: "columns of C"},
		{Name: "k", Default: "512", Help: "the reduced dimension"},
		{Name: "trans-a", Default: "false", Help: "A is stored K×M", Bool: true},
		{Name: "trans-b", Default: "false", Help: "B is stored N×K", Bool: true},
		{Name: "dtype", Default: "bf16", Help: "element type of A and B: bf16, f16, f8e4m3 or f8e5m2"},
		{Name: "out-dtype", Default: "f32", Help: "element type of C: f32, bf16 or f16"},
		{Name: "bias", Default: "false", Help: "epilogue: add a bias vector of N (an input after C)", Bool: true},
		{Name: "act", Default: "", Arg: "NAME", Help: "epilogue: an activation after the bias: relu, gelu (tanh form) or silu"},
		{Name: "residual", Default: "false", Help: "epilogue: add a residual M×N of C's type (an input after C and the bias), last", Bool: true},
		{Name: "scale-a", Default: "", Arg: "KIND", Help: "epilogue: scale A·B first by an f32 input ScaleA after C: tensor (one value) or row (one a row of A), as FP8 GEMMs dequantize"},
		{Name: "scale-b", Default: "", Arg: "KIND", Help: "epilogue: scale by an f32 input ScaleB (after ScaleA): tensor (one value) or col (one a column of B)"},
		{Name: "split-k", Default: "1", Arg: "N", Help: "cut K in N parts computed by blocks of their own, then summed (two programs; for small M, as in decoding)"},
	},
	parse: parseGemm,
}

func parseGemm(v values) (Problem, error) {
	var s GemmShape
	var err error
	get := func(dst *int, name string) {
		if err == nil {
			*dst, err = v.int(name, 0)
		}
	}
	get(&s.M, "m")
	get(&s.N, "n")
	get(&s.K, "k")
	if err != nil {
		return nil, err
	}
	if s.TransA, err = v.bool("trans-a"); err != nil {
		return nil, err
	}
	if s.TransB, err = v.bool("trans-b"); err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16, ir.F8E4M3, ir.F8E5M2); err != nil {
		return nil, err
	}
	if s.OutDType, err = v.dtype("out-dtype", ir.F32, ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	for _, t := range [][]int{{s.M, s.K}, {s.K, s.N}, {s.M, s.N}} {
		if _, err := elems("a matrix", t...); err != nil {
			return nil, err
		}
	}
	splits, err := v.int("split-k", 1)
	if err != nil {
		return nil, err
	}
	if s.Epi, err = parseGemmEpilogue(v); err != nil {
		return nil, err
	}
	if s.Epi != nil && splits > 1 {
		return nil, fmt.Errorf("--split-k %d: the epilogue (--scale-a, --scale-b, --bias, --act, --residual) runs with the single program only", splits)
	}
	if splits > 1 {
		return &gemmSplitProblem{gemmProblem{s: s}, splits}, nil
	}
	return &gemmProblem{s: s}, nil
}

type gemmProblem struct{ s GemmShape }

func (p *gemmProblem) Kernel() string { return gemmEntry.Name }

func (p *gemmProblem) Shape() Fields {
	s := p.s
	fs := Fields{{"m", s.M}, {"n", s.N}, {"k", s.K}, {"trans_a", s.TransA}, {"trans_b", s.TransB},
		{"dtype", s.DType.String()}, {"out_dtype", s.OutDType.String()}}
	if s.Epi != nil {
		fs = append(fs, Field{"epilogue", s.Epi.Name()})
	}
	return fs
}

// DefaultConfig: 64×64×32 tiles (smaller for small matrices, rounded up to
// 16), 2 stages, 128 threads, warps tiling the output square.
func (p *gemmProblem) DefaultConfig() Config {
	s := p.s
	return GemmConfig{BM: min(64, roundUp(s.M, 16)), BN: min(64, roundUp(s.N, 16)), BK: min(32, roundUp(s.K, 16)),
		Stages: 2, Threads: 128, Policy: ir.Square}
}

// GPUConfig: 128×256×64 tiles over 8 warps, 3 stages, panels of 8 blocks
// for L2 reuse (8-bit inputs: 128 deep, so a tile's rows are 128 bytes,
// TMA's and wgmma's 128-byte swizzle); small matrices take the default.
func (p *gemmProblem) GPUConfig() Config {
	s := p.s
	if s.M < 128 || s.N < 128 || s.K < 32 {
		return p.DefaultConfig()
	}
	bk := 64
	if s.DType.Bytes() == 1 && s.K >= 128 {
		bk = 128
	}
	return GemmConfig{BM: 128, BN: 256, BK: bk, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8}
}

// GPUConfigFor is GPUConfig for arch; AMD's 64 KiB of LDS take 128×128
// tiles 32 deep, two stages.
func (p *gemmProblem) GPUConfigFor(arch string) Config {
	c := p.GPUConfig()
	if g, ok := c.(GemmConfig); ok && amd(arch) && g.BN > 128 {
		g.BN, g.BK, g.Stages, g.Raster = 128, 32, 2, 8
		return g
	}
	return c
}

func (p *gemmProblem) Program(c Config) (*tl.Func, error) {
	cfg, ok := c.(GemmConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.GemmConfig", p.Kernel(), c)
	}
	if cfg.BM < 1 || cfg.BN < 1 || cfg.BK < 1 || cfg.Stages < 1 || cfg.Threads < 1 {
		return nil, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	return Gemm(p.s, cfg), nil
}

// Inputs are A, B (normal, std 1), C poisoned with NaN, then the
// epilogue's inputs.
func (p *gemmProblem) Inputs(seed uint64) []*tensor.Tensor {
	return append(GemmInputs(p.s, seed), p.s.Epi.inputs(p.s, seed)...)
}

func (p *gemmProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	a, b, c := args[0], args[1], args[2]
	dot := func(i, j int) float64 {
		var sum float64
		for kk := range s.K {
			var x, y float64
			if s.TransA {
				x = a.At(kk, i)
			} else {
				x = a.At(i, kk)
			}
			if s.TransB {
				y = b.At(j, kk)
			} else {
				y = b.At(kk, j)
			}
			sum += x * y
		}
		return sum
	}
	at, checked := p.elemsToCheck(seed)
	want := make([]float64, len(at))
	parallelFor(len(at), func(x int) { want[x] = dot(at[x][0], at[x][1]) })
	m := Measure{Name: "c", Tol: Tolerance(s.OutDType)}
	if s.DType.Bytes() == 1 {
		m.Tol = max(m.Tol, f8AccumTol)
	}
	ex := s.Epi.tensors(args[3:])
	for x, ij := range at {
		m.Diff.Add(c.At(ij[0], ij[1]), s.Epi.ref(want[x], ij[0], ij[1], ex))
	}
	return Report{Measures: []Measure{m}, Checked: checked}
}

// f8AccumTol bounds C's relative error with 8-bit inputs: Hopper's 8-bit
// wgmma keeps about 14 bits of mantissa while it accumulates (1.3e-3
// measured at K 4096 on an H200), above f32's tolerance; GemmConfig.Promote
// keeps the sum over K tiles in full f32.
const f8AccumTol = 4e-3

// elemsToCheck lists every element of C when the problem is small, else a
// seeded sample costing about sampleMACs.
func (p *gemmProblem) elemsToCheck(seed uint64) ([][2]int, string) {
	s := p.s
	var at [][2]int
	n := int(min(max(sampleMACs/float64(s.K), 256), 1<<16))
	if n >= s.M*s.N || s.M*s.N <= fullCheckElems && float64(s.M)*float64(s.N)*float64(s.K) <= fullCheckMACs {
		for i := range s.M {
			for j := range s.N {
				at = append(at, [2]int{i, j})
			}
		}
		return at, "all"
	}
	r := rand.New(rand.NewPCG(seed, 77))
	for range n {
		at = append(at, [2]int{r.IntN(s.M), r.IntN(s.N)})
	}
	return at, fmt.Sprintf("sampled %d elements", n)
}

// FLOPs is 2·M·N·K.
func (p *gemmProblem) FLOPs() float64 { return 2 * float64(p.s.M) * float64(p.s.N) * float64(p.s.K) }
