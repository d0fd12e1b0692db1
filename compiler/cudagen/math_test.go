package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/tl"
)

// The language's math functions lower to the device libraries' tl::
// functions on every target, and both libraries define each of them.
func TestMathLowering(t *testing.T) {
	f := tl.NewFunc("math")
	X, Y := f.In("X", tl.F32, 64), f.Out("Y", tl.F32, 64)
	f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
		x := k.Fragment(tl.F32, 64)
		k.Copy(X, x)
		k.Parallel(func(i tl.Expr) {
			v := x.At(i)
			x.Set(tl.Tanh(v).Add(tl.Erf(v)).Add(tl.Sigmoid(v)).Add(tl.Log1p(tl.Abs(v))).Add(tl.Expm1(v)).Add(tl.Sin(v)).Add(tl.Cos(v)), i)
		}, 64)
		k.Copy(x, Y)
	})
	names := []string{"tl::tanh_(", "tl::erf_(", "tl::sigmoid_(", "tl::log1p_(", "tl::expm1_(", "tl::sin_(", "tl::cos_("}
	for _, arch := range []string{"sm_80", "sm_90a", "gfx942"} {
		p := compileFunc(t, f, arch)
		_, lib := Header(arch)
		for _, n := range names {
			if !strings.Contains(p.Source, n) {
				t.Errorf("%s: no %s in\n%s", arch, n, p.Source)
			}
			if def := "float " + strings.TrimPrefix(n, "tl::"); !strings.Contains(lib, def) {
				t.Errorf("%s: the device library does not define %s", arch, def)
			}
		}
	}
}
