package interp_test

import (
	"math"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// The math functions compute in float64 and round to f32, on each element.
func TestMathFunctions(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(tl.Expr) tl.Expr
		ref  func(float64) float64
	}{
		{"tanh", func(x tl.Expr) tl.Expr { return tl.Tanh(x) }, math.Tanh},
		{"erf", func(x tl.Expr) tl.Expr { return tl.Erf(x) }, math.Erf},
		{"sigmoid", func(x tl.Expr) tl.Expr { return tl.Sigmoid(x) }, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"log1p", func(x tl.Expr) tl.Expr { return tl.Log1p(tl.Abs(x)) }, func(v float64) float64 { return math.Log1p(math.Abs(v)) }},
		{"expm1", func(x tl.Expr) tl.Expr { return tl.Expm1(x) }, math.Expm1},
		{"sin", func(x tl.Expr) tl.Expr { return tl.Sin(x) }, math.Sin},
		{"cos", func(x tl.Expr) tl.Expr { return tl.Cos(x) }, math.Cos},
		{"pow", func(x tl.Expr) tl.Expr { return tl.Pow(tl.Abs(x), 2.5) }, func(v float64) float64 { return math.Pow(math.Abs(v), 2.5) }},
		{"pow_odd", func(x tl.Expr) tl.Expr { return tl.Pow(x, 3) }, func(v float64) float64 { return math.Pow(v, 3) }},
		{"pow_of_ints", func(x tl.Expr) tl.Expr { return tl.Pow(2, tl.Int(-3)).Mul(x) }, func(v float64) float64 { return v / 8 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc(tc.name)
			X, Y := f.In("X", tl.F32, 64), f.Out("Y", tl.F32, 64)
			f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Copy(X, x)
				k.Parallel(func(i tl.Expr) { x.Set(tc.fn(x.At(i)), i) }, 64)
				k.Copy(x, Y)
			})
			fn, err := f.Build()
			if err != nil {
				t.Fatal(err)
			}
			xs := tensor.New(tl.F32, 64)
			for i := range xs.Data {
				xs.Data[i] = float64(float32((float64(i) - 32) / 7.3))
			}
			ys := tensor.New(tl.F32, 64)
			if err := interp.Run(fn, []*tensor.Tensor{xs, ys}); err != nil {
				t.Fatal(err)
			}
			for i, x := range xs.Data {
				if want := float64(float32(tc.ref(x))); ys.Data[i] != want {
					t.Errorf("%s(%g) = %g, want %g", tc.name, x, ys.Data[i], want)
				}
			}
		})
	}
}
