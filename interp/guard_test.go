package interp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// forever is a program whose While never ends, in a plain or a
// cooperative kernel.
func forever(t *testing.T, coop bool) *ir.Func {
	f := tl.NewFunc("forever")
	out := f.Out("out", tl.F32, 4)
	f.Kernel(tl.Grid(4), 32, func(k *tl.Block) {
		if coop {
			k.Cooperative()
		}
		bx, _, _ := k.Idx()
		v := k.Var(tl.I32, 0)
		k.While(v.Val().Ge(0), func() { v.Assign(v.Val().Mul(1)) })
		k.Parallel(func(i tl.Expr) { out.Set(1, bx.Add(i)) }, 1)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// TestRunTimeGuard checks that a loop that never ends fails the run, by
// the time guard or by a cancelled context, naming the loop.
func TestRunTimeGuard(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		coop bool
		opts Options
		want string
	}{
		{"timeout", false, Options{Timeout: 50 * time.Millisecond}, "stopped after 50ms"},
		{"timeout, cooperative", true, Options{Timeout: 50 * time.Millisecond}, "stopped after 50ms"},
		{"cancelled context", false, Options{Context: cancelled}, "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn := forever(t, tc.coop)
			done := make(chan error, 1)
			go func() { done <- RunWith(fn, []*tensor.Tensor{tensor.New(ir.F32, 4)}, tc.opts) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "guard_test.go") {
					t.Errorf("got %v; want an error at the loop's line with %q", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the run did not stop")
			}
		})
	}
}

// TestRunRecoversPanic feeds the interpreter programs the verifier would
// refuse (made so by editing a verified one) whose ops panic while compiled
// or run, and checks each panic comes back as a *PanicError naming the op.
func TestRunRecoversPanic(t *testing.T) {
	build := func(coop bool) *ir.Func {
		f := tl.NewFunc("broken")
		out := f.Out("out", tl.F32, 8)
		f.Kernel(tl.Grid(2), 32, func(k *tl.Block) {
			if coop {
				k.Cooperative()
			}
			x, y := k.Shared(tl.F32, 8), k.Fragment(tl.F32, 8)
			k.Fill(x, 1)
			k.Copy(x, y)
			k.ReduceSum(y, k.Fragment(tl.F32, 1), 0)
			bx, _, _ := k.Idx()
			k.If(bx.Eq(0), func() { k.Copy(y, out) })
		})
		fn, err := f.Build()
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	cases := []struct {
		name   string
		coop   bool
		break_ func(fn *ir.Func)
		op     string
	}{
		{"while compiled", false, func(fn *ir.Func) { fn.Kernel.Body[2].(*ir.Reduce).Dim = 5 }, "compile"},
		{"while running", false, func(fn *ir.Func) { fn.Kernel.Body[1].(*ir.Copy).Dst.Extent[0] = 9 }, "copy"},
		{"in a cooperative kernel", true, func(fn *ir.Func) { fn.Kernel.Body[1].(*ir.Copy).Dst.Extent[0] = 9 }, "copy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn := build(tc.coop)
			tc.break_(fn)
			err := RunWith(fn, []*tensor.Tensor{tensor.New(ir.F32, 8)}, Options{Timeout: 20 * time.Second})
			var pe *PanicError
			if !errors.As(err, &pe) || pe.Op != tc.op {
				t.Fatalf("got %v; want a recovered panic in %s", err, tc.op)
			}
			if tc.op != "compile" && !strings.Contains(err.Error(), "guard_test.go") {
				t.Errorf("error does not name the op's line: %v", err)
			}
		})
	}
}
