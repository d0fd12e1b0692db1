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
	// WS asks for warp specialization: a producer warpgroup loads K and V
	// (Hopper, by TMA) while the Threads compute.
	WS bool
	// PingPong (with WS and 256 threads) has the two consumer warpgroups
	// take turns at the tensor cores, so one's softmax runs under the
	// other's GEMMs (tl's PingPong).
	PingPong bool
	// Overlap defers each tile's P·V to the next iteration, after that
	// tile's Q·Kᵀ (tl's Defer), so the softmax runs under it on the tensor
	// cores (FlashAttention-3's intra-warpgroup overlap). Its K/V ring takes
	// one buffer more than the stages.
	Overlap bool
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
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		if s.Causal { // the longest rows first, so the last wave is short
			bx = tl.CeilDiv(s.Sq, c.M).Sub(1).Sub(bx)
		}
		r := attnLoop(k, Q, K, V, s, c, b, h, bx, nil)
		finalRows(k, r, O, LSE, s, c, b, h, bx)
	})
	return f
}
