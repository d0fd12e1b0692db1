package kernels

import (
	"fmt"
	"math"

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
// Every key tile is visited and every score modified: a mask does not yet
// skip the tiles it hides wholly (the causal mask does). Without mods the
// kernel is the plain one, byte for byte.
type AttnMods struct {
	Name     string
	Score    func(s, b, h, q, kv tl.Expr) tl.Expr
	Mask     func(b, h, q, kv tl.Expr) tl.Expr
	RefScore func(s float64, b, h, q, kv int) float64
	RefMask  func(b, h, q, kv int) bool
}

// SoftCap is Gemma-2's soft-capping: cap·tanh(s/cap).
func SoftCap(cap float64) AttnMods {
	return AttnMods{
		Name:     fmt.Sprintf("softcap=%g", cap),
		Score:    func(s, _, _, _, _ tl.Expr) tl.Expr { return tl.Tanh(s.Div(cap)).Mul(cap) },
		RefScore: func(s float64, _, _, _, _ int) float64 { return cap * math.Tanh(s/cap) },
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
		RefMask: func(_, _, q, kv int) bool {
			d := q + off - kv
			return (left < 0 || d <= left) && (right < 0 || d >= -right)
		},
	}
}

// Then applies m's score modifier after a's and hides what either mask
// hides.
func (a AttnMods) Then(m AttnMods) AttnMods {
	out := AttnMods{Name: joinNames(a.Name, m.Name)}
	out.Score = thenScore(a.Score, m.Score)
	out.RefScore = thenRefScore(a.RefScore, m.RefScore)
	switch {
	case a.Mask == nil:
		out.Mask = m.Mask
	case m.Mask == nil:
		out.Mask = a.Mask
	default:
		out.Mask = func(b, h, q, kv tl.Expr) tl.Expr { return a.Mask(b, h, q, kv).And(m.Mask(b, h, q, kv)) }
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
	k.Parallel(func(i, jj tl.Expr) {
		q, kv := q0.Add(i), j.Mul(c.N).Add(jj)
		v := S.At(i, jj)
		if m.Score != nil {
			v = m.Score(v.Mul(sc), b, h, q, kv).Mul(1 / sc)
		}
		if m.Mask != nil {
			v = tl.Select(m.Mask(b, h, q, kv), v, tl.NegInf())
		}
		S.Set(v, i, jj)
	}, c.M, c.N)
}
