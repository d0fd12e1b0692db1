package examples

import "github.com/tilego/tilego/tl"

// Softmax normalizes the rows of a rows×cols tensor: BM rows a block, held
// whole in shared memory in the input's type, BN columns at a time in an
// f32 fragment; an online maximum and sum, then a second pass that writes
// the result back into the shared tile. A shared tile read into a fragment,
// rewritten in place and stored to global memory, as a newcomer writes it.
func Softmax(rows, cols int, dt tl.DType, BM, BN, threads int) *tl.Func {
	f := tl.NewFunc("softmax")
	X := f.In("X", dt, rows, cols)
	Y := f.Out("Y", dt, rows, cols)
	nb := cols / BN
	const log2e = 1.4426950408889634
	f.Kernel(tl.Grid(tl.CeilDiv(rows, BM)), threads, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		xs := k.Shared(dt, BM, cols).Named("xs")
		xf := k.Fragment(tl.F32, BM, BN).Named("xf")
		m := k.Fragment(tl.F32, BM).Named("m")
		mOld := k.Fragment(tl.F32, BM).Named("m_old")
		l := k.Fragment(tl.F32, BM).Named("l")
		k.Copy(X.Sub(tl.Tile(bx, BM), tl.All), xs)
		k.Fill(m, tl.NegInf())
		k.Clear(l)
		k.Serial(nb, func(j tl.Expr) {
			k.Copy(xs.Sub(tl.All, tl.Tile(j, BN)), xf)
			k.Copy(m, mOld)
			k.Parallel(func(i, jj tl.Expr) { xf.Set(xf.At(i, jj).Mul(log2e), i, jj) }, BM, BN)
			k.ReduceMax(xf, m, 1, tl.Accumulate)
			k.Parallel(func(i tl.Expr) { l.Set(l.At(i).Mul(tl.Exp2(mOld.At(i).Sub(m.At(i)))), i) }, BM)
			k.Parallel(func(i, jj tl.Expr) { xf.Set(tl.Exp2(xf.At(i, jj).Sub(m.At(i))), i, jj) }, BM, BN)
			k.ReduceSum(xf, l, 1, tl.Accumulate)
		})
		k.Parallel(func(i tl.Expr) { l.Set(tl.Float(1).Div(l.At(i)), i) }, BM)
		k.Serial(nb, func(j tl.Expr) {
			k.Copy(xs.Sub(tl.All, tl.Tile(j, BN)), xf)
			k.Parallel(func(i, jj tl.Expr) {
				xf.Set(tl.Exp2(xf.At(i, jj).Mul(log2e).Sub(m.At(i))).Mul(l.At(i)), i, jj)
			}, BM, BN)
			k.Copy(xf, xs.Sub(tl.All, tl.Tile(j, BN)))
		})
		k.Copy(xs, Y.Sub(tl.Tile(bx, BM), tl.All))
	})
	return f
}
