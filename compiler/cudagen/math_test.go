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

// An Unrolled loop's #pragma unroll names the loop: it comes right before
// the for, after the barrier the loop needs for what came before it.
func TestUnrollPragmaBeforeLoop(t *testing.T) {
	f := tl.NewFunc("unrolled")
	X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64)
	f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
		s := k.Shared(tl.F32, 64, 64)
		acc := k.Fragment(tl.F32, 64)
		k.Copy(X, s) // the loop reads it: a wait and a barrier before the loop
		k.Clear(acc)
		k.Unrolled(4, func(j tl.Expr) {
			k.Parallel(func(i tl.Expr) { acc.Set(acc.At(i).Add(s.At(i, j)), i) }, 64)
		})
		k.Copy(acc, Y)
	})
	for _, arch := range []string{"sm_80", "gfx942"} {
		src := compileFunc(t, f, arch).Source
		lines := strings.Split(src, "\n")
		found := false
		for i, l := range lines {
			if strings.TrimSpace(l) == "#pragma unroll" && strings.Contains(lines[i+1], "for (int k0") {
				found = true
			}
			if strings.TrimSpace(l) == "#pragma unroll" && !strings.Contains(lines[i+1], "for (") {
				t.Errorf("%s: a #pragma unroll before %q", arch, strings.TrimSpace(lines[i+1]))
			}
		}
		if !found {
			t.Errorf("%s: no #pragma unroll right before the unrolled loop:\n%s", arch, src)
		}
	}
}
