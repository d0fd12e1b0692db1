package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/tl"
)

// A stored integer value wraps where its arithmetic may overflow an i32
// (C leaves that undefined; the language wraps, as the interpreter does)
// and stays plain C where the loops' bounds keep it in range.
func TestStoredIntegersWrap(t *testing.T) {
	for _, c := range []struct {
		name  string
		value func(i, j, bx tl.Expr, n *tl.Tensor) tl.Expr
		wrap  bool
	}{
		{"small", func(i, j, bx tl.Expr, _ *tl.Tensor) tl.Expr { return i.Mul(64).Add(j).Add(bx) }, false},
		{"overflowing product", func(i, j, bx tl.Expr, _ *tl.Tensor) tl.Expr { return i.Mul(536870912).Add(j) }, true},
		{"loaded value", func(i, j, _ tl.Expr, n *tl.Tensor) tl.Expr { return n.At(0).Sub(1) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := tl.NewFunc("ints")
			N := f.In("N", tl.I32, 1)
			Y := f.Out("Y", tl.I32, 64, 64)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				bx, _, _ := k.Idx()
				fr := k.Fragment(tl.I32, 16, 64)
				k.Parallel(func(i, j tl.Expr) { fr.Set(c.value(i, j, bx, N), i, j) }, 16, 64)
				k.Copy(fr, Y.Sub(tl.Tile(bx, 16), tl.All))
			})
			fn, err := f.Build()
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(fn, Options{Arch: "sm_80"})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(p.Source, "(unsigned)"); got != c.wrap {
				t.Errorf("wrapping arithmetic %v, want %v:\n%s", got, c.wrap, p.Source)
			}
		})
	}
}
