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
