package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// GemmEpilogue is work fused into the GEMM on its f32 accumulator, after
// the multiply and before C is stored, in this order: scale by ScaleA and
// ScaleB (f32 inputs after C: one value for the whole tensor, or one a row
// of A, one a column of B, as FP8 GEMMs dequantize), add Bias[N] (an input
// of A's type), apply Act, add Residual[M, N] (an input of C's type), the
// inputs in that order. One Parallel loop over the accumulator; the bias
// tile is staged in shared memory (a masked copy at N's edge) and read 16
// bytes at a time.
type GemmEpilogue struct {
	ScaleA   string // "", "tensor" (ScaleA[1]) or "row" (ScaleA[M])
	ScaleB   string // "", "tensor" (ScaleB[1]) or "col" (ScaleB[N])
	Bias     bool
	Act      string // "", "relu", "gelu" (the tanh form) or "silu"
	Residual bool
}

// Name is how a shape's fields print it: "bias+gelu+residual".
func (e *GemmEpilogue) Name() string {
	var parts []string
	if e.ScaleA != "" {
		parts = append(parts, "scale_a_"+e.ScaleA)
	}
	if e.ScaleB != "" {
		parts = append(parts, "scale_b_"+e.ScaleB)
	}
	if e.Bias {
		parts = append(parts, "bias")
	}
	if e.Act != "" {
		parts = append(parts, e.Act)
	}
	if e.Residual {
		parts = append(parts, "residual")
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "+"
		}
		out += p
	}
	return out
}

// gemmEpi is an epilogue with its tensors declared in the kernel.
type gemmEpi struct {
	e                              *GemmEpilogue
	s                              GemmShape
	scaleA, scaleB, bias, residual *tl.Tensor
}

// declare declares e's inputs in f, after C.
func (e *GemmEpilogue) declare(f *tl.Func, s GemmShape) gemmEpi {
	g := gemmEpi{e: e, s: s}
	if e == nil {
		return g
	}
	if e.Act != "" && e.Act != "relu" && e.Act != "gelu" && e.Act != "silu" {
		f.Refuse("epilogue activation %q: want relu, gelu or silu", e.Act)
	}
	if e.ScaleA != "" {
		g.scaleA = f.In("ScaleA", tl.F32, e.scaleLen(e.ScaleA, s.M))
	}
	if e.ScaleB != "" {
		g.scaleB = f.In("ScaleB", tl.F32, e.scaleLen(e.ScaleB, s.N))
	}
	if e.Bias {
		g.bias = f.In("Bias", s.DType, s.N)
	}
	if e.Residual {
		g.residual = f.In("Residual", s.OutDType, s.M, s.N)
	}
	return g
}

// apply runs the epilogue on block (by, bx)'s accumulator tile.
func (g gemmEpi) apply(k *tl.Block, acc *tl.Tensor, c GemmConfig, by, bx tl.Expr) {
	e := g.e
	if e == nil || *e == (GemmEpilogue{}) {
		return
	}
	var bias *tl.Tensor
	if e.Bias {
		bias = k.Shared(g.s.DType, c.BN).Named("bias_tile")
		k.Copy(g.bias.Sub(tl.Tile(bx, c.BN)), bias)
	}
	row0, col0 := by.Mul(c.BM), bx.Mul(c.BN)
	// The tile's rows and columns past the edge read the last.
	row := func(i tl.Expr) tl.Expr { return tl.Min(row0.Add(i), g.s.M-1) }
	col := func(j tl.Expr) tl.Expr { return tl.Min(col0.Add(j), g.s.N-1) }
	k.Parallel(func(i, j tl.Expr) {
		x := acc.At(i, j)
		for _, sc := range []struct {
			kind string
			t    *tl.Tensor
			at   tl.Expr
		}{{e.ScaleA, g.scaleA, row(i)}, {e.ScaleB, g.scaleB, col(j)}} {
			switch sc.kind {
			case "tensor":
				x = x.Mul(sc.t.At(0))
			case "row", "col":
				x = x.Mul(sc.t.At(sc.at))
			}
		}
		if e.Bias {
			x = x.Add(bias.At(j))
		}
		x = k.Let(x)
		switch e.Act {
		case "relu":
			x = tl.Max(x, 0)
		case "gelu":
			inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(math.Sqrt(2 / math.Pi))
			x = x.Mul(0.5).Mul(tl.Tanh(inner).Add(1))
		case "silu":
			x = x.Mul(tl.Sigmoid(x))
		}
		if e.Residual {
			x = x.Add(g.residual.At(row(i), col(j)))
		}
		acc.Set(x, i, j)
	}, c.BM, c.BN)
}

// scaleLen is a scale's length: 1 for the whole tensor, else n.
func (e *GemmEpilogue) scaleLen(kind string, n int) int {
	if kind == "tensor" {
		return 1
	}
	return n
}

// epiTensors are the epilogue's inputs, nil where it has none.
type epiTensors struct{ scaleA, scaleB, bias, residual *tensor.Tensor }

// tensors picks the epilogue's inputs from the list after C.
func (e *GemmEpilogue) tensors(extra []*tensor.Tensor) epiTensors {
	var t epiTensors
	if e == nil {
		return t
	}
	for _, x := range []struct {
		on  bool
		dst **tensor.Tensor
	}{{e.ScaleA != "", &t.scaleA}, {e.ScaleB != "", &t.scaleB}, {e.Bias, &t.bias}, {e.Residual, &t.residual}} {
		if x.on {
			*x.dst, extra = extra[0], extra[1:]
		}
	}
	return t
}

// ref is the epilogue in float64 on element (i, j) of A·B, given its
// inputs.
func (e *GemmEpilogue) ref(v float64, i, j int, t epiTensors) float64 {
	if e == nil {
		return v
	}
	if e.ScaleA != "" {
		v *= t.scaleA.Data[min(i, len(t.scaleA.Data)-1)]
	}
	if e.ScaleB != "" {
		v *= t.scaleB.Data[min(j, len(t.scaleB.Data)-1)]
	}
	bias, residual := t.bias, t.residual
	if e.Bias {
		v += bias.At(j)
	}
	switch e.Act {
	case "relu":
		v = math.Max(v, 0)
	case "gelu":
		v = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	case "silu":
		v = v / (1 + math.Exp(-v))
	}
	if e.Residual {
		v += residual.At(i, j)
	}
	return v
}

// inputs are the epilogue's tensors (after A, B and C), seeded.
func (e *GemmEpilogue) inputs(s GemmShape, seed uint64) []*tensor.Tensor {
	var ts []*tensor.Tensor
	if e == nil {
		return nil
	}
	if e.ScaleA != "" {
		ts = append(ts, tensor.New(tl.F32, e.scaleLen(e.ScaleA, s.M)).Rand(seed+5, 1))
	}
	if e.ScaleB != "" {
		ts = append(ts, tensor.New(tl.F32, e.scaleLen(e.ScaleB, s.N)).Rand(seed+6, 1))
	}
	if e.Bias {
		ts = append(ts, tensor.New(s.DType, s.N).Rand(seed+7, 1))
	}
	if e.Residual {
		ts = append(ts, tensor.New(s.OutDType, s.M, s.N).Rand(seed+8, 1))
	}
	return ts
}

// parseGemmEpilogue reads --bias, --act and --residual; nil when none.
func parseGemmEpilogue(v values) (*GemmEpilogue, error) {
	var e GemmEpilogue
	var err error
	if e.Bias, err = v.bool("bias"); err != nil {
		return nil, err
	}
	if e.Residual, err = v.bool("residual"); err != nil {
		return nil, err
	}
	switch e.Act = v.str("act"); e.Act {
	case "", "relu", "gelu", "silu":
	default:
		return nil, fmt.Errorf("--act %q: want relu, gelu or silu", e.Act)
	}
	if e.ScaleA = v.str("scale-a"); e.ScaleA != "" && e.ScaleA != "tensor" && e.ScaleA != "row" {
		return nil, fmt.Errorf("--scale-a %q: want tensor or row", e.ScaleA)
	}
	if e.ScaleB = v.str("scale-b"); e.ScaleB != "" && e.ScaleB != "tensor" && e.ScaleB != "col" {
		return nil, fmt.Errorf("--scale-b %q: want tensor or col", e.ScaleB)
	}
	if e == (GemmEpilogue{}) {
		return nil, nil
	}
	return &e, nil
}
