package testprog

import (
	"github.com/tilego/tilego/examples"
	"github.com/tilego/tilego/tl"
)

// Examples are package examples' kernels at sizes off their tiles, with
// the tolerance of their outputs' type: the GPU tests run each against
// the interpreter.
var Examples = map[string]struct {
	Prog func() *tl.Func
	Tol  float64
}{
	"rmsnorm":        {func() *tl.Func { return examples.RMSNorm(37, 96, tl.BF16, 4, 128, 1e-6) }, 1e-2},
	"layernorm":      {func() *tl.Func { return examples.LayerNorm(29, 160, tl.F16, 4, 128, 1e-5) }, 2e-3},
	"softmax":        {func() *tl.Func { return examples.Softmax(45, 300, tl.F32, 4, 128, 128) }, 1e-5},
	"gemm_bias_gelu": {func() *tl.Func { return examples.GemmBiasGELU(100, 72, 48, tl.BF16, 64, 64, 32, 2, 128) }, 1e-2},
	"gemm_fp8":       {func() *tl.Func { return examples.GemmFP8(100, 72, 160, tl.F8E4M3, 64, 64, 64, 2, 128) }, 1e-2},
}
