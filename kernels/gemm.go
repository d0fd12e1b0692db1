package kernels

import (
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// GemmShape is C[M,N] = op(A)·op(B): A is M×K (K×M with TransA), B is K×N
// (N×K with TransB).
type GemmShape struct {
	M, N, K        int
	TransA, TransB bool
	DType          tl.DType      // of A and B: f16 or bf16
	OutDType       tl.DType      // of C
	Epi            *GemmEpilogue // work on the accumulator before C is stored (gemm_epilogue.go), or nil
}

// GemmConfig is how the kernel tiles the problem.
type GemmConfig struct {
	BM, BN, BK int
	Stages     int
	Threads    int
	Policy     ir.Policy
	Raster     int // panel size of the block swizzle; 0 for none
	// WS asks for warp specialization: a producer warpgroup loads the A and
	// B tiles (Hopper, by TMA) while the Threads compute.
	WS bool
	// Promote multiplies each K tile into a cleared partial accumulator and
	// adds it into the f32 accumulator: Hopper's 8-bit wgmma keeps about 14
	// bits of mantissa while it accumulates (C's relative error 1.3e-3 at
	// K 4096 without it), so its sum over K is kept in full f32 as
	// torch._scaled_mm's default (use_fast_accum off) does. It costs a
	// second accumulator's registers.
	Promote bool
}

// gemmIn are a GEMM's operands A and B as declared (stored transposed
// where the shape says), and the Gemm options that say so.
type gemmIn struct {
	A, B *tl.Tensor
	opts []tl.GemmOpt
}

// declareGemmIn declares A and B in f.
func declareGemmIn(f *tl.Func, s GemmShape, c GemmConfig) gemmIn {
	aRows, aCols, bRows, bCols := s.M, s.K, s.K, s.N // as stored
	if s.TransA {
		aRows, aCols = s.K, s.M
	}
	if s.TransB {
		bRows, bCols = s.N, s.K
	}
	g := gemmIn{A: f.In("A", s.DType, aRows, aCols), B: f.In("B", s.DType, bRows, bCols), opts: []tl.GemmOpt{tl.WithPolicy(c.Policy)}}
	if s.TransA {
		g.opts = append(g.opts, tl.TransA)
	}
	if s.TransB {
		g.opts = append(g.opts, tl.TransB)
	}
	return g
}

// tiles allocates a block's shared tiles of A and B and its accumulator,
// cleared, and the partial accumulator when c promotes.
func (g gemmIn) tiles(k *tl.Block, s GemmShape, c GemmConfig) (as, bs, acc, part *tl.Tensor) {
	sa := [2]int{c.BM, c.BK}
	if s.TransA {
		sa = [2]int{c.BK, c.BM}
	}
	sb := [2]int{c.BK, c.BN}
	if s.TransB {
		sb = [2]int{c.BN, c.BK}
	}
	as = k.Shared(s.DType, sa[:]...).Named("as")
	bs = k.Shared(s.DType, sb[:]...).Named("bs")
	acc = k.Fragment(tl.F32, c.BM, c.BN).Named("acc")
	k.Clear(acc)
	if c.Promote {
		part = k.Fragment(tl.F32, c.BM, c.BN).Named("part")
	}
	return as, bs, acc, part
}

// step loads K tile kk of output tile (by, bx)'s rows of A and columns of
// B and multiplies them into acc (through part, when promoting): the body
// of the K loop.
func (g gemmIn) step(k *tl.Block, s GemmShape, c GemmConfig, as, bs, acc, part *tl.Tensor, by, bx, kk tl.Expr) {
	aTile := g.A.Sub(tl.Tile(by, c.BM), tl.Tile(kk, c.BK))
	if s.TransA {
		aTile = g.A.Sub(tl.Tile(kk, c.BK), tl.Tile(by, c.BM))
	}
	bTile := g.B.Sub(tl.Tile(kk, c.BK), tl.Tile(bx, c.BN))
	if s.TransB {
		bTile = g.B.Sub(tl.Tile(bx, c.BN), tl.Tile(kk, c.BK))
	}
	k.Copy(aTile, as)
	k.Copy(bTile, bs)
	if part == nil {
		k.Gemm(as, bs, acc, g.opts...)
		return
	}
	k.Clear(part)
	k.Gemm(as, bs, part, g.opts...)
	k.Parallel(func(i, j tl.Expr) { acc.Set(acc.At(i, j).Add(part.At(i, j)), i, j) }, c.BM, c.BN)
}

// Gemm is a tiled matrix multiply: each block owns a BM×BN tile of C and
// streams BK-wide slices of A and B through shared memory.
func Gemm(s GemmShape, c GemmConfig) *tl.Func {
	f := tl.NewFunc("gemm")
	in := declareGemmIn(f, s, c)
	C := f.Out("C", s.OutDType, s.M, s.N)
	epi := s.Epi.declare(f, s)
	f.Kernel(tl.Grid(tl.CeilDiv(s.N, c.BN), tl.CeilDiv(s.M, c.BM)), c.Threads, func(k *tl.Block) {
		bx, by, _ := k.Idx()
		if c.WS {
			k.WarpSpecialize()
		}
		if c.Raster > 0 {
			k.Rasterize(c.Raster, false)
		}
		as, bs, acc, part := in.tiles(k, s, c)
		k.Pipelined(tl.CeilDiv(s.K, c.BK), c.Stages, func(kk tl.Expr) { in.step(k, s, c, as, bs, acc, part, by, bx, kk) })
		epi.apply(k, acc, c, by, bx)
		cs := k.Shared(s.OutDType, c.BM, c.BN).Named("cs") // staged for coalesced stores
		k.Copy(acc, cs)
		k.Copy(cs, C.Sub(tl.Tile(by, c.BM), tl.Tile(bx, c.BN)))
	})
	return f
}
