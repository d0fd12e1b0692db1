// Package testprog holds small tile programs that exercise what the
// library's kernels do not (symbolic sizes, default fragment layouts,
// reductions across warps, atomics), for the interpreter and GPU tests.
package testprog

import "github.com/tilego/tilego/tl"

// RowScale multiplies the rows of an M×64 tensor (M symbolic) by 2 and adds
// the absolute maximum of each row into a global column atomically: copies
// at a ragged edge, a reduction, an atomic add and a size bound at launch.
func RowScale() *tl.Func {
	f := tl.NewFunc("row_scale")
	m := f.Sym("M")
	X := f.In("X", tl.BF16, m, 64)
	Y := f.Out("Y", tl.F32, m, 64)
	A := f.Out("A", tl.F32, 1)
	f.Kernel(tl.Grid(tl.CeilDiv(m, 32)), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		xs := k.Shared(tl.BF16, 32, 64)
		fr := k.Fragment(tl.F32, 32, 64)
		rmax := k.Fragment(tl.F32, 32)
		tot := k.Fragment(tl.F32, 1)
		k.Copy(X.Sub(tl.Tile(bx, 32), tl.All), xs)
		k.Copy(xs, fr)
		k.Parallel(func(i, j tl.Expr) { fr.Set(fr.At(i, j).Mul(2), i, j) }, 32, 64)
		k.ReduceAbsMax(fr, rmax, 1)
		k.ReduceSum(rmax, tot, 0)
		k.Copy(fr, Y.Sub(tl.Tile(bx, 32), tl.All))
		k.AtomicAdd(tot, A)
	})
	return f
}

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
