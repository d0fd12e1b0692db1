package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// AttnMods are FlashAttention's score and mask modifiers (FlexAttention's
// score_mod and mask_mod), Go functions of tile expressions compiled into
// the forward kernel: Score rewrites each score s (Q·Kᵀ times the softmax
// scale) of query q and key kv in head h of batch b, Mask says whether q
// sees kv at all (on top of Causal and the sequence's end). q and kv are
// positions in the sequences; on a tile past the end they run past Sq or
// Skv, so a modifier that reads a tensor by them must guard the read. The
// Ref functions are the same in float64, for checking (the registry's
// flags set both); Name says what they do in a shape's fields.
//
// A mask that knows its shape says so: Keys bounds the keys that queries
// [q0, q1) of batch entry b may see, [lo, hi), and the kernel visits only
// the key tiles that range covers (a sliding window's time grows with the
// window, not the sequence); Whole reports that every query of [q0, q1)
// sees every key of [k0, k1), and the kernel skips the mask on such a
// tile. Queries bounds the other way the queries that may see keys [k0,
// k1), [lo, hi): the backward, a block per key tile, visits only those
// query tiles. All three may read the modifiers' tensors (a document's
// bounds). A mask
// without them is evaluated on every score of every tile. Without mods the
// kernel is the plain one, byte for byte.
//
// Modifiers that read tensors (a document id a token, a bias table) set
// Declare: FlashAttention calls it once its own parameters are declared
// (Q, K, V, O, LSE), it declares the tensors it reads as inputs after them
// and returns the modifiers that read them; Inputs makes those tensors'
// host values for a run, in that order.
type AttnMods struct {
	Name     string
	Score    func(s, b, h, q, kv tl.Expr) tl.Expr
	Mask     func(b, h, q, kv tl.Expr) tl.Expr
	Keys     func(b, q0, q1 tl.Expr) (lo, hi tl.Expr)
	Whole    func(b, q0, q1, k0, k1 tl.Expr) tl.Expr
	Queries  func(b, k0, k1 tl.Expr) (lo, hi tl.Expr)
	RefScore func(s float64, b, h, q, kv int) float64
	RefMask  func(b, h, q, kv int) bool
	Declare  func(f *tl.Func) AttnMods
	Inputs   func() []*tensor.Tensor
	// ScoreGrad is Score's derivative at s, which the backward needs (a
	// score modifier without it is refused there); RefScoreGrad its
	// float64 twin.
	ScoreGrad    func(s, b, h, q, kv tl.Expr) tl.Expr
	RefScoreGrad func(s float64, b, h, q, kv int) float64
}

// refAttn is s's float64 reference, with its modifiers.
func (s AttnShape) refAttn() ref.Attn {
	ra := ref.Attn{Causal: s.Causal, Scale: s.SoftmaxScale()}
	if m := s.Mods; m != nil {
		ra.Score, ra.Mask, ra.ScoreGrad = m.RefScore, m.RefMask, m.RefScoreGrad
	}
	return ra
}

// declared is m with its tensors declared in f (Declare), or m itself.
func (m *AttnMods) declared(f *tl.Func) *AttnMods {
	if m == nil || m.Declare == nil {
		return m
	}
	d := m.Declare(f)
	d.Declare, d.Inputs = nil, nil
	return &d
}

// DocumentMask lets a token see only the tokens of its own document (packed
// sequences): lens are the documents' lengths, in order, summing to the
// sequence (queries and keys alike), the same in every batch entry. The
// kernel reads where each token's document starts and ends from i32 inputs
// DocStart and DocEnd [B, S]: two tokens share a document when they share
// its start, a query tile visits only the key tiles from its first
// token's document start to its last token's document end, and a tile
// inside one document skips the mask.
func DocumentMask(lens []int, batch, seq int) AttnMods {
	start, end := make([]int, 0, seq), make([]int, 0, seq)
	at := 0
	for _, n := range lens {
		for range n {
			start, end = append(start, at), append(end, at+n)
		}
		at += n
	}
	return AttnMods{
		Name:    fmt.Sprintf("docs=%d", len(lens)),
		RefMask: func(_, _, q, kv int) bool { return start[q] == start[kv] },
		Declare: func(f *tl.Func) AttnMods {
			ds, de := f.In("DocStart", tl.I32, batch, seq), f.In("DocEnd", tl.I32, batch, seq)
			// A tile's rows past the end read the last token's.
			first := func(b, i tl.Expr) tl.Expr { return ds.At(b, tl.Min(i, seq-1)) }
			last := func(b, i tl.Expr) tl.Expr { return de.At(b, tl.Min(i, seq-1)) }
			return AttnMods{
				Mask:    func(b, _, q, kv tl.Expr) tl.Expr { return first(b, q).Eq(first(b, kv)) },
				Keys:    func(b, q0, q1 tl.Expr) (lo, hi tl.Expr) { return first(b, q0), last(b, q1.Sub(1)) },
				Queries: func(b, k0, k1 tl.Expr) (lo, hi tl.Expr) { return first(b, k0), last(b, k1.Sub(1)) },
				Whole: func(b, q0, q1, k0, k1 tl.Expr) tl.Expr {
					s0 := first(b, q0)
					return s0.Eq(first(b, q1.Sub(1))).And(k0.Ge(s0)).And(k1.Le(last(b, q0)))
				},
			}
		},
		Inputs: func() []*tensor.Tensor {
			ts, te := tensor.New(tl.I32, batch, seq), tensor.New(tl.I32, batch, seq)
			for b := range batch {
				for i := range seq {
					ts.Data[b*seq+i], te.Data[b*seq+i] = float64(start[i]), float64(end[i])
				}
			}
			return []*tensor.Tensor{ts, te}
		},
	}
}

// SoftCap is Gemma-2's soft-capping: cap·tanh(s/cap).
func SoftCap(cap float64) AttnMods {
	return AttnMods{
		Name:     fmt.Sprintf("softcap=%g", cap),
		Score:    func(s, _, _, _, _ tl.Expr) tl.Expr { return tl.Tanh(s.Div(cap)).Mul(cap) },
		RefScore: func(s float64, _, _, _, _ int) float64 { return cap * math.Tanh(s/cap) },
		ScoreGrad: func(s, _, _, _, _ tl.Expr) tl.Expr {
			t := tl.Tanh(s.Div(cap))
			return tl.Float(1).Sub(t.Mul(t))
		},
		RefScoreGrad: func(s float64, _, _, _, _ int) float64 { t := math.Tanh(s / cap); return 1 - t*t },
	}
}

// ALiBi subtracts slope_h·|q + Skv − Sq − kv| from the scores of head h,
// with slope_h = 2^(−8(h+1)/heads) (ALiBi's slopes for a power of two of
// heads), the distance from the bottom-right diagonal as causal
// attention aligns it.
func ALiBi(heads, sq, skv int) AttnMods {
	off := skv - sq
	return AttnMods{
		Name: "alibi",
		Score: func(s, _, h, q, kv tl.Expr) tl.Expr {
			slope := tl.Exp2(h.Add(1).Mul(-8.0 / float64(heads)))
			return s.Sub(slope.Mul(tl.Abs(q.Add(off).Sub(kv))))
		},
		RefScore: func(s float64, _, h, q, kv int) float64 {
			return s - math.Exp2(-8*float64(h+1)/float64(heads))*math.Abs(float64(q+off-kv))
		},
		ScoreGrad:    func(_, _, _, _, _ tl.Expr) tl.Expr { return tl.Float(1) },
		RefScoreGrad: func(float64, int, int, int, int) float64 { return 1 },
	}
}

// SlidingWindow lets query q see keys from left before its diagonal to
// right after it (FlashAttention's window_size; the diagonal at q + Skv −
// Sq, as causal attention aligns it); a negative bound is none.
func SlidingWindow(left, right, sq, skv int) AttnMods {
	off := skv - sq
	return AttnMods{
		Name: fmt.Sprintf("window=%d,%d", left, right),
		Mask: func(_, _, q, kv tl.Expr) tl.Expr {
			d := q.Add(off).Sub(kv) // keys before the diagonal count positive
			switch {
			case left < 0 && right < 0:
				return d.Eq(d)
			case left < 0:
				return d.Ge(-right)
			case right < 0:
				return d.Le(left)
			}
			return d.Le(left).And(d.Ge(-right))
		},
		// Query q sees [q + off - left, q + off + right].
		Keys: func(_, q0, q1 tl.Expr) (lo, hi tl.Expr) {
			lo, hi = tl.Int(0), tl.Int(skv)
			if left >= 0 {
				lo = q0.Add(off - left)
			}
			if right >= 0 {
				hi = q1.Add(off + right)
			}
			return lo, hi
		},
		// Key k is seen by [k - off - right, k - off + left].
		Queries: func(_, k0, k1 tl.Expr) (lo, hi tl.Expr) {
			lo, hi = tl.Int(0), tl.Int(sq)
			if right >= 0 {
				lo = k0.Sub(off + right)
			}
			if left >= 0 {
				hi = k1.Add(left - off)
			}
			return lo, hi
		},
		Whole: func(_, q0, q1, k0, k1 tl.Expr) tl.Expr {
			in := q0.Eq(q0)
			if left >= 0 { // the last query's first key is at or before k0
				in = in.And(k0.Ge(q1.Sub(1).Add(off - left)))
			}
			if right >= 0 { // the first query's last key is at or after k1 - 1
				in = in.And(k1.Sub(1).Le(q0.Add(off + right)))
			}
			return in
		},
		RefMask: func(_, _, q, kv int) bool {
			d := q + off - kv
			return (left < 0 || d <= left) && (right < 0 || d >= -right)
		},
	}
}

// PrefixLM is a prefix language model's mask: every query sees the first
// prefix keys, and after them the keys up to its diagonal (at q + Skv −
// Sq, as causal attention aligns it).
func PrefixLM(prefix, sq, skv int) AttnMods {
	off := skv - sq
	return AttnMods{
		Name:  fmt.Sprintf("prefix=%d", prefix),
		Mask:  func(_, _, q, kv tl.Expr) tl.Expr { return kv.Lt(prefix).Or(kv.Le(q.Add(off))) },
		Keys:  func(_, q0, q1 tl.Expr) (lo, hi tl.Expr) { return tl.Int(0), tl.Max(q1.Add(off), prefix) },
		Whole: func(_, q0, q1, k0, k1 tl.Expr) tl.Expr { return k1.Le(prefix).Or(k1.Sub(1).Le(q0.Add(off))) },
		Queries: func(_, k0, k1 tl.Expr) (lo, hi tl.Expr) {
			return tl.Select(k0.Lt(prefix), tl.Int(0), k0.Sub(off)), tl.Int(sq)
		},
		RefMask: func(_, _, q, kv int) bool {
			return kv < prefix || kv <= q+off
		},
	}
}

// Then applies m's score modifier after a's and hides what either mask
// hides.
func (a AttnMods) Then(m AttnMods) AttnMods {
	out := AttnMods{Name: joinNames(a.Name, m.Name)}
	if a.Declare != nil || m.Declare != nil {
		out.Declare = func(f *tl.Func) AttnMods { return a.declared(f).Then(*m.declared(f)) }
		out.Inputs = func() []*tensor.Tensor {
			var ts []*tensor.Tensor
			for _, x := range []AttnMods{a, m} {
				if x.Inputs != nil {
					ts = append(ts, x.Inputs()...)
				}
			}
			return ts
		}
	}
	out.Score = thenScore(a.Score, m.Score)
	out.RefScore = thenRefScore(a.RefScore, m.RefScore)
	out.ScoreGrad = thenGrad(a, m)
	out.RefScoreGrad = thenRefGrad(a, m)
	switch {
	case a.Mask == nil:
		out.Mask = m.Mask
	case m.Mask == nil:
		out.Mask = a.Mask
	default:
		out.Mask = func(b, h, q, kv tl.Expr) tl.Expr { return a.Mask(b, h, q, kv).And(m.Mask(b, h, q, kv)) }
	}
	// The keys both masks may show a query tile, and the queries they may
	// show a key tile: a mask without a range shows no more than the
	// other's.
	out.Keys = bothRanges(a.Keys, m.Keys)
	out.Queries = bothRanges(a.Queries, m.Queries)
	switch { // wholly visible to both: unknown where a mask cannot say
	case a.Mask != nil && a.Whole == nil || m.Mask != nil && m.Whole == nil:
	case a.Whole == nil:
		out.Whole = m.Whole
	case m.Whole == nil:
		out.Whole = a.Whole
	default:
		out.Whole = func(b, q0, q1, k0, k1 tl.Expr) tl.Expr {
			return a.Whole(b, q0, q1, k0, k1).And(m.Whole(b, q0, q1, k0, k1))
		}
	}
	switch {
	case a.RefMask == nil:
		out.RefMask = m.RefMask
	case m.RefMask == nil:
		out.RefMask = a.RefMask
	default:
		out.RefMask = func(b, h, q, kv int) bool { return a.RefMask(b, h, q, kv) && m.RefMask(b, h, q, kv) }
	}
	return out
}

// bothRanges is the intersection of two index ranges, either of which may
// be unknown (nil).
func bothRanges(f, g func(b, x0, x1 tl.Expr) (lo, hi tl.Expr)) func(b, x0, x1 tl.Expr) (lo, hi tl.Expr) {
	if f == nil || g == nil {
		if f == nil {
			return g
		}
		return f
	}
	return func(b, x0, x1 tl.Expr) (lo, hi tl.Expr) {
		flo, fhi := f(b, x0, x1)
		glo, ghi := g(b, x0, x1)
		return tl.Max(flo, glo), tl.Min(fhi, ghi)
	}
}

func thenScore(f, g func(s, b, h, q, kv tl.Expr) tl.Expr) func(s, b, h, q, kv tl.Expr) tl.Expr {
	if f == nil || g == nil {
		if f == nil {
			return g
		}
		return f
	}
	return func(s, b, h, q, kv tl.Expr) tl.Expr { return g(f(s, b, h, q, kv), b, h, q, kv) }
}

func thenRefScore(f, g func(s float64, b, h, q, kv int) float64) func(s float64, b, h, q, kv int) float64 {
	if f == nil || g == nil {
		if f == nil {
			return g
		}
		return f
	}
	return func(s float64, b, h, q, kv int) float64 { return g(f(s, b, h, q, kv), b, h, q, kv) }
}

// thenGrad is the chain rule for m's score modifier after a's: m'(a(s))·a'(s);
// nil where either has a score modifier without its derivative, or neither
// has one.
func thenGrad(a, m AttnMods) func(s, b, h, q, kv tl.Expr) tl.Expr {
	if a.Score != nil && a.ScoreGrad == nil || m.Score != nil && m.ScoreGrad == nil || a.Score == nil && m.Score == nil {
		return nil
	}
	return func(s, b, h, q, kv tl.Expr) tl.Expr {
		g, x := tl.Float(1), s
		if a.Score != nil {
			g, x = a.ScoreGrad(s, b, h, q, kv), a.Score(s, b, h, q, kv)
		}
		if m.Score != nil {
			g = g.Mul(m.ScoreGrad(x, b, h, q, kv))
		}
		return g
	}
}

func thenRefGrad(a, m AttnMods) func(s float64, b, h, q, kv int) float64 {
	if a.RefScore != nil && a.RefScoreGrad == nil || m.RefScore != nil && m.RefScoreGrad == nil || a.RefScore == nil && m.RefScore == nil {
		return nil
	}
	return func(s float64, b, h, q, kv int) float64 {
		g, x := 1.0, s
		if a.RefScore != nil {
			g, x = a.RefScoreGrad(s, b, h, q, kv), a.RefScore(s, b, h, q, kv)
		}
		if m.RefScore != nil {
			g *= m.RefScoreGrad(x, b, h, q, kv)
		}
		return g
	}
}

func joinNames(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

// modScores applies s.Mods to the scores S of key tile j (query rows from
// q0): S holds Q·Kᵀ unscaled, as OnlineSoftmax takes it, so a score
// modifier sees S times the softmax scale and its result goes back
// divided by it.
func modScores(k *tl.Block, S *tl.Tensor, s AttnShape, c AttnConfig, b, h, q0, j tl.Expr) {
	m := s.Mods
	if m == nil || m.Score == nil && m.Mask == nil {
		return
	}
	sc := s.SoftmaxScale()
	scoreAndMask := func(mask bool) {
		k.Parallel(func(i, jj tl.Expr) {
			q, kv := q0.Add(i), j.Mul(c.N).Add(jj)
			v := S.At(i, jj)
			if m.Score != nil {
				v = m.Score(v.Mul(sc), b, h, q, kv).Mul(1 / sc)
			}
			if mask {
				v = tl.Select(m.Mask(b, h, q, kv), v, tl.NegInf())
			}
			S.Set(v, i, jj)
		}, c.M, c.N)
	}
	switch {
	case m.Mask == nil:
		scoreAndMask(false)
	case m.Whole == nil:
		scoreAndMask(true)
	default: // the mask only on tiles it does not show whole
		whole := m.Whole(b, q0, q0.Add(c.M), j.Mul(c.N), j.Add(1).Mul(c.N))
		if m.Score != nil {
			k.If(whole, func() { scoreAndMask(false) }).Else(func() { scoreAndMask(true) })
		} else {
			k.If(whole.Not(), func() { scoreAndMask(true) })
		}
	}
}

// modKeyTiles is the key tiles [lo, hi) that query tile bx must visit
// under s.Mods's key range, within [0, nKV); ok is false when the mods
// give no range.
func modKeyTiles(s AttnShape, c AttnConfig, b, bx, nKV tl.Expr) (lo, hi tl.Expr, ok bool) {
	if s.Mods == nil || s.Mods.Keys == nil {
		return tl.Expr{}, tl.Expr{}, false
	}
	q0 := bx.Mul(c.M)
	klo, khi := s.Mods.Keys(b, q0, q0.Add(c.M))
	lo = tl.Max(klo, 0).Div(c.N)
	hi = tl.Max(lo, tl.Min(nKV, tl.CeilDiv(tl.Max(khi, 0), c.N)))
	return lo, hi, true
}

// visiblePairs counts the (query, key) pairs of every batch entry that
// causality and the modifiers' mask leave visible, at head 0 (the masks
// here do not vary by head): what FLOPs counts for a masked problem, as
// FlexAttention counts a block mask's work, and not half the square.
func (s AttnShape) visiblePairs() float64 {
	off, n := s.Skv-s.Sq, 0
	for b := range s.B {
		for q := range s.Sq {
			last := s.Skv
			if s.Causal {
				last = min(s.Skv, max(0, q+off+1))
			}
			for kv := range last {
				if s.Mods.RefMask(b, 0, q, kv) {
					n++
				}
			}
		}
	}
	return float64(n)
}
