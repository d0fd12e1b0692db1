package examples

import "github.com/tilego/tilego/tl"

// LayerNorm is y = (x - mean) / sqrt(var + eps) · gamma + beta for each
// row of a rows×cols tensor, BM rows a block held in registers; the
// variance is the mean of squared deviations (two passes over the row).
func LayerNorm(rows, cols int, dt tl.DType, BM, threads int, eps float64) *tl.Func {
	f := tl.NewFunc("layernorm")
	X := f.In("X", dt, rows, cols)
	G := f.In("Gamma", dt, cols)
	B := f.In("Beta", dt, cols)
	Y := f.Out("Y", dt, rows, cols)
	f.Kernel(tl.Grid(tl.CeilDiv(rows, BM)), threads, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		x := k.Fragment(tl.F32, BM, cols).Named("x")
		d := k.Fragment(tl.F32, BM, cols).Named("d")
		mean := k.Fragment(tl.F32, BM).Named("mean")
		rstd := k.Fragment(tl.F32, BM).Named("rstd")
		gs, bs := k.Shared(dt, cols).Named("gs"), k.Shared(dt, cols).Named("bs")
		k.Copy(X.Sub(tl.Tile(bx, BM), tl.All), x)
		k.Copy(G, gs)
		k.Copy(B, bs)
		k.ReduceSum(x, mean, 1)
		k.Parallel(func(i tl.Expr) { mean.Set(mean.At(i).Div(float64(cols)), i) }, BM)
		k.Parallel(func(i, j tl.Expr) {
			c := x.At(i, j).Sub(mean.At(i))
			d.Set(c.Mul(c), i, j)
		}, BM, cols)
		k.ReduceSum(d, rstd, 1)
		k.Parallel(func(i tl.Expr) { rstd.Set(tl.Rsqrt(rstd.At(i).Div(float64(cols)).Add(eps)), i) }, BM)
		k.Parallel(func(i, j tl.Expr) {
			x.Set(x.At(i, j).Sub(mean.At(i)).Mul(rstd.At(i)).Mul(gs.At(j)).Add(bs.At(j)), i, j)
		}, BM, cols)
		k.Copy(x, Y.Sub(tl.Tile(bx, BM), tl.All))
	})
	return f
}
