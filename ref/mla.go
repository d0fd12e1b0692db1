package ref

import (
	"math"

	"github.com/tilego/tilego/tensor"
)

// MLA is DeepSeek's multi-head latent attention at decode time over a
// paged KV cache: every query head attends to one shared KV head whose
// keys are whole cache rows (the 512 latent + 64 rope columns) and whose
// values are the first Dv columns of the same rows.
//
// The tensors are:
//
//	q      [batch, s_q, h_q, D]          the query tokens of each request
//	cache  [num_blocks, page, D]         the pool of cache blocks
//	table  [batch, max_blocks] (int)     block ids of each request, in order
//	lens   [batch] (int)                 each request's KV length
//
// Key j of request b is row j%page of block table[b, j/page]. The s_q
// query tokens are the last s_q positions of the request and causal
// among themselves, bottom-right aligned: token t sees keys j <= L-s_q+t.
type MLA struct {
	Scale float64 // applied to Q·Kᵀ
	Dv    int     // V is the first Dv columns of each cache row
}

// Row returns the output (length Dv) and the natural-log log-sum-exp of
// query token t, head h of request b. A row that sees no key gets zeros
// and -inf.
func (p MLA) Row(q, cache, table, lens *tensor.Tensor, b, t, h int) ([]float64, float64) {
	sq, d, page := q.Shape[1], q.Shape[3], cache.Shape[1]
	last := int(lens.At(b)) - sq + t
	out := make([]float64, p.Dv)
	if last < 0 {
		return out, math.Inf(-1)
	}
	row := func(j int) (blk, r int) { return int(table.At(b, j/page)), j % page }
	s := make([]float64, last+1)
	qr := Vec(q, b, t, h)
	for j := range s {
		blk, r := row(j)
		kr := Vec(cache, blk, r)
		var dot float64
		for x := range d {
			dot += qr[x] * kr[x]
		}
		s[j] = dot * p.Scale
	}
	lse := Softmax(s)
	for j, w := range s {
		blk, r := row(j)
		vr := Vec(cache, blk, r)
		for x := range p.Dv {
			out[x] += w * vr[x]
		}
	}
	return out, lse
}
