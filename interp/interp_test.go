package interp

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

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
		k.If(bx.Eq(0), func() { k.Copy(s, Y) })         // one block writes Y: no race
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

// coopSum: a cooperative kernel of n blocks. Blocks 1..n-1 write bx+1 to
// part[bx] and add to count (by Signal, or Ticket with ticket); block 0
// waits for count to reach n-1+extra and sums the parts into total. With
// fail, block 5 reads out of bounds before it adds.
func coopSum(n, extra int, ticket, fail bool) *tl.Func {
	f := tl.NewFunc("coop_sum")
	part := f.Out("part", tl.F32, n)
	total := f.Out("total", tl.F32, 1)
	count := f.Scratch("count", tl.I32, 1)
	f.Kernel(tl.Grid(n), 128, func(k *tl.Block) {
		k.Cooperative()
		bx, _, _ := k.Idx()
		k.If(bx.Eq(0), func() {
			k.WaitCount(count.Sub(0), n-1+extra)
			count.Set(0, 0)
			acc := k.Shared(tl.F32, 1).Named("acc")
			k.Parallel(func(i tl.Expr) { acc.Set(0, i) }, 1)
			k.SerialRange(1, n, func(j tl.Expr) {
				k.Parallel(func(i tl.Expr) { acc.Set(acc.At(i).Add(part.At(j)), i) }, 1)
			})
			k.Parallel(func(i tl.Expr) { total.Set(acc.At(i), i) }, 1)
		}).Else(func() {
			k.Parallel(func(i tl.Expr) { part.Set(bx.Add(1), bx) }, 1)
			if fail {
				k.If(bx.Eq(5), func() {
					k.Parallel(func(i tl.Expr) { part.Set(part.At(bx.Mul(n)), i) }, 1)
				})
			}
			if ticket {
				k.Ticket(count.Sub(0), k.Shared(tl.I32, 1).Named("tk"))
			} else {
				k.Signal(count.Sub(0))
			}
		})
	})
	return f
}

// runWithin runs fn on args and fails the test if it takes over 20 s: a
// wait the interpreter cannot end must fail, not hang.
func runWithin(t *testing.T, fn *ir.Func, args []*tensor.Tensor) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Run(fn, args) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end in 20 s")
		return nil
	}
}

// In a cooperative kernel block 0 waits for the count the grid's other
// blocks add (a grid larger than the host's cores, so that it waits while
// they queue for one); a count none can reach, or a block that fails,
// ends the run with an error instead of a hang.
func TestCooperativeWaitCount(t *testing.T) {
	n := max(16, runtime.NumCPU()+3)
	cases := []struct {
		name   string
		extra  int
		ticket bool
		fail   bool
		want   string // the error; "" for the sum
	}{
		{name: "signal"},
		{name: "ticket", ticket: true},
		{name: "one more than added", extra: 1, want: "no block still running adds to the counter"},
		{name: "a block fails", fail: true, want: "out of bounds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fn, err := coopSum(n, c.extra, c.ticket, c.fail).Build()
			if err != nil {
				t.Fatal(err)
			}
			for range 3 { // the schedule differs from run to run
				part, total, count := tensor.New(ir.F32, n), tensor.New(ir.F32, 1).Fill(-1), tensor.New(ir.I32, 1)
				err := runWithin(t, fn, []*tensor.Tensor{part, total, count})
				if c.want != "" {
					if err == nil || !strings.Contains(err.Error(), c.want) {
						t.Fatalf("got %v, want an error containing %q", err, c.want)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := float64(n*(n+1)/2 - 1); total.At(0) != want || count.At(0) != 0 {
					t.Fatalf("total %g, counter %g; want %g and 0", total.At(0), count.At(0), want)
				}
			}
		})
	}
}

// A grid barrier: every block signals, then waits for all n, then reads
// its neighbour's part. Every block waits at once, the last ready as soon
// as it adds, which must not be taken for a deadlock.
func TestCooperativeBarrier(t *testing.T) {
	n := max(16, runtime.NumCPU()+3)
	f := tl.NewFunc("coop_barrier")
	part := f.Out("part", tl.F32, n)
	next := f.Out("next", tl.F32, n)
	count := f.Scratch("count", tl.I32, 1)
	f.Kernel(tl.Grid(n), 128, func(k *tl.Block) {
		k.Cooperative()
		bx, _, _ := k.Idx()
		k.Parallel(func(i tl.Expr) { part.Set(bx.Mul(10), bx) }, 1)
		k.Signal(count.Sub(0))
		k.WaitCount(count.Sub(0), n)
		k.Parallel(func(i tl.Expr) { next.Set(part.At(bx.Add(1).Mod(n)), bx) }, 1)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	nxt := tensor.New(ir.F32, n)
	if err := runWithin(t, fn, []*tensor.Tensor{tensor.New(ir.F32, n), nxt, tensor.New(ir.I32, 1)}); err != nil {
		t.Fatal(err)
	}
	for b := range n {
		if got, want := nxt.At(b), float64((b+1)%n*10); got != want {
			t.Errorf("next[%d] = %g, want %g", b, got, want)
		}
	}
}

// Outside a cooperative kernel a wait finds the count an earlier kernel
// added whole, or fails at once: nothing of this grid could add to it.
func TestWaitCountNotCooperative(t *testing.T) {
	f := tl.NewFunc("wait")
	count := f.In("count", tl.I32, 1)
	out := f.Out("out", tl.F32, 4)
	f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		k.WaitCount(count.Sub(0), 3)
		k.Parallel(func(i tl.Expr) { out.Set(1, bx.Add(i)) }, 1) // each block its own element
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		have float64
		want string
	}{{3, ""}, {2, "it would wait forever"}} {
		cnt := tensor.New(ir.I32, 1)
		cnt.Set(c.have, 0)
		err := runWithin(t, fn, []*tensor.Tensor{cnt, tensor.New(ir.F32, 4)})
		if (c.want == "" && err != nil) || (c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want))) {
			t.Errorf("count %g: got %v, want %q", c.have, err, c.want)
		}
	}
}
