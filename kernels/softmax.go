package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/tl"
)

// The steps the attention kernels share. Each is a few tile ops, written
// once here so that FlashAttention, its split-KV variant and MLA decoding
// cannot drift apart.

// maskScores hides, in the tile S of scores for key tile j, the keys past
// Skv and (causal) the keys after each query's diagonal. Only tiles that
// touch an edge pay for it.
func maskScores(k *tl.Block, S *tl.Tensor, s AttnShape, c AttnConfig, j, diag, skv tl.Expr) {
	edge := j.Add(1).Mul(c.N).Gt(skv)
	if s.Causal {
		edge = edge.Or(j.Add(1).Mul(c.N).Sub(1).Gt(diag))
	}
	k.If(edge, func() {
		k.Parallel(func(i, jj tl.Expr) {
			key := j.Mul(c.N).Add(jj)
			hide := key.Ge(skv)
			if s.Causal {
				hide = hide.Or(key.Gt(diag.Add(i)))
			}
			S.Set(tl.Select(hide, tl.NegInf(), S.At(i, jj)), i, jj)
		}, c.M, c.N)
	})
}

// Keeping the maximum. The maximum OnlineSoftmax subtracts need only
// bound a row's scores, not equal their maximum: with keep, it takes a
// new one only when the row's maximum grows by more than maxMargin (base
// 2, scores times scale), so probabilities reach at most 2^8 (f32 sums and
// bf16 or f16 P hold that), and the rescale factor stays exactly one after
// the first tile in most rows, which lets the caller's rescale skip its
// multiplies (tl's ScaleRows). That pays where the accumulator is wide: on
// an H100 (2026-11-25, A/B back to back, four rounds) at head dim 256 it
// ran 1.015× at 512 tokens, 1.038× at 1k, 1.040× at 4k and MLA h_q 128
// 1.010×; at head dim 128 and 64, whose rescale is half or a quarter as
// long, the kept maximum's extra steps before the exponentials cost
// 0.7-1.7%, so there the maximum is the row's own.
const (
	maxMargin = 8
	// keepMaxCols: the least output width a warpgroup holds (128
	// accumulator registers a thread) for which FlashAttention keeps the
	// maximum.
	keepMaxCols = 256
)

// OnlineSoftmax folds a masked rows×cols tile of scores S into the running
// row max m and row sum l (base 2, scores times scale): S becomes the tile's
// probabilities and mOld the factor that rescales what was accumulated
// before this tile. m starts at -inf and l at 0; a masked score is -inf. A
// loop over key tiles calls it on each tile's scores, multiplies its
// accumulator's rows by mOld, adds P·V, and after the loop divides by l
// (NormalizeRows). keep lets m lag the row's maximum by up to 2^8 (see
// above): pass false unless the accumulator is wide. The attention kernels
// are built from it; ExampleOnlineSoftmax builds a sliding-window one.
func OnlineSoftmax(k *tl.Block, S, m, mOld, l *tl.Tensor, scale float64, rows, cols int, keep bool) {
	k.Copy(m, mOld)
	k.ReduceMax(S, m, 1, tl.Accumulate)
	if keep { // the old maximum unless the row's grew past the margin
		k.Parallel(func(i tl.Expr) {
			grew := m.At(i).Sub(mOld.At(i)).Mul(scale).Gt(maxMargin)
			m.Set(tl.Select(grew, m.At(i), mOld.At(i)), i)
		}, rows)
	}
	ms := func(i tl.Expr) tl.Expr { // m·scale; 0 while a row is fully masked (m = -inf)
		return tl.Select(m.At(i).Eq(tl.NegInf()), 0, m.At(i).Mul(scale))
	}
	k.Parallel(func(i, jj tl.Expr) {
		S.Set(tl.Exp2(S.At(i, jj).Mul(scale).Sub(ms(i))), i, jj)
	}, rows, cols)
	k.Parallel(func(i tl.Expr) {
		f := tl.Exp2(mOld.At(i).Mul(scale).Sub(ms(i))) // the rescale factor now
		if keep {
			// Exactly one where the maximum stayed: the difference of
			// two products may be fused into a rounding error.
			f = tl.Select(m.At(i).Eq(mOld.At(i)), 1, f)
		}
		mOld.Set(f, i)
		l.Set(l.At(i).Mul(mOld.At(i)), i)
	}, rows)
	k.ReduceSum(S, l, 1, tl.Accumulate)
}

// mergeGroup is how many splits a combine loads at once: their loads are
// in flight together, one round trip for the group, and each holds its
// rows in registers until it is folded in.
const mergeGroup = 4

// mergeSplits merges n splits of R partial rows: split i's base-2 LSE
// (lseOf(i), R values) and output (oOf(i), R × dv, of type odt). The splits
// are merged online in one pass, mergeGroup at a time: the group's rows
// are loaded into registers together, then folded in one after another.
// For each row, with m the largest LSE so far:
//
//	m' = max(m, lse_i),  α = 2^(m − m'),  w = 2^(lse_i − m')
//	sum = α·sum + w,     acc = α·acc + w·O_i
//
// An empty split (lse_i = −inf) has w = 0 and adds nothing whatever O_i
// holds, so a row no split saw gets zeros and −inf, never NaN. It returns
// the normalized rows and their natural-log LSE. Everything lives in
// fragments, the rows' statistics as fragments of the rows: the compiler
// gives the rows one thread each where it can (layout.Rows), so the merge
// needs no shared memory and no barrier, and the rows move as 16-byte
// vectors (on the GPU, 1.5-3% of MLA's time at kv8k went to the combine's
// barriers and staging).
func mergeSplits(k *tl.Block, n any, R, dv int, odt tl.DType, lseOf, oOf func(i tl.Expr) tl.Region) (acc, lse *tl.Tensor) {
	frag := func(name string, dims ...int) *tl.Tensor { return k.Fragment(tl.F32, dims...).Named(name) }
	st := rowStats{frag("m", R), frag("alpha", R), frag("w", R), frag("sum", R)}
	acc = frag("acc", R, dv)
	var ls, os [mergeGroup]*tl.Tensor
	for u := range mergeGroup {
		ls[u] = frag(fmt.Sprintf("lse_%d", u), R)
		os[u] = k.Fragment(odt, R, dv).Named(fmt.Sprintf("o_%d", u))
	}
	k.Fill(st.m, tl.NegInf())
	k.Clear(st.sum)
	k.Clear(acc)
	nx := tl.Int(0).Add(n)
	k.Serial(nx.Add(mergeGroup-1).Div(mergeGroup), func(g tl.Expr) {
		split := func(u int) tl.Expr { return g.Mul(mergeGroup).Add(u) }
		for u := range mergeGroup {
			k.If(split(u).Lt(nx), func() {
				k.Copy(lseOf(split(u)), ls[u])
				k.Copy(oOf(split(u)), os[u])
			})
		}
		for u := range mergeGroup {
			k.If(split(u).Lt(nx), func() { mergeStep(k, R, dv, ls[u].At, st, acc, os[u]) })
		}
	})
	lse = frag("lse", R)
	k.Parallel(func(r tl.Expr) { lse.Set(st.lse(r), r) }, R)
	NormalizeRows(k, acc, st.sum, R, dv)
	return acc, lse
}

// NormalizeRows divides each row of acc by its sum (0 for an empty row),
// and leaves sum holding the factor it took: 1/sum, 0 for an empty row.
// A division a row and a multiply an element: a division an element is an
// IEEE divide each (reciprocal, Newton step, slow-path check), 64-128 a
// thread in an epilogue that nothing else on the SM hides.
func NormalizeRows(k *tl.Block, acc, sum *tl.Tensor, rows, dv int) {
	k.Parallel(func(i tl.Expr) {
		sum.Set(tl.Select(sum.At(i).Eq(0), 0, tl.Float(1).Div(sum.At(i))), i)
	}, rows)
	k.Parallel(func(i, d tl.Expr) {
		acc.Set(acc.At(i, d).Mul(sum.At(i)), i, d)
	}, rows, dv)
}

// rowStats are a merge's row statistics (mergeSplits' fragments, the
// Merge path's shared tiles): the largest LSE so far, this split's α and
// w, and the sum of weights.
type rowStats struct{ m, a, w, sum *tl.Tensor }

// fold takes a split's LSEs (row r's lseAt(r)) into the statistics: the
// new maximum, this split's α (the factor for what is merged so far) and
// w (its own weight), and the sum of weights.
func (st rowStats) fold(k *tl.Block, R int, lseAt func(...any) tl.Expr) {
	m, a, w, sum := st.m, st.a, st.w, st.sum
	k.Parallel(func(r tl.Expr) {
		mNew := tl.Max(m.At(r), lseAt(r))
		a.Set(tl.Select(m.At(r).Eq(tl.NegInf()), 0, tl.Exp2(m.At(r).Sub(mNew))), r)
		w.Set(tl.Select(lseAt(r).Eq(tl.NegInf()), 0, tl.Exp2(lseAt(r).Sub(mNew))), r)
		sum.Set(sum.At(r).Mul(a.At(r)).Add(w.At(r)), r)
		m.Set(mNew, r)
	}, R)
}

// lse is row r's natural-log LSE once every split is in: -inf for a row
// no split saw.
func (st rowStats) lse(r tl.Expr) tl.Expr {
	v := st.m.At(r).Add(tl.Log2(st.sum.At(r))).Mul(math.Ln2)
	return tl.Select(st.sum.At(r).Eq(0), tl.NegInf(), v)
}

// mergeStep folds split i (row r's LSE lseAt(r), its rows oi) into acc.
func mergeStep(k *tl.Block, R, dv int, lseAt func(...any) tl.Expr, st rowStats, acc, oi *tl.Tensor) {
	st.fold(k, R, lseAt)
	a, w := st.a, st.w
	k.Parallel(func(r, d tl.Expr) {
		old := acc.At(r, d).Mul(a.At(r))
		acc.Set(tl.Select(w.At(r).Eq(0), old, old.Add(w.At(r).Mul(oi.At(r, d)))), r, d)
	}, R, dv)
}
