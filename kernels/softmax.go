package kernels

import "github.com/tilego/tilego/tl"

// The steps the attention kernels share. Each is a few tile ops, written
// once here so that FlashAttention, its split-KV variant and MLA decoding
// cannot drift apart.

// maskScores hides, in the tile S of scores for key tile j, the keys past
// Skv and (causal) the keys after each query's diagonal. Only tiles that
// touch an edge pay for it.
func maskScores(k *tl.Block, S *tl.Tensor, s AttnShape, c AttnConfig, j, diag tl.Expr) {
	edge := j.Add(1).Mul(c.N).Gt(s.Skv)
	if s.Causal {
		edge = edge.Or(j.Add(1).Mul(c.N).Sub(1).Gt(diag))
	}
	k.If(edge, func() {
		k.Parallel(func(i, jj tl.Expr) {
			key := j.Mul(c.N).Add(jj)
			hide := key.Ge(s.Skv)
			if s.Causal {
				hide = hide.Or(key.Gt(diag.Add(i)))
			}
			S.Set(tl.Select(hide, tl.NegInf(), S.At(i, jj)), i, jj)
		}, c.M, c.N)
	})
}

// onlineSoftmax folds a masked rows×cols tile of scores S into the running
// row max m and row sum l (base 2, scores times scale): S becomes the tile's
// probabilities and mOld the factor that rescales what was accumulated
// before this tile.
func onlineSoftmax(k *tl.Block, S, m, mOld, l *tl.Tensor, scale float64, rows, cols int) {
	k.Copy(m, mOld)
	k.ReduceMax(S, m, 1, tl.Accumulate)
	ms := func(i tl.Expr) tl.Expr { // m·scale; 0 while a row is fully masked (m = -inf)
		return tl.Select(m.At(i).Eq(tl.NegInf()), 0, m.At(i).Mul(scale))
	}
	k.Parallel(func(i, jj tl.Expr) {
		S.Set(tl.Exp2(S.At(i, jj).Mul(scale).Sub(ms(i))), i, jj)
	}, rows, cols)
	k.Parallel(func(i tl.Expr) {
		mOld.Set(tl.Exp2(mOld.At(i).Mul(scale).Sub(ms(i))), i) // the rescale factor now
		l.Set(l.At(i).Mul(mOld.At(i)), i)
	}, rows)
	k.ReduceSum(S, l, 1, tl.Accumulate)
}

// mergeSplit adds one split's partial output oi, weighted by 2^(lse_i − m),
// into acc and the weight into sum; lseOf reads the split's base-2 LSE of a
// row, and m holds each row's largest. An empty split (lse = -inf) adds
// nothing, even where its partial output is NaN.
func mergeSplit(k *tl.Block, lseOf func(r tl.Expr) tl.Expr, oi, w, sum, m, acc *tl.Tensor, rows, dv int) {
	k.Parallel(func(r tl.Expr) {
		w.Set(tl.Select(lseOf(r).Eq(tl.NegInf()), 0, tl.Exp2(lseOf(r).Sub(m.At(r)))), r)
		sum.Set(sum.At(r).Add(w.At(r)), r)
	}, rows)
	k.Parallel(func(r, d tl.Expr) {
		acc.Set(tl.Select(w.At(r).Eq(0), acc.At(r, d), acc.At(r, d).Add(w.At(r).Mul(oi.At(r, d)))), r, d)
	}, rows, dv)
}

// normalizeRows divides each row of acc by its sum (0 for an empty row),
// and leaves sum holding the factor it took: 1/sum, 0 for an empty row.
// A division a row and a multiply an element: a division an element is an
// IEEE divide each (reciprocal, Newton step, slow-path check), 64-128 a
// thread in an epilogue that nothing else on the SM hides.
func normalizeRows(k *tl.Block, acc, sum *tl.Tensor, rows, dv int) {
	k.Parallel(func(i tl.Expr) {
		sum.Set(tl.Select(sum.At(i).Eq(0), 0, tl.Float(1).Div(sum.At(i))), i)
	}, rows)
	k.Parallel(func(i, d tl.Expr) {
		acc.Set(acc.At(i, d).Mul(sum.At(i)), i, d)
	}, rows, dv)
}
