// Package kernels is tilego's library: GEMM and FlashAttention written in
// the tile language, each taking its shape and its config as parameters.
package kernels

import (
	"math"

	"github.com/tilego/tilego/tl"
)

// AttnShape is one attention problem. Tensors are indexed [B, H, S, D]
// whatever their memory layout.
type AttnShape struct {
	B, H, HKV, Sq, Skv, Dqk, Dv int
	Causal                      bool     // bottom-right aligned, as FlashAttention
	DType                       tl.DType // f16 or bf16
	BSHD                        bool     // memory layout [B, S, H, D] instead of [B, H, S, D]
	Scale                       float64  // softmax scale; 0 means 1/sqrt(Dqk)
}

// AttnConfig is how the kernel tiles the problem.
type AttnConfig struct {
	M, N    int // query rows and key rows per tile
	Stages  int
	Threads int
}

// SoftmaxScale is the scale applied to Q·Kᵀ.
func (s AttnShape) SoftmaxScale() float64 {
	if s.Scale != 0 {
		return s.Scale
	}
	return 1 / math.Sqrt(float64(s.Dqk))
}

// strides returns the element strides of a [B, heads, S, D] tensor.
func (s AttnShape) strides(heads, seq, d int) []any {
	if s.BSHD {
		return []any{seq * heads * d, d, heads * d, 1}
	}
	return []any{heads * seq * d, seq * d, d, 1}
}

// FlashAttention computes O = softmax(scale·Q·Kᵀ)·V and the log-sum-exp of
// each query row, one block per M query rows, streaming K and V in tiles
// of N rows with the online softmax.
func FlashAttention(s AttnShape, c AttnConfig) *tl.Func {
	f := tl.NewFunc("flash_attention")
	Q := f.In("Q", s.DType, s.B, s.H, s.Sq, s.Dqk).WithStrides(s.strides(s.H, s.Sq, s.Dqk)...)
	K := f.In("K", s.DType, s.B, s.HKV, s.Skv, s.Dqk).WithStrides(s.strides(s.HKV, s.Skv, s.Dqk)...)
	V := f.In("V", s.DType, s.B, s.HKV, s.Skv, s.Dv).WithStrides(s.strides(s.HKV, s.Skv, s.Dv)...)
	O := f.Out("O", s.DType, s.B, s.H, s.Sq, s.Dv).WithStrides(s.strides(s.H, s.Sq, s.Dv)...)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	scale := s.SoftmaxScale() * math.Log2E // softmax in base 2
	groups := s.H / s.HKV
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		if s.Causal { // the longest rows first, so the last wave is short
			bx = tl.CeilDiv(s.Sq, c.M).Sub(1).Sub(bx)
		}
		hk := h.Div(groups)
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

		k.Copy(Q.Sub(b, h, tl.Tile(bx, c.M), tl.All), qs)
		k.Clear(acc)
		k.Clear(l)
		k.Fill(m, tl.NegInf())
		// Causal: key j is visible to query i when j <= i + Skv - Sq.
		diag := bx.Mul(c.M).Add(s.Skv - s.Sq)
		nKV := tl.CeilDiv(s.Skv, c.N)
		if s.Causal {
			nKV = tl.Max(0, tl.Min(nKV, tl.CeilDiv(diag.Add(c.M), c.N)))
		}
		k.Pipelined(nKV, c.Stages, func(j tl.Expr) {
			k.Copy(K.Sub(b, hk, tl.Tile(j, c.N), tl.All), ks)
			k.Gemm(qs, ks, S, tl.TransB, tl.ClearAccum, tl.WithPolicy(tl.FullRow))
			maskScores(k, S, s, c, j, diag)
			onlineSoftmax(k, S, m, mOld, l, scale, c.M, c.N)
			k.Parallel(func(i, d tl.Expr) {
				acc.Set(acc.At(i, d).Mul(mOld.At(i)), i, d)
			}, c.M, s.Dv)
			k.Copy(S, P)
			k.Copy(V.Sub(b, hk, tl.Tile(j, c.N), tl.All), vs)
			k.Gemm(P, vs, acc, tl.WithPolicy(tl.FullRow))
		})
		normalizeRows(k, acc, l, c.M, s.Dv)
		k.Parallel(func(i tl.Expr) { // natural-log LSE; -inf for a row with no keys
			v := m.At(i).Mul(scale).Add(tl.Log2(l.At(i))).Mul(math.Ln2)
			lse.Set(tl.Select(l.At(i).Eq(0), tl.NegInf(), v), i)
		}, c.M)
		os := k.Shared(s.DType, c.M, s.Dv).Named("os")    // reuses the operand tiles' bytes
		k.Copy(acc, os)                                   // so the stores to O are 16-byte,
		k.Copy(os, O.Sub(b, h, tl.Tile(bx, c.M), tl.All)) // coalesced rows
		k.Copy(lse, LSE.Sub(b, h, tl.Tile(bx, c.M)))
	})
	return f
}
