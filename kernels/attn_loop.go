package kernels

import (
	"math"

	"github.com/tilego/tilego/tl"
)

// attnRows is what one block's main loop leaves for its epilogue: the
// unnormalized output rows, the running max and sum of each row, a
// fragment for the LSE, and the softmax scale in base 2.
type attnRows struct {
	acc, m, l, lse *tl.Tensor
	scale          float64
}

// attnLoop is the body the FlashAttention kernels share: query tile bx
// (M rows) of head h in batch b against the KV tiles [lo, hi) that piece
// picks from the tile's nKV (causal included); with piece nil, all of them
// in a Pipelined loop. prefetch, when not nil, runs once the query tile's
// copy is issued.
func attnLoop(k *tl.Block, Q, K, V *tl.Tensor, s AttnShape, c AttnConfig, b, h, bx tl.Expr, prefetch func(), piece func(nKV tl.Expr) (lo, hi tl.Expr)) attnRows {
	return attnLoopFrom(k, attnSrc{Q: Q, K: K, V: V}, s, c, b, h, bx, prefetch, piece)
}

// attnSrc is where attnLoop's tiles come from: Q, K and V as [B, H, S, D]
// tensors, or (packed set) a varlen batch's packed [T, H, D] tensors,
// sequence b's rows starting at q0 and k0, sq and skv long, or (table set)
// K and V as a paged cache [pages, N, HKV, D] whose batch entry b's key
// tile j is page table[b, j], skv keys long.
type attnSrc struct {
	Q, K, V         *tl.Tensor
	packed          bool
	q0, k0, sq, skv tl.Expr
	table           *tl.Tensor
}

// qTile is query tile bx of head h in batch b.
func (a attnSrc) qTile(b, h, bx tl.Expr, m int) any {
	if a.packed { // a tile past the sequence's end (it stores nothing) reads its last rows
		return a.Q.Sub(tl.Range(a.q0.Add(tl.Min(bx.Mul(m), a.sq.Sub(1))), m), h, tl.All)
	}
	return a.Q.Sub(b, h, tl.Tile(bx, m), tl.All)
}

// kvTile is key tile j of t (K or V) of KV head hk in batch b.
func (a attnSrc) kvTile(t *tl.Tensor, b, hk, j tl.Expr, n int) any {
	if a.table != nil {
		return t.Sub(a.table.At(b, j), tl.All, hk, tl.All)
	}
	if a.packed {
		return t.Sub(tl.Range(a.k0.Add(j.Mul(n)), n), hk, tl.All)
	}
	return t.Sub(b, hk, tl.Tile(j, n), tl.All)
}

// lens are the sequence lengths, the static ones unless packed.
func (a attnSrc) lens(s AttnShape) (sq, skv tl.Expr) {
	if a.packed {
		return a.sq, a.skv
	}
	if a.table != nil {
		return tl.Int(s.Sq), a.skv
	}
	return tl.Int(s.Sq), tl.Int(s.Skv)
}

func attnLoopFrom(k *tl.Block, src attnSrc, s AttnShape, c AttnConfig, b, h, bx tl.Expr, prefetch func(), piece func(nKV tl.Expr) (lo, hi tl.Expr)) attnRows {
	scale := s.SoftmaxScale() * math.Log2E // softmax in base 2
	if c.WS {
		k.WarpSpecialize()
	}
	if c.PingPong {
		k.PingPong()
	}
	if c.Cluster > 1 {
		k.Cluster(c.Cluster)
	}
	hk := h.Div(s.H / s.HKV)
	qs := k.Shared(s.DType, c.M, s.Dqk).Named("qs")
	ks := k.Shared(s.DType, c.N, s.Dqk).Named("ks")
	vs := k.Shared(s.DType, c.N, s.Dv).Named("vs")
	S := k.Fragment(tl.F32, c.M, c.N).Named("S")
	P := k.Fragment(s.DType, c.M, c.N).Named("P")
	acc := k.Fragment(tl.F32, c.M, s.Dv).Named("acc")
	m := k.Fragment(tl.F32, c.M).Named("m")
	mOld := k.Fragment(tl.F32, c.M).Named("m_old")
	l := k.Fragment(tl.F32, c.M).Named("l")
	lse := k.Fragment(tl.F32, c.M).Named("lse")

	// A walk's query tile is read once: evict-first keeps K and V in L2
	// (H100, d256 causal 512: 0.984-0.987× the time; docs/perf.md).
	var qHint []tl.CacheHint
	if c.Persistent {
		qHint = append(qHint, tl.EvictFirst)
	}
	k.Copy(src.qTile(b, h, bx, c.M), qs, qHint...)
	if prefetch != nil {
		prefetch()
	}
	k.Clear(acc)
	k.Clear(l)
	k.Fill(m, tl.NegInf())
	// Causal: key j is visible to query i when j <= i + Skv - Sq.
	sq, skv := src.lens(s)
	diag := bx.Mul(c.M).Add(skv.Sub(sq))
	nKV := tl.CeilDiv(skv, c.N)
	if s.Causal {
		nKV = tl.Max(0, tl.Min(nKV, tl.CeilDiv(diag.Add(c.M), c.N)))
	}
	pv := func(j tl.Expr) {
		k.Copy(src.kvTile(src.V, b, hk, j, c.N), vs)
		k.Gemm(P, vs, acc, tl.WithPolicy(tl.FullRow))
	}
	body := func(j tl.Expr) {
		k.Copy(src.kvTile(src.K, b, hk, j, c.N), ks)
		k.Gemm(qs, ks, S, tl.TransB, tl.ClearAccum, tl.WithPolicy(tl.FullRow))
		if c.Overlap { // tile j-1's P·V computes while tile j's softmax runs
			k.Defer(func() { pv(j) })
		}
		modScores(k, S, s, c, b, h, bx.Mul(c.M), j)
		maskScores(k, S, s, c, j, diag, skv)
		keep := s.Dv >= keepMaxCols
		OnlineSoftmax(k, S, m, mOld, l, scale, c.M, c.N, keep)
		if keep {
			k.ScaleRows(acc, mOld)
		} else {
			k.Parallel(func(i, d tl.Expr) {
				acc.Set(acc.At(i, d).Mul(mOld.At(i)), i, d)
			}, c.M, s.Dv)
		}
		k.Copy(S, P)
		if !c.Overlap {
			pv(j)
		}
	}
	if lo, hi, ok := modKeyTiles(s, c, b, bx, nKV); ok && piece == nil {
		k.PipelinedRange(lo, hi, c.Stages, body)
	} else if piece == nil {
		k.Pipelined(nKV, c.Stages, body)
	} else {
		lo, hi := piece(nKV)
		k.PipelinedRange(lo, hi, c.Stages, body)
	}
	return attnRows{acc: acc, m: m, l: l, lse: lse, scale: scale}
}

// finalRows normalizes r.acc and stores it to O's tile bx of head h in
// batch b (through shared memory, so the stores are 16-byte rows), with
// the natural-log LSE; a row with no keys gets zeros and -inf.
func finalRows(k *tl.Block, r attnRows, O, LSE *tl.Tensor, s AttnShape, c AttnConfig, b, h, bx tl.Expr) {
	k.Parallel(func(i tl.Expr) {
		v := r.m.At(i).Mul(r.scale).Add(tl.Log2(r.l.At(i))).Mul(math.Ln2)
		r.lse.Set(tl.Select(r.l.At(i).Eq(0), tl.NegInf(), v), i)
	}, c.M)
	NormalizeRows(k, r.acc, r.l, c.M, s.Dv)
	if c.Direct {
		k.Copy(r.acc, O.Sub(b, h, tl.Tile(bx, c.M), tl.All))
	} else {
		os := k.Shared(s.DType, c.M, s.Dv).Named("os")    // reuses the operand tiles' bytes
		k.Copy(r.acc, os)                                 // so the stores to O are 16-byte,
		k.Copy(os, O.Sub(b, h, tl.Tile(bx, c.M), tl.All)) // coalesced rows
	}
	k.Copy(r.lse, LSE.Sub(b, h, tl.Tile(bx, c.M)))
}

// partialRows normalizes r.acc and leaves it, with the base-2 LSE of its
// keys (-inf for a row it gives no key), for a combine: the f32 rows go
// straight from the fragments to the regions oAt and lAt name.
func partialRows(k *tl.Block, r attnRows, c AttnConfig, dv int, oAt, lAt tl.Region) {
	k.Parallel(func(i tl.Expr) {
		v := r.m.At(i).Mul(r.scale).Add(tl.Log2(r.l.At(i)))
		r.lse.Set(tl.Select(r.l.At(i).Eq(0), tl.NegInf(), v), i)
	}, c.M)
	NormalizeRows(k, r.acc, r.l, c.M, dv)
	k.Copy(r.acc, oAt)
	k.Copy(r.lse, lAt)
}
