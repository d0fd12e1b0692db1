package kernels

import (
	"fmt"

	"github.com/tilego/tilego/tl"
)

// CombineConfig is how MLACombine tiles its work.
type CombineConfig struct {
	Rows    int // heads per block; divides h_q
	Threads int
	// Early (> 0) starts the combine while the split kernel still runs
	// (MLAConfig.Early): a request's blocks wait until the split kernel
	// has counted Early·num_splits pieces of it (one a split and M-block)
	// in piece_count[b, 0], and the last of them zeroes the counters.
	Early int
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
	if c.Early < 0 {
		return fmt.Errorf("mla combine: Early = %d pieces a split; want 0 (off) or more", c.Early)
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
	var count *tl.Tensor
	if c.Early > 0 {
		count = f.Scratch("piece_count", tl.I32, B, f.Sym("count_cols"))
	}
	O := f.Out("O", s.DType, B, s.Sq, s.Hq, s.Dv)
	LSE := f.Out("LSE", tl.F32, B, s.Sq, s.Hq)
	R := c.Rows
	f.Kernel(tl.Grid(s.Hq/R, s.Sq, B), c.Threads, func(k *tl.Block) {
		hx, t, b := k.Idx()
		n := k.Var(tl.I32, NS.At(b)).Named("n").Val()
		if count != nil {
			k.StartEarly()
		}
		k.If(n.Ne(1), func() { // a request of one split: the split kernel wrote its O and LSE
			if count != nil {
				k.WaitCount(count.Sub(b, 0), n.Mul(c.Early))
			}
			acc, lse := mergeSplits(k, n, R, s.Dv, s.partialDType(),
				func(i tl.Expr) tl.Region { return LP.Sub(b, i, t, tl.Tile(hx, R)) },
				func(i tl.Expr) tl.Region { return OP.Sub(b, i, t, tl.Tile(hx, R), tl.All) })
			k.Copy(acc, O.Sub(b, t, tl.Tile(hx, R), tl.All))
			k.Copy(lse, LSE.Sub(b, t, tl.Tile(hx, R)))
			if count != nil { // the request's last block leaves its counters zeroed for the next launch
				tk := k.Shared(tl.I32, 1).Named("ticket")
				k.Ticket(count.Sub(b, 1), tk)
				k.If(tk.At(0).Eq(s.Hq/R*s.Sq-1), func() {
					count.Set(0, b, 0)
					count.Set(0, b, 1)
				})
			}
		})
	})
	return f
}
