package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// The tail split of a grid of several waves: the blocks of the full waves
// run whole, as FlashAttention's, and only the blocks of the last wave are
// cut in pieces that spread over the SMs it would leave idle.
//
// Query tiles are numbered t = (b·H + h)·nM + x (x the tile's position in
// launch order; causal grids take the longest rows first, as
// FlashAttention's do). With W waves of sms blocks, tiles t < full =
// (W−1)·sms run whole; each of the tail = T − full others is cut in splits
// pieces. The grid is one dimension of full + tail·splits blocks, so the
// pieces are scheduled last, into the last wave. The partials are
//
//	O_partial   [splits, tail, M, Dv]  f32, the piece's normalized rows
//	LSE_partial [splits, tail, M]      base 2
//
// and AttnCombineTail merges them into the tail tiles' rows of O and LSE.

// attnTail is the tiling of a tail split.
type attnTail struct {
	nM, tiles, full, tail int
}

// tailOf is the tiling on sms SMs, whose waves are of attnPerSM(s)·sms
// blocks; all zeros (no tail split) for a config or SM count that cannot
// be one.
func tailOf(s AttnShape, c AttnConfig, sms int) attnTail {
	if sms < 1 || c.M < 1 {
		return attnTail{}
	}
	nM := (s.Sq + c.M - 1) / c.M
	t := attnTail{nM: nM, tiles: s.B * s.H * nM}
	slots := sms * attnPerSM(s)
	waves := (t.tiles + slots - 1) / slots
	t.full = (waves - 1) * slots
	t.tail = t.tiles - t.full
	return t
}

// tile maps tile number t to its batch, head and query tile.
func (a attnTail) tile(s AttnShape, t tl.Expr) (b, h, bx tl.Expr) {
	x := t.Mod(a.nM)
	if s.Causal { // the longest rows first
		x = tl.Int(a.nM - 1).Sub(x)
	}
	return t.Div(a.nM * s.H), t.Div(a.nM).Mod(s.H), x
}

// FlashAttentionTail is FlashAttention with the last wave's blocks cut in
// splits pieces for a GPU of sms SMs (see above).
func FlashAttentionTail(s AttnShape, c AttnConfig, sms, splits int) *tl.Func {
	a := tailOf(s, c, sms)
	f := tl.NewFunc("flash_attention_tail")
	if s.Mods != nil && s.Mods.Declare != nil {
		f.Refuse("the split kernels do not take modifiers that read tensors (%s) yet", s.Mods.Name)
	}
	Q, K, V := s.qkv(f)
	O := s.rows(f.Out, "O", s.H, s.Sq, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	OP := f.Out("O_partial", tl.F32, splits, a.tail, c.M, s.Dv)
	LP := f.Out("LSE_partial", tl.F32, splits, a.tail, c.M)
	f.Kernel(tl.Grid(a.full+a.tail*splits), c.Threads, func(k *tl.Block) {
		g, _, _ := k.Idx()
		whole := g.Lt(a.full)
		p := g.Sub(a.full) // this block's piece, when it is one
		q := tl.Select(whole, 0, p.Div(splits))
		sp := tl.Select(whole, 0, p.Mod(splits))
		b, h, bx := a.tile(s, tl.Select(whole, g, q.Add(a.full)))
		r := attnLoop(k, Q, K, V, s, c, b, h, bx, nil, func(nKV tl.Expr) (lo, hi tl.Expr) {
			per := tl.Select(whole, nKV, tl.CeilDiv(nKV, splits))
			return tl.Min(sp.Mul(per), nKV), tl.Min(sp.Add(1).Mul(per), nKV)
		})
		k.If(whole, func() {
			finalRows(k, r, O, LSE, s, c, b, h, bx)
		}).Else(func() {
			partialRows(k, r, c, s.Dv, OP.Sub(sp, q, tl.All, tl.All), LP.Sub(sp, q, tl.All))
		})
	})
	return f
}

// AttnCombineTail merges FlashAttentionTail's pieces into the tail tiles'
// rows of O and LSE, as AttnCombine does for every row: R rows of one tail
// tile per block, grid (M/R, tail).
func AttnCombineTail(s AttnShape, c AttnConfig, cc AttnCombineConfig, sms, splits int) *tl.Func {
	a := tailOf(s, c, sms)
	R := cc.Rows
	f := tl.NewFunc("flash_attention_combine_tail")
	OP := f.In("O_partial", tl.F32, splits, a.tail, c.M, s.Dv)
	LP := f.In("LSE_partial", tl.F32, splits, a.tail, c.M)
	O := s.rows(f.Out, "O", s.H, s.Sq, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	f.Kernel(tl.Grid(c.M/R, a.tail), cc.Threads, func(k *tl.Block) {
		rx, q, _ := k.Idx()
		b, h, bx := a.tile(s, q.Add(a.full))
		row0 := bx.Mul(c.M).Add(rx.Mul(R)) // the first query row of this block
		acc, lse, os := combinePieces(k, s, R, splits,
			func(i tl.Expr) tl.Region { return LP.Sub(i, q, tl.Tile(rx, R)) },
			func(i tl.Expr) tl.Region { return OP.Sub(i, q, tl.Tile(rx, R), tl.All) })
		k.Copy(acc, os)
		k.Copy(os, O.Sub(b, h, tl.Range(row0, R), tl.All)) // rows past Sq are not stored
		k.Copy(lse, LSE.Sub(b, h, tl.Range(row0, R)))
	})
	return f
}

// TailSplitFits reports whether the tail split applies to s at c on sms
// SMs: a grid of more than one wave, and combine blocks that tile M.
func TailSplitFits(s AttnShape, c AttnConfig, sms int) bool {
	a := tailOf(s, c, sms)
	return a.full > 0 && c.M%DefaultAttnCombineConfig().Rows == 0
}

// FlashAttentionTailSteps are the tail split's two programs over the
// tensors of FlashAttentionTailInputs (Q, K, V, O, LSE, O_partial,
// LSE_partial): the kernel writes O and LSE for the whole tiles and the
// partials for the pieces; the combine writes the rest of O and LSE.
func FlashAttentionTailSteps(s AttnShape, c AttnConfig, sms, splits int) ([]Step, error) {
	switch {
	case splits < 2:
		return nil, fmt.Errorf("flash-attention: a tail split needs at least 2 splits, got %d", splits)
	case sms < 1:
		return nil, fmt.Errorf("flash-attention: a tail split for %d SMs; want at least 1", sms)
	case c.M < 1:
		return nil, fmt.Errorf("flash-attention: a tail split of %d-row tiles; want at least 1 row", c.M)
	}
	if !TailSplitFits(s, c, sms) {
		return nil, fmt.Errorf("flash-attention: %d blocks of %d rows fit one wave of %d SMs (%d an SM): the split of every block (FlashAttentionSplitSteps) applies", tailOf(s, c, sms).tiles, c.M, sms, attnPerSM(s))
	}
	return []Step{
		{FlashAttentionTail(s, c, sms, splits), []int{0, 1, 2, 3, 4, 5, 6}},
		{AttnCombineTail(s, c, DefaultAttnCombineConfig(), sms, splits), []int{5, 6, 3, 4}},
	}, nil
}

// FlashAttentionTailInputs is AttentionInputs followed by NaN-poisoned
// partials for the tail's pieces.
func FlashAttentionTailInputs(s AttnShape, c AttnConfig, sms, splits int, seed uint64) []*tensor.Tensor {
	a := tailOf(s, c, sms)
	return append(AttentionInputs(s, seed),
		tensor.New(ir.F32, splits, a.tail, c.M, s.Dv).Fill(math.NaN()),
		tensor.New(ir.F32, splits, a.tail, c.M).Fill(math.NaN()))
}
