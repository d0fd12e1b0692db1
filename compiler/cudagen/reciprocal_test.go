package cudagen_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// A float divided by a constant becomes a multiply by the constant's
// reciprocal rounded to f32; a zero, an integer quotient and a divisor
// whose reciprocal is no normal float keep the division. Emulated on
// gfx942, the result matches the interpreter's exact quotients.
func TestDivideByConstant(t *testing.T) {
	const n = 256
	f := tl.NewFunc("divide")
	X := f.In("X", tl.F32, n)
	N := f.In("N", tl.I32, n)
	Y := f.Out("Y", tl.F32, 5, n)
	f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
		for row, div := range []func(j tl.Expr) tl.Expr{
			func(j tl.Expr) tl.Expr { return X.At(j).Div(30) },              // by 1/30
			func(j tl.Expr) tl.Expr { return X.At(j).Div(tl.Float(-0.25)) }, // by -4
			// A zero divisor stays a division (its infinities, chosen away here, are
			// the compare's to miss).
			func(j tl.Expr) tl.Expr { return tl.Select(X.At(j).Gt(1e30), X.At(j).Div(tl.Float(0)), X.At(j)) },
			func(j tl.Expr) tl.Expr { return X.At(j).Div(tl.Float(1e38)) },     // 1e-38 is subnormal
			func(j tl.Expr) tl.Expr { return tl.Cast(N.At(j).Div(7), tl.F32) }, // an integer quotient
		} {
			k.Parallel(func(j tl.Expr) { Y.Set(div(j), row, j) }, n)
		}
	})
	r := rand.New(rand.NewPCG(1, 2))
	x, ns := tensor.New(tl.F32, n), tensor.New(tl.I32, n)
	for i := range n {
		x.Data[i], ns.Data[i] = r.NormFloat64()*100, float64(r.IntN(1000)-500)
	}
	src := emulateAgainstInterp(t, f, []*tensor.Tensor{x, ns, tensor.New(tl.F32, 5, n)})
	for _, want := range []string{"* 0.0333333351f)", "* -4.0f)", "/ 0.0f)", "/ 1e+38f)", "/ 7)"} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in the source:\n%s", want, src)
		}
	}
	if strings.Contains(src, "/ 30") {
		t.Errorf("the division by 30 stayed:\n%s", src)
	}
}
