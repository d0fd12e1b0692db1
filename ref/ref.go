// Package ref computes float64 references for the library's kernels and
// measures how far a result is from them.
package ref

import (
	"fmt"
	"math"
	"slices"

	"github.com/tilego/tilego/tensor"
)

// Gemm returns C = op(A)·op(B) in float64, row-major M×N.
func Gemm(a, b *tensor.Tensor, transA, transB bool) (m, n int, c []float64) {
	m, k := a.Shape[0], a.Shape[1]
	if transA {
		m, k = k, m
	}
	n = b.Shape[1]
	if transB {
		n = b.Shape[0]
	}
	at := func(i, kk int) float64 {
		if transA {
			return a.At(kk, i)
		}
		return a.At(i, kk)
	}
	bt := func(kk, j int) float64 {
		if transB {
			return b.At(j, kk)
		}
		return b.At(kk, j)
	}
	c = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for kk := range k {
				s += at(i, kk) * bt(kk, j)
			}
			c[i*n+j] = s
		}
	}
	return m, n, c
}

// Attn describes an attention problem over logical [B, H, S, D] tensors.
type Attn struct {
	Causal bool    // bottom-right aligned: query i sees keys j <= i + Skv - Sq
	Scale  float64 // applied to Q·Kᵀ
	// Score, when set, rewrites query i's scaled score s for key j of head
	// h in batch b before the softmax; Mask, when set, hides key j from
	// query i where it is false (on top of Causal).
	Score func(s float64, b, h, i, j int) float64
	Mask  func(b, h, i, j int) bool
	// ScoreGrad is Score's derivative at s (the backward's chain rule); nil
	// is 1.
	ScoreGrad func(s float64, b, h, i, j int) float64
}

// visible reports whether query i sees key j (causal, then Mask).
func (p Attn) visible(b, h, i, j, sq, skv int) bool {
	return !(p.Causal && j > i+skv-sq) && (p.Mask == nil || p.Mask(b, h, i, j))
}

// AttentionRow returns one query row's output (length Dv) and its
// log-sum-exp (natural log). A row that sees no key gets zeros and -inf.
// Query heads map to KV heads in groups of H/Hkv (GQA).
func (p Attn) AttentionRow(q, k, v *tensor.Tensor, b, h, i int) ([]float64, float64) {
	hkv := h / (q.Shape[1] / k.Shape[1])
	out := make([]float64, v.Shape[3])
	s, lse := p.probs(q, k, b, h, i)
	for j, w := range s {
		if w == 0 { // a hidden key's weight
			continue
		}
		vj := Vec(v, b, hkv, j)
		for x := range out {
			out[x] += w * vj[x]
		}
	}
	return out, lse
}

// Vec is t[idx..., :], a row along t's last dim (idx gives every other
// index): a view of its data where that dim is contiguous, else a copy.
// The references' inner loops read rows through it rather than At, whose
// index checks took 60% of their time; out-of-range indices panic as At's
// do.
func Vec(t *tensor.Tensor, idx ...int) []float64 {
	last := len(t.Shape) - 1
	n := t.Shape[last]
	if n == 0 {
		return nil
	}
	o := t.Offset(append(idx[:len(idx):len(idx)], 0)...)
	if t.Strides[last] == 1 {
		return t.Data[o : o+n : o+n]
	}
	out := make([]float64, n)
	for x := range out {
		out[x] = t.Data[o+x*t.Strides[last]]
	}
	return out
}

// probs is one query row's softmax weights over the keys it sees (none,
// and a log-sum-exp of -inf, for a row that sees no key) and their
// log-sum-exp.
func (p Attn) probs(q, k *tensor.Tensor, b, h, i int) ([]float64, float64) {
	H, Sq, D := q.Shape[1], q.Shape[2], q.Shape[3]
	hkv := h / (H / k.Shape[1])
	Skv := k.Shape[2]
	last := Skv - 1
	if p.Causal {
		last = min(last, i+Skv-Sq)
	}
	if last < 0 {
		return nil, math.Inf(-1)
	}
	s := make([]float64, last+1)
	qi := Vec(q, b, h, i)
	for j := range s {
		if p.Mask != nil && !p.Mask(b, h, i, j) { // hidden: no need of the score
			s[j] = math.Inf(-1)
			continue
		}
		kj := Vec(k, b, hkv, j)
		var d float64
		for x := range D {
			d += qi[x] * kj[x]
		}
		s[j] = d * p.Scale
		if p.Score != nil {
			s[j] = p.Score(s[j], b, h, i, j)
		}
	}
	if p.Mask != nil && !slices.ContainsFunc(s, func(x float64) bool { return !math.IsInf(x, -1) }) {
		return make([]float64, len(s)), math.Inf(-1) // every key hidden
	}
	return s, Softmax(s)
}

// Softmax turns scores into softmax weights in place and returns their
// log-sum-exp (natural log), computed stably.
func Softmax(s []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range s {
		mx = max(mx, x)
	}
	var sum float64
	for j := range s {
		s[j] = math.Exp(s[j] - mx)
		sum += s[j]
	}
	for j := range s {
		s[j] /= sum
	}
	return mx + math.Log(sum)
}

// Diff accumulates the distance between a result and its reference.
type Diff struct {
	sumSq, refSq float64
	MaxAbs       float64
	N, Bad       int // elements compared; NaN or mismatched infinities
}

// Add compares one element.
func (d *Diff) Add(got, want float64) {
	d.N++
	switch {
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		if got != want {
			d.Bad++
		}
		return
	case math.IsNaN(got) || math.IsNaN(want):
		d.Bad++
		return
	}
	e := got - want
	d.sumSq += e * e
	d.refSq += want * want
	d.MaxAbs = max(d.MaxAbs, math.Abs(e))
}

// Merge adds the comparisons counted in e (from another goroutine's share
// of the elements).
func (d *Diff) Merge(e Diff) {
	d.sumSq += e.sumSq
	d.refSq += e.refSq
	d.MaxAbs = max(d.MaxAbs, e.MaxAbs)
	d.N += e.N
	d.Bad += e.Bad
}

// Rel is ‖got − ref‖ / ‖ref‖ over the finite elements (Inf if any is bad).
func (d *Diff) Rel() float64 {
	if d.Bad > 0 {
		return math.Inf(1)
	}
	if d.refSq == 0 {
		return math.Sqrt(d.sumSq)
	}
	return math.Sqrt(d.sumSq / d.refSq)
}

func (d *Diff) String() string {
	return fmt.Sprintf("rel %.3g, max abs %.3g over %d elements (%d bad)", d.Rel(), d.MaxAbs, d.N, d.Bad)
}
