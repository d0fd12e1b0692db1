package interp

import (
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

func TestRowScaleSymbolicAndAtomic(t *testing.T) {
	fn, err := testprog.RowScale().Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, M := range []int{32, 100, 7} {
		x := tensor.New(ir.BF16, M, 64).Rand(uint64(M), 1)
		y := tensor.New(ir.F32, M, 64).Fill(math.NaN())
		a := tensor.New(ir.F32, 1)
		if err := Run(fn, []*tensor.Tensor{x, y, a}); err != nil {
			t.Fatal(err)
		}
		var want float64
		for i := range M {
			rowMax := 0.0
			for j := range 64 {
				if got := y.At(i, j); got != 2*x.At(i, j) {
					t.Fatalf("M=%d: Y[%d,%d] = %g, want %g", M, i, j, got, 2*x.At(i, j))
				}
				rowMax = max(rowMax, math.Abs(2*x.At(i, j)))
			}
			want += rowMax
		}
		// Rows past M read as zero, so they add nothing.
		if got := a.At(0); math.Abs(got-want) > 1e-4*want {
			t.Fatalf("M=%d: A = %g, want %g", M, got, want)
		}
	}
}

func TestBindErrors(t *testing.T) {
	fn, err := testprog.RowScale().Build()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []*tensor.Tensor
		want string
	}{
		{[]*tensor.Tensor{tensor.New(ir.BF16, 8, 64)}, "takes 3 tensors"},
		{[]*tensor.Tensor{tensor.New(ir.BF16, 8, 64), tensor.New(ir.F32, 9, 64), tensor.New(ir.F32, 1)}, "size M is 8"},
		{[]*tensor.Tensor{tensor.New(ir.F16, 8, 64), tensor.New(ir.F32, 8, 64), tensor.New(ir.F32, 1)}, "wants bf16"},
		{[]*tensor.Tensor{tensor.New(ir.BF16, 8, 32), tensor.New(ir.F32, 8, 64), tensor.New(ir.F32, 1)}, "dim 1 must be 64"},
		{[]*tensor.Tensor{tensor.NewStrided(ir.BF16, []int{8, 64}, []int{1, 8}), tensor.New(ir.F32, 8, 64), tensor.New(ir.F32, 1)}, "strides"},
	}
	for _, c := range cases {
		err := Run(fn, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
	// Bind itself (the GPU backends bind through it) counts the tensors too.
	if _, err := Bind(fn, cases[0].args); err == nil || !strings.Contains(err.Error(), "1 tensors for 3 parameters") {
		t.Errorf("Bind with 1 tensor: %v", err)
	}
}

// A While loop whose condition reads a variable the body assigns, and an
// out-of-bounds element read that the interpreter reports.
func TestWhileAndBounds(t *testing.T) {
	f := tl.NewFunc("while")
	Out := f.Out("Out", tl.I32, 1)
	f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
		n := k.Var(tl.I32, 1)
		k.While(n.Val().Lt(100), func() { n.Assign(n.Val().Mul(3)) })
		v := k.Local(tl.I32, 1)
		v.Set(n.Val(), 0)
		k.Copy(v, Out)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(ir.I32, 1)
	if err := Run(fn, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if out.At(0) != 243 {
		t.Fatalf("while: got %g, want 243", out.At(0))
	}

	g := tl.NewFunc("oob")
	X := g.In("X", tl.F32, 4)
	Y := g.Out("Y", tl.F32, 4)
	g.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
		l := k.Local(tl.F32, 4)
		k.Serial(4, func(i tl.Expr) { l.Set(X.At(i.Add(1)), i) })
		k.Copy(l, Y)
	})
	gf, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	err = Run(gf, []*tensor.Tensor{tensor.New(ir.F32, 4), tensor.New(ir.F32, 4)})
	if err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Fatalf("got %v, want an out-of-bounds error", err)
	}
}

// A region whose start lies outside its tensor is a program error, even
// where a partial tile at the edge would be masked.
func TestRegionStartOutside(t *testing.T) {
	f := tl.NewFunc("start_outside")
	X := f.In("X", tl.F32, 8, 8)
	Y := f.Out("Y", tl.F32, 8, 8)
	f.Kernel(tl.Grid(2), 32, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		s := k.Shared(tl.F32, 8, 8)
		k.Copy(X.Sub(tl.Tile(bx.Mul(2), 8), tl.All), s) // block 1 starts at row 16
		k.Copy(s, Y)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	err = Run(fn, []*tensor.Tensor{tensor.New(ir.F32, 8, 8), tensor.New(ir.F32, 8, 8)})
	if err == nil || !strings.Contains(err.Error(), "starts at 16 in dim 0") {
		t.Fatalf("got %v, want a region-start error", err)
	}
}

// A Spread loop deals its values out to the grid's blocks: every value
// runs once, block b's being b, b + blocks, ... (linear index over a 2-D
// grid here).
func TestSpread(t *testing.T) {
	f := tl.NewFunc("spread")
	Runs := f.Out("Runs", tl.I32, 20)
	Who := f.Out("Who", tl.I32, 20)
	f.Kernel(tl.Grid(3, 2), 32, func(k *tl.Block) {
		x, y, _ := k.Idx()
		k.Spread(20, func(v tl.Expr) {
			Runs.Set(Runs.At(v).Add(1), v)
			Who.Set(y.Mul(3).Add(x), v)
		})
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	runs, who := tensor.New(ir.I32, 20), tensor.New(ir.I32, 20)
	if err := Run(fn, []*tensor.Tensor{runs, who}); err != nil {
		t.Fatal(err)
	}
	for v := range 20 {
		if runs.At(v) != 1 || who.At(v) != float64(v%6) {
			t.Errorf("value %d ran %g times, in block %g; want once, in block %d", v, runs.At(v), who.At(v), v%6)
		}
	}
}
