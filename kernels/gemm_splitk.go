package kernels

import (
	"fmt"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// Split-K GEMM: for small M (decoding's GEMMs: M of 1-128 rows against
// large N and K), a grid of output tiles alone leaves most SMs idle. The
// K dimension is cut in Splits parts: the first program computes each
// part's product into an f32 partial (C tile × part, a block each), the
// second sums the parts and writes C in its type. Deterministic: no
// atomics.

// GemmSplitPartials is step 1: Parts[z] = op(A)[:, Kz]·op(B)[Kz, :] for the
// z-th of splits slices of K's tiles, a block per (N tile, M tile, z).
func GemmSplitPartials(s GemmShape, c GemmConfig, splits int) *tl.Func {
	f := tl.NewFunc("gemm_split_k")
	in := declareGemmIn(f, s, c)
	Parts := f.Out("Parts", tl.F32, splits, s.M, s.N)
	nK := (s.K + c.BK - 1) / c.BK
	per := (nK + splits - 1) / splits
	f.Kernel(tl.Grid(tl.CeilDiv(s.N, c.BN), tl.CeilDiv(s.M, c.BM), splits), c.Threads, func(k *tl.Block) {
		bx, by, z := k.Idx()
		as, bs, acc, part := in.tiles(k, s, c)
		lo := z.Mul(per)
		k.PipelinedRange(tl.Min(lo, nK), tl.Min(lo.Add(per), nK), c.Stages, func(kk tl.Expr) { in.step(k, s, c, as, bs, acc, part, by, bx, kk) })
		k.Copy(acc, Parts.Sub(z, tl.Tile(by, c.BM), tl.Tile(bx, c.BN)))
	})
	return f
}

// GemmSplitSum is step 2: C = Σ_z Parts[z], in C's type, a block per
// BM×BN tile.
func GemmSplitSum(s GemmShape, c GemmConfig, splits int) *tl.Func {
	f := tl.NewFunc("gemm_split_k_sum")
	Parts := f.In("Parts", tl.F32, splits, s.M, s.N)
	C := f.Out("C", s.OutDType, s.M, s.N)
	f.Kernel(tl.Grid(tl.CeilDiv(s.N, c.BN), tl.CeilDiv(s.M, c.BM)), c.Threads, func(k *tl.Block) {
		bx, by, _ := k.Idx()
		acc := k.Fragment(tl.F32, c.BM, c.BN).Named("acc")
		part := k.Fragment(tl.F32, c.BM, c.BN).Named("part")
		k.Clear(acc)
		k.Serial(splits, func(z tl.Expr) {
			k.Copy(Parts.Sub(z, tl.Tile(by, c.BM), tl.Tile(bx, c.BN)), part)
			k.Parallel(func(i, j tl.Expr) { acc.Set(acc.At(i, j).Add(part.At(i, j)), i, j) }, c.BM, c.BN)
		})
		k.Copy(acc, C.Sub(tl.Tile(by, c.BM), tl.Tile(bx, c.BN)))
	})
	return f
}

// gemmSplitProblem is the gemm kernel with --split-k: a Chain of
// GemmSplitPartials then GemmSplitSum over A, B, C and the partials.
type gemmSplitProblem struct {
	gemmProblem
	splits int
}

func (p *gemmSplitProblem) Shape() Fields {
	return append(p.gemmProblem.Shape(), Field{"split_k", p.splits})
}

func (p *gemmSplitProblem) Program(Config) (*tl.Func, error) {
	return nil, fmt.Errorf("%s --split-k %d runs as two programs (the partials, then their sum): use emit --step 1 or 2, or Steps from Go", p.Kernel(), p.splits)
}

func (p *gemmSplitProblem) Steps(c Config) ([]Step, error) {
	cfg, ok := c.(GemmConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.GemmConfig", p.Kernel(), c)
	}
	if cfg.BM < 1 || cfg.BN < 1 || cfg.BK < 1 || cfg.Stages < 1 || cfg.Threads < 1 {
		return nil, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	if cfg.WS {
		return nil, fmt.Errorf("%s: --split-k's partials do not take ws (a producer warpgroup)", p.Kernel())
	}
	return []Step{
		{GemmSplitPartials(p.s, cfg, p.splits), []int{0, 1, 3}},
		{GemmSplitSum(p.s, cfg, p.splits), []int{3, 2}},
	}, nil
}

// Inputs are gemm's, then the partials (f32 [splits, M, N]) poisoned.
func (p *gemmSplitProblem) Inputs(seed uint64) []*tensor.Tensor {
	return append(GemmInputs(p.s, seed), tensor.New(tl.F32, p.splits, p.s.M, p.s.N).Fill(nan))
}

// GPUConfig: 64×128 tiles 64 deep, 3 stages, 128 threads (small M has few
// row tiles; the split supplies the blocks).
func (p *gemmSplitProblem) GPUConfig() Config {
	s := p.s
	return GemmConfig{BM: min(64, roundUp(s.M, 16)), BN: min(128, roundUp(s.N, 16)), BK: min(64, roundUp(s.K, 16)), Stages: 3, Threads: 128, Policy: ir.Square}
}

// GPUConfigFor is GPUConfig; AMD's 64 KiB of LDS take two stages 32 deep.
func (p *gemmSplitProblem) GPUConfigFor(arch string) Config {
	c := p.GPUConfig().(GemmConfig)
	if amd(arch) {
		c.Stages, c.BK = 2, min(c.BK, 32)
	}
	return c
}
