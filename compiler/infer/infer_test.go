package infer

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
	"github.com/tilego/tilego/tl"
)

// fixedGemm is a target whose Gemm accumulators take one given layout.
type fixedGemm struct {
	threads int
	acc     func(m, n int) *layout.Fragment
}

func (t fixedGemm) Threads(*ir.Buffer) int { return t.threads }
func (t fixedGemm) Gemm(g *ir.Gemm, set func(*ir.Buffer, *layout.Fragment) error) error {
	sh := g.C.Shape()
	return set(g.C.Buf, t.acc(sh[0], sh[1]))
}

func byName(f *ir.Func, name string) *ir.Buffer {
	for _, b := range f.Kernel.Allocs {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// A Gemm's accumulator layout reaches the fragments a Parallel loop over
// it touches (a row vector takes its projection), a reduction's result
// takes the projection of its source, and a fragment nothing constrains
// is spread over the threads.
func TestLayoutsPropagate(t *testing.T) {
	f := tl.NewFunc("prop")
	A, B := f.In("A", tl.F16, 64, 32), f.In("B", tl.F16, 32, 64)
	Y, R := f.Out("Y", tl.F32, 64, 64), f.Out("R", tl.F32, 64)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		as, bs := k.Shared(tl.F16, 64, 32), k.Shared(tl.F16, 32, 64)
		c := k.Fragment(tl.F32, 64, 64).Named("c")
		scale := k.Fragment(tl.F32, 64).Named("scale")
		mx := k.Fragment(tl.F32, 64).Named("mx")
		free := k.Fragment(tl.F32, 32).Named("free")
		k.Copy(A, as)
		k.Copy(B, bs)
		k.Gemm(as, bs, c, tl.ClearAccum)
		k.Fill(scale, 2.0)
		k.Parallel(func(i, j tl.Expr) { c.Set(c.At(i, j).Mul(scale.At(i)), i, j) }, 64, 64)
		k.ReduceMax(c, mx, 1)
		k.Fill(free, 1.0)
		k.Copy(c, Y)
		k.Copy(mx, R)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	acc := layout.Spread([]int{64, 64}, 128, 2)
	layouts := map[*ir.Buffer]*layout.Fragment{}
	if err := Layouts(fn.Kernel, fixedGemm{128, func(m, n int) *layout.Fragment { return acc }}, layouts); err != nil {
		t.Fatal(err)
	}
	row := acc.Project([]int{0})
	for _, tc := range []struct {
		buf  string
		want *layout.Fragment
	}{
		{"c", acc}, {"scale", row}, {"mx", row}, {"free", layout.Spread([]int{32}, 128, 1)},
	} {
		if got := layouts[byName(fn, tc.buf)]; got == nil || !got.Equal(tc.want) {
			t.Errorf("%s: layout %v, want %v", tc.buf, got, tc.want)
		}
	}
}

// Two users that need different layouts: an error at the second, naming
// the first.
func TestLayoutsConflict(t *testing.T) {
	f := tl.NewFunc("conflict")
	A, B := f.In("A", tl.F16, 64, 32), f.In("B", tl.F16, 32, 64)
	Y := f.Out("Y", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		as, bs := k.Shared(tl.F16, 64, 32), k.Shared(tl.F16, 32, 64)
		c := k.Fragment(tl.F32, 64, 64).Named("c")
		d := k.Fragment(tl.F32, 64, 64).Named("d")
		k.Copy(A, as)
		k.Copy(B, bs)
		k.Gemm(as, bs, c, tl.ClearAccum)
		k.Gemm(as, bs, d, tl.ClearAccum)
		k.Parallel(func(i, j tl.Expr) { c.Set(d.At(j, i), i, j) }, 64, 64) // transposed: no projection carries it
		k.Copy(c, d)
		k.Copy(d, Y)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	target := fixedGemm{128, func(m, n2 int) *layout.Fragment {
		n++
		if n == 1 {
			return layout.Spread([]int{m, n2}, 128, 1)
		}
		return layout.Spread([]int{m, n2}, 128, 2)
	}}
	err = Layouts(fn.Kernel, target, map[*ir.Buffer]*layout.Fragment{})
	if err == nil || !strings.Contains(err.Error(), "copy it through a shared tile") || !strings.Contains(err.Error(), "fragment d") {
		t.Errorf("want a conflict on d naming the gemm, got %v", err)
	}
}
