package examples

import (
	"math"

	"github.com/tilego/tilego/tl"
)

// GemmBiasGELU is C = gelu(A·B + bias) with A M×K, B K×N, bias N, and
// GELU's tanh form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): the
// epilogue is one Parallel loop over the accumulator before the store.
func GemmBiasGELU(M, N, K int, dt tl.DType, BM, BN, BK, stages, threads int) *tl.Func {
	f := tl.NewFunc("gemm_bias_gelu")
	A := f.In("A", dt, M, K)
	B := f.In("B", dt, K, N)
	Bias := f.In("Bias", dt, N)
	C := f.Out("C", dt, M, N)
	c := math.Sqrt(2 / math.Pi)
	f.Kernel(tl.Grid(tl.CeilDiv(N, BN), tl.CeilDiv(M, BM)), threads, func(k *tl.Block) {
		bx, by, _ := k.Idx()
		as, bs := k.Shared(dt, BM, BK).Named("as"), k.Shared(dt, BK, BN).Named("bs")
		bias := k.Shared(dt, BN).Named("bias")
		acc := k.Fragment(tl.F32, BM, BN).Named("acc")
		k.Clear(acc)
		k.Copy(Bias.Sub(tl.Tile(bx, BN)), bias)
		k.Pipelined(tl.CeilDiv(K, BK), stages, func(kk tl.Expr) {
			k.Copy(A.Sub(tl.Tile(by, BM), tl.Tile(kk, BK)), as)
			k.Copy(B.Sub(tl.Tile(kk, BK), tl.Tile(bx, BN)), bs)
			k.Gemm(as, bs, acc)
		})
		k.Parallel(func(i, j tl.Expr) {
			x := k.Let(acc.At(i, j).Add(bias.At(j))) // read and added once, used five times
			inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(c)
			acc.Set(x.Mul(0.5).Mul(tl.Tanh(inner).Add(1)), i, j)
		}, BM, BN)
		k.Copy(acc, C.Sub(tl.Tile(by, BM), tl.Tile(bx, BN)))
	})
	return f
}
