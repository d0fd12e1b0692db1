package kernels

import (
	"fmt"

	"github.com/tilego/tilego/tl"
)

// CombineConfig is how MLACombine tiles its work.
type CombineConfig struct {
	Rows    int // heads per block; divides h_q
	Threads int
}

// DefaultCombineConfig: 8 heads per block (fewer when h_q is not a
// multiple of 8), 128 threads.
func DefaultCombineConfig(s MLAShape) CombineConfig {
	r := 8
	for s.Hq%r != 0 {
		r /= 2
	}
	return CombineConfig{Rows: r, Threads: 128}
}

// CheckCombine reports whether MLACombine can be built for s and c.
func CheckCombine(s MLAShape, c CombineConfig) error {
	if c.Rows < 1 || s.Hq%c.Rows != 0 || c.Threads < 1 {
		return fmt.Errorf("mla combine: %d rows per block must divide h_q = %d (config %+v)", c.Rows, s.Hq, c)
	}
	return nil
}

// MLACombine merges the partial results of MLADecodeSplit: the first
// num_splits[b] splits of request b (the rest are not written); a request
// of one split it leaves alone, as MLADecodeSplit wrote its O and LSE. For each
// query row, with lse_i the base-2 LSE of split i and O_i its output:
//
//	m   = max_i lse_i
//	w_i = 2^(lse_i - m)                  (0 for an empty split: lse_i = -inf)
//	O   = Σ_i w_i·O_i / Σ_i w_i
//	LSE = (m + log2 Σ_i w_i) · ln 2      (natural log; -inf when every split is empty)
//
// An empty split adds nothing whatever its O_i holds, so a row no split
// saw gets zeros and -inf, never NaN. The sums are taken in one pass with
// a running maximum, the splits' loads in flight a few at a time
// (mergeSplits).
func MLACombine(s MLAShape, c CombineConfig) *tl.Func {
	s = s.Full()
	f := tl.NewFunc("mla_combine")
	B, nSplit := f.Sym("batch"), f.Sym("splits")
	NS := f.In("num_splits", tl.I32, B)
	OP := f.In("O_partial", s.partialDType(), B, nSplit, s.Sq, s.Hq, s.Dv)
	LP := f.In("LSE_partial", tl.F32, B, nSplit, s.Sq, s.Hq)
	O := f.Out("O", s.DType, B, s.Sq, s.Hq, s.Dv)
	LSE := f.Out("LSE", tl.F32, B, s.Sq, s.Hq)
	R := c.Rows
	f.Kernel(tl.Grid(s.Hq/R, s.Sq, B), c.Threads, func(k *tl.Block) {
		hx, t, b := k.Idx()
		n := k.Var(tl.I32, NS.At(b)).Named("n").Val()
		k.If(n.Ne(1), func() { // a request of one split: the split kernel wrote its O and LSE
			acc, lse := mergeSplits(k, n, R, s.Dv, s.partialDType(),
				func(i tl.Expr) tl.Region { return LP.Sub(b, i, t, tl.Tile(hx, R)) },
				func(i tl.Expr) tl.Region { return OP.Sub(b, i, t, tl.Tile(hx, R), tl.All) })
			k.Copy(acc, O.Sub(b, t, tl.Tile(hx, R), tl.All))
			k.Copy(lse, LSE.Sub(b, t, tl.Tile(hx, R)))
		})
	})
	return f
}
