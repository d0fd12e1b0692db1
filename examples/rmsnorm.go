package examples

import "github.com/tilego/tilego/tl"

// RMSNorm is y = x / sqrt(mean(x²) + eps) · w for each row of a rows×cols
// tensor: BM rows a block, the whole row in registers (cols a multiple of
// nothing: the copies mask the ragged rows).
func RMSNorm(rows, cols int, dt tl.DType, BM, threads int, eps float64) *tl.Func {
	f := tl.NewFunc("rmsnorm")
	X := f.In("X", dt, rows, cols)
	W := f.In("W", dt, cols)
	Y := f.Out("Y", dt, rows, cols)
	f.Kernel(tl.Grid(tl.CeilDiv(rows, BM)), threads, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		x := k.Fragment(tl.F32, BM, cols).Named("x")
		sq := k.Fragment(tl.F32, BM, cols).Named("sq")
		ss := k.Fragment(tl.F32, BM).Named("ss")
		ws := k.Shared(dt, cols).Named("ws")
		k.Copy(X.Sub(tl.Tile(bx, BM), tl.All), x)
		k.Copy(W, ws)
		k.Parallel(func(i, j tl.Expr) { sq.Set(x.At(i, j).Mul(x.At(i, j)), i, j) }, BM, cols)
		k.ReduceSum(sq, ss, 1)
		k.Parallel(func(i tl.Expr) { ss.Set(tl.Rsqrt(ss.At(i).Div(float64(cols)).Add(eps)), i) }, BM)
		k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(ss.At(i)).Mul(ws.At(j)), i, j) }, BM, cols)
		k.Copy(x, Y.Sub(tl.Tile(bx, BM), tl.All))
	})
	return f
}
