package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// FlashAttention's split-KV path (the tail split of kernels/split_rings.go):
// FlashAttentionSplit cuts the KV range of every block in splits pieces,
// each piece a block of its own that writes a partial output and a partial
// LSE, and AttnCombine merges the pieces into O and LSE. TailSplits
// decides the count; 1 means the single-program FlashAttention.
//
// Partial buffers (f32, contiguous, split-major):
//
//	O_partial   [splits, B, H, Sq, Dv]  the piece's normalized output
//	LSE_partial [splits, B, H, Sq]      its LSE in base 2: log2 Σ 2^(s·scale·log2 e)
//
// A piece that sees no key of a row (an empty piece, or a causal row with
// no keys at all) writes O = 0 and LSE = -inf for it.

// FlashAttentionSplit is FlashAttention with the KV loop cut in splits
// pieces: the grid is (ceil(Sq/M), H, B·splits), z = b·splits + k, and
// piece k of a block covers its KV tiles [k·per, min((k+1)·per, nKV)),
// per = ceil(nKV/splits), nKV the block's tile count (causal included).
func FlashAttentionSplit(s AttnShape, c AttnConfig, splits int) *tl.Func {
	f := tl.NewFunc("flash_attention_split")
	if s.Mods != nil && s.Mods.Declare != nil {
		f.Refuse("the split kernels do not take modifiers that read tensors (%s) yet", s.Mods.Name)
	}
	Q, K, V := s.qkv(f)
	OP := f.Out("O_partial", tl.F32, splits, s.B, s.H, s.Sq, s.Dv)
	LP := f.Out("LSE_partial", tl.F32, splits, s.B, s.H, s.Sq)
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B*splits), c.Threads, func(k *tl.Block) {
		bx, h, z := k.Idx()
		b, sp := z.Div(splits), z.Mod(splits)
		if s.Causal { // the longest rows first, so the last wave is short
			bx = tl.CeilDiv(s.Sq, c.M).Sub(1).Sub(bx)
		}
		r := attnLoop(k, Q, K, V, s, c, b, h, bx, nil, func(nKV tl.Expr) (lo, hi tl.Expr) {
			// This piece's tiles; lo = hi (no iteration) for an empty piece.
			per := tl.CeilDiv(nKV, splits)
			return tl.Min(sp.Mul(per), nKV), tl.Min(sp.Add(1).Mul(per), nKV)
		})
		partialRows(k, r, c, s.Dv, OP.Sub(sp, b, h, tl.Tile(bx, c.M), tl.All), LP.Sub(sp, b, h, tl.Tile(bx, c.M)))
	})
	return f
}

// AttnCombineConfig is how AttnCombine tiles its work.
type AttnCombineConfig struct {
	Rows    int // query rows per block
	Threads int
}

// DefaultAttnCombineConfig: 16 query rows per block over 128 threads.
func DefaultAttnCombineConfig() AttnCombineConfig { return AttnCombineConfig{Rows: 16, Threads: 128} }

// AttnCombine merges FlashAttentionSplit's pieces into O (the shape's dtype
// and layout) and LSE (natural log), per query row as MLACombine does:
//
//	m   = max_k lse_k
//	w_k = 2^(lse_k - m)                  (0 for an empty piece: lse_k = -inf)
//	O   = Σ_k w_k·O_k / Σ_k w_k
//	LSE = (m + log2 Σ_k w_k) · ln 2      (-inf, and O = 0, when every piece is empty)
//
// The grid is (ceil(Sq/Rows), H, B). MLACombine's body is not shared: its
// rows are heads of one token and it reads one LSE at a time, while here
// the rows are a tile of Sq that may run past the end, so the LSEs come
// through a copy (which reads zeros past the end; those rows are never
// stored) rather than one load per row.
func AttnCombine(s AttnShape, c AttnCombineConfig, splits int) *tl.Func {
	f := tl.NewFunc("flash_attention_combine")
	OP := f.In("O_partial", tl.F32, splits, s.B, s.H, s.Sq, s.Dv)
	LP := f.In("LSE_partial", tl.F32, splits, s.B, s.H, s.Sq)
	O := s.rows(f.Out, "O", s.H, s.Sq, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	R := c.Rows
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, R), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		acc, lse, os := combinePieces(k, s, R, splits,
			func(i tl.Expr) tl.Region { return LP.Sub(i, b, h, tl.Tile(bx, R)) },
			func(i tl.Expr) tl.Region { return OP.Sub(i, b, h, tl.Tile(bx, R), tl.All) })
		k.Copy(acc, os) // through shared memory, as FlashAttention stores O
		k.Copy(os, O.Sub(b, h, tl.Tile(bx, R), tl.All))
		k.Copy(lse, LSE.Sub(b, h, tl.Tile(bx, R)))
	})
	return f
}

// FlashAttentionSplits is the split count for s at c on sms SMs: what
// TailSplits picks for the grid's last wave (1: no split). A grid of one
// wave cuts every block (FlashAttentionSplit), a longer one only its last
// wave's (FlashAttentionTail); TailSplitSteps picks the programs.
//
// A causal grid of one wave ends with its longest rows, of Skv keys; a
// longer one runs its longest rows first, so its last wave may hold the
// shortest, and the model takes those: the first query tile's keys.
func FlashAttentionSplits(s AttnShape, c AttnConfig, sms int) int {
	if c.M < 1 {
		return 1
	}
	g := SplitGrid{Blocks: s.B * s.H * ((s.Sq + c.M - 1) / c.M), Keys: s.Skv, Dim: (s.Dqk + s.Dv) / 2, SMs: sms, PerSM: attnPerSM(s), Causal: s.Causal}
	if s.Causal && g.Blocks > sms*g.PerSM {
		g.Keys = min(s.Skv, max(0, s.Skv-s.Sq+c.M))
	}
	return TailSplits(g)
}

// attnPerSM is how many of s's 128-row blocks an SM runs at once, as the
// tail split plans its waves: two at head dim 64 and below, where the
// picks are 128-thread blocks (the benchmark's and the tuner's on an
// H100), else one.
func attnPerSM(s AttnShape) int {
	if (s.Dqk+s.Dv)/2 <= 64 {
		return 2
	}
	return 1
}

// TailSplitSteps are the programs of FlashAttention with splits pieces
// for the last wave on sms SMs, over the tensors TailSplitInputs makes:
// the single program for one split, the split of every block for a grid
// of one wave, else the tail split.
func TailSplitSteps(s AttnShape, c AttnConfig, sms, splits int) ([]Step, error) {
	if splits > 1 && TailSplitFits(s, c, sms) {
		return FlashAttentionTailSteps(s, c, sms, splits)
	}
	return FlashAttentionSplitSteps(s, c, splits)
}

// TailSplitInputs are the tensors of TailSplitSteps(s, c, sms, splits).
func TailSplitInputs(s AttnShape, c AttnConfig, sms, splits int, seed uint64) []*tensor.Tensor {
	if splits > 1 && TailSplitFits(s, c, sms) {
		return FlashAttentionTailInputs(s, c, sms, splits, seed)
	}
	return FlashAttentionSplitInputs(s, splits, seed)
}

// FlashAttentionSplitSteps lists the split path's two programs over the
// tensors of FlashAttentionSplitInputs (Q, K, V, O, LSE, O_partial,
// LSE_partial): FlashAttentionSplit reads Q, K, V and writes the partials,
// AttnCombine reads them and writes O and LSE. One split is the
// single-program FlashAttention over Q, K, V, O, LSE.
func FlashAttentionSplitSteps(s AttnShape, c AttnConfig, splits int) ([]Step, error) {
	if splits < 1 {
		return nil, fmt.Errorf("flash-attention: %d splits; want at least 1", splits)
	}
	if splits == 1 {
		return []Step{{FlashAttention(s, c), []int{0, 1, 2, 3, 4}}}, nil
	}
	return []Step{
		{FlashAttentionSplit(s, c, splits), []int{0, 1, 2, 5, 6}},
		{AttnCombine(s, DefaultAttnCombineConfig(), splits), []int{5, 6, 3, 4}},
	}, nil
}

// FlashAttentionSplitInputs is AttentionInputs followed by NaN-poisoned
// O_partial and LSE_partial for splits pieces (none for one split).
func FlashAttentionSplitInputs(s AttnShape, splits int, seed uint64) []*tensor.Tensor {
	args := AttentionInputs(s, seed)
	if splits > 1 {
		args = append(args,
			tensor.New(ir.F32, splits, s.B, s.H, s.Sq, s.Dv).Fill(math.NaN()),
			tensor.New(ir.F32, splits, s.B, s.H, s.Sq).Fill(math.NaN()))
	}
	return args
}

// RunFlashAttentionSplit builds the split path's programs against lim and
// runs them in order with run (interp.Run, or a backend's Run) on args
// from FlashAttentionSplitInputs; O and LSE end up in args[3] and args[4].
func RunFlashAttentionSplit(s AttnShape, c AttnConfig, splits int, args []*tensor.Tensor, lim ir.Limits, run func(*ir.Func, []*tensor.Tensor) error) error {
	steps, err := FlashAttentionSplitSteps(s, c, splits)
	if err != nil {
		return err
	}
	return RunSteps(steps, args, lim, run)
}

// combinePieces merges the splits pieces of R query rows, whose LSE (base
// 2) and f32 output rows piece i's lseOf(i) and oOf(i) name, as AttnCombine
// describes. It returns the merged rows, their natural-log LSE and a shared
// tile of the output type for staging the store.
func combinePieces(k *tl.Block, s AttnShape, R, splits int, lseOf, oOf func(i tl.Expr) tl.Region) (acc, lse, os *tl.Tensor) {
	acc, lse = mergeSplits(k, splits, R, s.Dv, tl.F32, lseOf, oOf)
	return acc, lse, k.Shared(s.DType, R, s.Dv).Named("os")
}
