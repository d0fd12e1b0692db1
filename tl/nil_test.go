package tl_test

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/tl"
)

// Nil tensors, zero handles and nil callbacks: each call records an error
// at its own line instead of panicking (issue 50).
var nilErrCases = []errCase{
	{
		name: "nil tensor as a copy source", op: "copy", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var src *tl.Tensor
				k.Copy(mark(src), k.Shared(tl.F32, 8))
			})
		},
	},
	{
		name: "nil tensor as a gemm operand", op: "gemm", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a, c := k.Shared(tl.F16, 64, 64), k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, mark((*tl.Tensor)(nil)), c)
			})
		},
	},
	{
		name: "Sub of a nil tensor", op: "copy", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var x *tl.Tensor
				k.Copy(mark(x.Sub(0)), k.Shared(tl.F32, 8))
			})
		},
	},
	{
		name: "At of a zero Tensor", op: "fill", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Fill(k.Shared(tl.F32, 8), mark(new(tl.Tensor).At(0)))
			})
		},
	},
	{
		name: "Set on a nil tensor", op: "store", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var x *tl.Tensor
				x.Set(1, mark(0))
			})
		},
	},
	{
		name: "Assign to a nil tensor", op: "store", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var x *tl.Tensor
				x.Assign(mark(1))
			})
		},
	},
	{
		name: "Named on a nil tensor", op: "named", phrase: "nil tensor",
		build: func(f *tl.Func) {
			var x *tl.Tensor
			x.Named(mark("x"))
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "WithStrides on a nil tensor", op: "strides", phrase: "nil tensor",
		build: func(f *tl.Func) {
			var x *tl.Tensor
			x.WithStrides(mark(1))
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "Swizzled on a nil tensor", op: "swizzle", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var x *tl.Tensor
				x.Swizzled(mark(tl.SwizzleNone))
			})
		},
	},
	{
		name: "nil tensor as a scalar", op: "store", phrase: "nil tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var x *tl.Tensor
				k.Local(tl.F32, 1).Set(mark(x), 0)
			})
		},
	},
	{
		name: "ScaleRows of a nil tile", op: "scale_rows", phrase: "nil tile",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.ScaleRows(mark((*tl.Tensor)(nil)), k.Fragment(tl.F32, 64))
			})
		},
	},
	{
		name: "reduce a zero Tensor", op: "reduce_sum", phrase: "nil tile",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.ReduceSum(mark(new(tl.Tensor)), k.Fragment(tl.F32, 64), 0)
			})
		},
	},
	{
		name: "Else on a zero IfStmt", op: "else", phrase: "zero IfStmt",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var s tl.IfStmt
				s.Else(mark(func() {}))
			})
		},
	},
	{
		name: "copy on a zero Block", op: "copy", phrase: "a zero Block",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var z tl.Block
				z.Copy(mark(k.Shared(tl.F32, 8)), k.Shared(tl.F32, 8))
			})
		},
	},
	{
		name: "hint on a nil Block", op: "split_n", phrase: "a zero Block",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var z *tl.Block
				mark(z).SplitN()
			})
		},
	},
	{
		name: "nil Parallel body", op: "parallel", phrase: "does not take 1 index arguments",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var body func(tl.Expr)
				k.Parallel(body, mark(8))
			})
		},
	},
	{
		name: "nil loop body", op: "serial", phrase: "nil body",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Serial(mark(4), nil) })
		},
	},
	{
		name: "nil If body", op: "if", phrase: "nil body",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.If(mark(true), nil) })
		},
	},
	{
		name: "nil Else body", op: "else", phrase: "nil body",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.If(true, func() {}).Else(mark((func())(nil))) })
		},
	},
	{
		name: "nil While body", op: "while", phrase: "nil body",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.While(mark(false), nil) })
		},
	},
	{
		name: "nil kernel body", op: "kernel", phrase: "nil body",
		build: func(f *tl.Func) { f.Kernel(tl.Grid(1), 128, mark((func(*tl.Block))(nil))) },
	},
	{
		name: "nil gemm option", op: "gemm", phrase: "nil option",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a, b, c := k.Shared(tl.F16, 64, 64), k.Shared(tl.F16, 64, 64), k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, c, mark(tl.GemmOpt(nil)))
			})
		},
	},
	{
		name: "nil reduce option", op: "reduce_max", phrase: "nil option",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.ReduceMax(k.Fragment(tl.F32, 64, 8), k.Fragment(tl.F32, 64), 1, mark(tl.ReduceOpt(nil)))
			})
		},
	},
}

func init() { errCases = append(errCases, nilErrCases...) }

// TestNilFunc checks that a nil *tl.Func builds to an error, not a panic.
func TestNilFunc(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	var f *tl.Func
	f.In("A", tl.F32, 4)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {})
	if _, err := f.Build(); err == nil {
		t.Fatalf("Build of a nil Func succeeded")
	}
	var z tl.Func // a zero Func works as one NewFunc started
	z.Kernel(tl.Grid(1), 128, func(k *tl.Block) {})
	if _, err := z.Build(); err != nil {
		t.Errorf("Build of a zero Func: %v", err)
	}
}

// Let of a broken expression reports it at Build, as any use of it would.
func TestLetError(t *testing.T) {
	f := tl.NewFunc("let_err")
	Y := f.Out("Y", tl.F32, 64)
	f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
		y := k.Fragment(tl.F32, 64)
		k.Parallel(func(i tl.Expr) { y.Set(k.Let(tl.Expr{}), i) }, 64)
		k.Copy(y, Y)
	})
	if _, err := f.Build(); err == nil || !strings.Contains(err.Error(), "zero value") {
		t.Errorf("Build: %v; want the zero Expr reported", err)
	}
}
