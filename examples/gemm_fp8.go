package examples

import "github.com/tilego/tilego/tl"

// GemmFP8 is C = (A·Bᵀ)∘(sa·sbᵀ) in bf16: 8-bit A (M×K) and B (N×K)
// quantized per row of A and per row of B (a linear layer's activations
// and weights), their scales applied once, in the epilogue. Both operands
// are K-major, as Hopper's 8-bit wgmma reads them; a BK of 128 makes a
// tile's rows 128 bytes, TMA's and wgmma's widest swizzle.
func GemmFP8(M, N, K int, dt tl.DType, BM, BN, BK, stages, threads int) *tl.Func {
	f := tl.NewFunc("gemm_fp8")
	A, B := f.In("A", dt, M, K), f.In("B", dt, N, K)
	ScaleA, ScaleB := f.In("ScaleA", tl.F32, M), f.In("ScaleB", tl.F32, N)
	C := f.Out("C", tl.BF16, M, N)
	f.Kernel(tl.Grid(tl.CeilDiv(N, BN), tl.CeilDiv(M, BM)), threads, func(k *tl.Block) {
		bx, by, _ := k.Idx()
		as, bs := k.Shared(dt, BM, BK).Named("as"), k.Shared(dt, BN, BK).Named("bs")
		sa, sb := k.Shared(tl.F32, BM).Named("sa"), k.Shared(tl.F32, BN).Named("sb")
		acc := k.Fragment(tl.F32, BM, BN).Named("acc")
		k.Clear(acc)
		k.Copy(ScaleA.Sub(tl.Tile(by, BM)), sa)
		k.Copy(ScaleB.Sub(tl.Tile(bx, BN)), sb)
		k.Pipelined(tl.CeilDiv(K, BK), stages, func(kk tl.Expr) {
			k.Copy(A.Sub(tl.Tile(by, BM), tl.Tile(kk, BK)), as)
			k.Copy(B.Sub(tl.Tile(bx, BN), tl.Tile(kk, BK)), bs)
			k.Gemm(as, bs, acc, tl.TransB)
		})
		k.Parallel(func(i, j tl.Expr) { acc.Set(acc.At(i, j).Mul(sa.At(i)).Mul(sb.At(j)), i, j) }, BM, BN)
		k.Copy(acc, C.Sub(tl.Tile(by, BM), tl.Tile(bx, BN)))
	})
	return f
}
