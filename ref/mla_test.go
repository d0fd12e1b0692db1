package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// pagedCase is a small paged cache: requests of the given lengths, their
// blocks scattered over a pool with spare blocks, in shuffled order.
type pagedCase struct {
	q, cache, table, lens *tensor.Tensor
}

func newPaged(lens []int, sq, hq, d, page int, seed uint64) pagedCase {
	r := rand.New(rand.NewPCG(seed, 1))
	maxBlocks, total := 1, 0
	for _, l := range lens {
		n := (l + page - 1) / page
		maxBlocks = max(maxBlocks, n)
		total += n
	}
	nb := total + 3 // spare blocks no request owns
	ids := r.Perm(nb)
	c := pagedCase{
		q:     tensor.New(ir.F32, len(lens), sq, hq, d).Rand(seed, 1),
		cache: tensor.New(ir.F32, nb, page, d).Rand(seed+1, 1),
		table: tensor.New(ir.I32, len(lens), maxBlocks).Fill(-1),
		lens:  tensor.New(ir.I32, len(lens)),
	}
	next := 0
	for b, l := range lens {
		c.lens.Set(float64(l), b)
		for j := range (l + page - 1) / page {
			c.table.Set(float64(ids[next]), b, j)
			next++
		}
	}
	return c
}

// gather copies request b's keys into contiguous [1, 1, L, D] and
// [1, 1, L, dv] tensors and its queries into [1, hq, sq, D] (BHSD), the
// layout Attn reads.
func (c pagedCase) gather(b, dv int) (q, k, v *tensor.Tensor) {
	sq, hq, d, page := c.q.Shape[1], c.q.Shape[2], c.q.Shape[3], c.cache.Shape[1]
	l := int(c.lens.At(b))
	q = tensor.New(ir.F32, 1, hq, sq, d)
	k = tensor.New(ir.F32, 1, 1, l, d)
	v = tensor.New(ir.F32, 1, 1, l, dv)
	for t := range sq {
		for h := range hq {
			for x := range d {
				q.Set(c.q.At(b, t, h, x), 0, h, t, x)
			}
		}
	}
	for j := range l {
		blk := int(c.table.At(b, j/page))
		for x := range d {
			k.Set(c.cache.At(blk, j%page, x), 0, 0, j, x)
			if x < dv {
				v.Set(c.cache.At(blk, j%page, x), 0, 0, j, x)
			}
		}
	}
	return q, k, v
}

// The paged reference agrees with the contiguous causal attention
// reference on each request gathered through its block table.
func TestMLAMatchesAttention(t *testing.T) {
	const sq, hq, d, dv, page = 2, 3, 24, 16, 8
	lens := []int{1, 7, 8, 9, 30}
	c := newPaged(lens, sq, hq, d, page, 5)
	p := MLA{Scale: 1 / math.Sqrt(d), Dv: dv}
	a := Attn{Causal: true, Scale: p.Scale}
	for b := range lens {
		q, k, v := c.gather(b, dv)
		for tok := range sq {
			for h := range hq {
				got, gl := p.Row(c.q, c.cache, c.table, c.lens, b, tok, h)
				want, wl := a.AttentionRow(q, k, v, 0, h, tok)
				if gl != wl && math.Abs(gl-wl) > 1e-12 {
					t.Errorf("b%d t%d h%d: lse %g, want %g", b, tok, h, gl, wl)
				}
				for x := range want {
					if math.Abs(got[x]-want[x]) > 1e-12 {
						t.Fatalf("b%d t%d h%d: o[%d] = %g, want %g", b, tok, h, x, got[x], want[x])
					}
				}
			}
		}
	}
}

// With s_q = 2 and one key, the first token sees nothing (zeros, -inf)
// and the second sees the key alone: its output is that key's V row and
// its LSE is the scaled score.
func TestMLAEdgeRows(t *testing.T) {
	c := newPaged([]int{1}, 2, 1, 4, 4, 9)
	p := MLA{Scale: 0.5, Dv: 3}
	o, l := p.Row(c.q, c.cache, c.table, c.lens, 0, 0, 0)
	if !math.IsInf(l, -1) || o[0] != 0 || o[1] != 0 || o[2] != 0 {
		t.Errorf("token 0: %v %g; want zeros and -inf", o, l)
	}
	o, l = p.Row(c.q, c.cache, c.table, c.lens, 0, 1, 0)
	blk := int(c.table.At(0, 0))
	var dot float64
	for x := range 4 {
		dot += c.q.At(0, 1, 0, x) * c.cache.At(blk, 0, x)
	}
	if math.Abs(l-0.5*dot) > 1e-12 {
		t.Errorf("token 1: lse %g, want %g", l, 0.5*dot)
	}
	for x := range 3 {
		if math.Abs(o[x]-c.cache.At(blk, 0, x)) > 1e-12 {
			t.Errorf("token 1: o[%d] = %g, want %g", x, o[x], c.cache.At(blk, 0, x))
		}
	}
}

// Moving a block elsewhere in the pool and pointing the table at the new
// place changes nothing: the reference reads through the table.
func TestMLAReadsThroughTable(t *testing.T) {
	c := newPaged([]int{20}, 1, 2, 8, 4, 3)
	p := MLA{Scale: 0.3, Dv: 5}
	want, wl := p.Row(c.q, c.cache, c.table, c.lens, 0, 0, 1)
	// Move block table[0, 2] to a spare block and poison its old place.
	used := map[int]bool{}
	for j := range 5 {
		used[int(c.table.At(0, j))] = true
	}
	spare := 0
	for used[spare] {
		spare++
	}
	old := int(c.table.At(0, 2))
	for r := range 4 {
		for x := range 8 {
			c.cache.Set(c.cache.At(old, r, x), spare, r, x)
			c.cache.Set(math.NaN(), old, r, x)
		}
	}
	c.table.Set(float64(spare), 0, 2)
	got, gl := p.Row(c.q, c.cache, c.table, c.lens, 0, 0, 1)
	if gl != wl {
		t.Errorf("lse %g, want %g", gl, wl)
	}
	for x := range want {
		if got[x] != want[x] {
			t.Errorf("o[%d] = %g, want %g", x, got[x], want[x])
		}
	}
}
