package tl_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// marked holds the lines of the mark calls made by the current case, and
// markedFile the file of the last one.
var (
	marked     []int
	markedFile string
)

// mark returns v unchanged and records the source line it is called on. A
// case wraps one argument of its bad op in mark, so the line the test
// expects in the error is always the line of that op's call, wherever the
// code moves.
func mark[T any](v T) T {
	_, file, line, _ := runtime.Caller(1)
	marked = append(marked, line)
	markedFile = filepath.Base(file)
	return v
}

// kernel1 builds a one-block, 128-thread kernel around body.
func kernel1(f *tl.Func, body func(k *tl.Block)) {
	f.Kernel(tl.Grid(1), 128, body)
}

type errCase struct {
	name   string
	op     string     // the op the error names
	phrase string     // a key phrase of the message
	n      int        // how many errors Build returns (0 means 1)
	lim    *ir.Limits // limits to build against (nil: the default)
	build  func(f *tl.Func)
}

var errCases = []errCase{
	{
		name: "scale rows by a tile of other rows", op: "scale_rows", phrase: "scale a rows×cols tile by a tile of its rows",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				acc, fac := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 32)
				k.ScaleRows(mark(acc), fac)
			})
		},
	},
	{
		name: "threads not a multiple of 32", op: "kernel", phrase: "threads = 100 is not a positive multiple of 32",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1)), 100, func(k *tl.Block) {})
		},
	},
	{
		name: "threads above the target's limit", op: "kernel", phrase: "threads = 2048 exceeds the target's 1024",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1)), 2048, func(k *tl.Block) {})
		},
	},
	{
		name: "clusters of three", op: "kernel", phrase: "clusters of 3 blocks: want 0, 1 or 2",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1)), 128, func(k *tl.Block) { k.Cluster(3) })
		},
	},
	{
		name: "grid with four dims", op: "kernel", phrase: "grid has 4 dims; want 1 to 3",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1), 1, 1, 1), 128, func(k *tl.Block) {})
		},
	},
	{
		name: "copy shape mismatch", op: "copy", phrase: "shape mismatch: A is [32 64] but s0 is [64 64]",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 128, 64)
			kernel1(f, func(k *tl.Block) {
				as := k.Shared(tl.F16, 64, 64)
				k.Copy(A.Sub(tl.Tile(0, 32), tl.All), mark(as))
			})
		},
	},
	{
		name: "copy region starts outside a shared tile", op: "copy", phrase: "region of s0 starts at 64 in dim 0, outside its size 64",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F16, 128, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(s.Sub(tl.Range(64, 16), tl.All), mark(O.Sub(tl.Range(0, 16), tl.All)))
			})
		},
	},
	{
		name: "copy region runs past a shared tile", op: "copy", phrase: "region of s0 [56, 72) in dim 0 runs past its size 64",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F16, 128, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(s.Sub(tl.Range(56, 16), tl.All), mark(O.Sub(tl.Range(0, 16), tl.All)))
			})
		},
	},
	{
		name: "index outside a constant dim", op: "store", phrase: "index 70 is outside dim 0 of l0 (size 64)",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 64)
				l.Set(mark(1.0), 70)
			})
		},
	},
	{
		name: "gemm K does not chain", op: "gemm", phrase: "shapes do not chain: A gives K=32 but B gives K=64",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Shared(tl.F16, 64, 64)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm K does not chain with TransB", op: "gemm", phrase: "A gives K=64 but B gives K=32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 64)
				b := k.Shared(tl.F16, 64, 32) // TransB: N×K, so K=32
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c), tl.TransB)
			})
		},
	},
	{
		name: "gemm C shape wrong", op: "gemm", phrase: "C is [64 32] but A·B is [64 64]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Shared(tl.F16, 32, 64)
				c := k.Fragment(tl.F32, 64, 32)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm B from a fragment", op: "gemm", phrase: "B (f0) must be a shared tile, not fragment",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Fragment(tl.F16, 32, 64)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm C not f32", op: "gemm", phrase: "C (f0) must be f32 to accumulate, not f16",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Shared(tl.F16, 32, 64)
				c := k.Fragment(tl.F16, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm C not a fragment", op: "gemm", phrase: "C (s2) must be a fragment, not shared",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Shared(tl.F16, 32, 64)
				c := k.Shared(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm A and B dtypes differ", op: "gemm", phrase: "A is f16 but B is bf16; they must match",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				b := k.Shared(tl.BF16, 32, 64)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm on f32 operands", op: "gemm", phrase: "A and B must be f16, bf16 or f8, not f32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F32, 64, 32)
				b := k.Shared(tl.F32, 32, 64)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, b, mark(c))
			})
		},
	},
	{
		name: "gemm A from global memory", op: "gemm", phrase: "A (A) must be a shared tile or a fragment, not global",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 64, 32)
			kernel1(f, func(k *tl.Block) {
				b := k.Shared(tl.F16, 32, 64)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(A, b, mark(c))
			})
		},
	},
	{
		name: "fragment read outside a Parallel loop", op: "store", phrase: "fragment f0 is accessed element by element outside a Parallel loop",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				acc := k.Fragment(tl.F32, 64, 64)
				x := k.Var(tl.F32, 0)
				x.Assign(mark(acc.At(0, 0)))
			})
		},
	},
	{
		name: "shared memory over a small limit", op: "kernel", phrase: "shared memory 2048 bytes exceeds the target's 1024 per block",
		lim: &ir.Limits{MaxSharedBytes: 1024, MaxThreads: 1024},
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1)), 128, func(k *tl.Block) {
				k.Shared(tl.F16, 32, 32)
			})
		},
	},
	{
		name: "shared memory over the default 227 KiB", op: "kernel", phrase: "shared memory 262144 bytes exceeds the target's 232448 per block",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1)), 128, func(k *tl.Block) {
				k.Shared(tl.F16, 256, 256)
				k.Shared(tl.F16, 256, 256)
			})
		},
	},
	{
		name: "copy global to global", op: "copy", phrase: "A -> O: both are global; stage the tile through shared memory",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 64, 64)
			O := f.Out("O", tl.F16, 64, 64)
			kernel1(f, func(k *tl.Block) {
				k.Copy(A, mark(O))
			})
		},
	},
	{
		name: "cache hint on a copy inside the block", op: "copy", phrase: "a cache hint (evict_last) is for a copy from or to global memory",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				acc := k.Fragment(tl.F32, 64, 64)
				k.Copy(s, mark(acc), tl.EvictLast)
			})
		},
	},
	{
		name: "two cache hints", op: "copy", phrase: "2 cache hints; give at most one",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 64, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(A, mark(s), tl.EvictFirst, tl.EvictLast)
			})
		},
	},
	{
		name: "copy into an input", op: "copy", phrase: "A is an input; declare it with Out to write it",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F32, 64, 64)
			kernel1(f, func(k *tl.Block) {
				acc := k.Fragment(tl.F32, 64, 64)
				k.Copy(acc, mark(A))
			})
		},
	},
	{
		name: "store into an input", op: "store", phrase: "X is an input; declare it with Out to write it",
		build: func(f *tl.Func) {
			X := f.In("X", tl.F32, 4)
			kernel1(f, func(k *tl.Block) {
				X.Set(mark(1.0), 0)
			})
		},
	},
	{
		name: "atomic add into shared", op: "atomic_add", phrase: "destination s0 must be a global tensor",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				acc := k.Fragment(tl.F32, 64, 64)
				s := k.Shared(tl.F32, 64, 64)
				k.AtomicAdd(acc, mark(s))
			})
		},
	},
	{
		name: "ticket into a fragment", op: "ticket", phrase: "the ticket lands in one element of a shared i32 tile",
		build: func(f *tl.Func) {
			c := f.Scratch("c", tl.I32, 4)
			kernel1(f, func(k *tl.Block) {
				k.Ticket(c.Sub(0), mark(k.Fragment(tl.I32, 1)))
			})
		},
	},
	{
		name: "ticket inside a parallel loop", op: "ticket", phrase: "only element stores and if may appear inside a Parallel loop",
		build: func(f *tl.Func) {
			c := f.Scratch("c", tl.I32, 4)
			kernel1(f, func(k *tl.Block) {
				tk := k.Shared(tl.I32, 1)
				k.Parallel(func(i tl.Expr) { k.Ticket(c.Sub(i), mark(tk)) }, 4)
			})
		},
	},
	{
		name: "fill a global tensor", op: "fill", phrase: "O is global; fill a shared tile or fragment and copy it out",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64, 64)
			kernel1(f, func(k *tl.Block) {
				k.Fill(O, mark(0))
			})
		},
	},
	{
		name: "At with too few indices", op: "store", phrase: "f0 has 2 dims but is indexed with 1",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Fragment(tl.F32, 64, 64)
				r := k.Fragment(tl.F32, 64)
				k.Parallel(func(i tl.Expr) {
					r.Set(mark(s.At(i)), i)
				}, 64)
			})
		},
	},
	{
		name: "Set with too many indices", op: "store", phrase: "f0 has 1 dims but is indexed with 2",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				r := k.Fragment(tl.F32, 64)
				k.Parallel(func(i tl.Expr) {
					r.Set(mark(0), i, i)
				}, 64)
			})
		},
	},
	{
		name: "float index", op: "store", phrase: "index 0 of l0 has type f32; want an integer",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				l.Set(mark(0), 1.5)
			})
		},
	},
	{
		name: "Sub with the wrong number of specs", op: "copy", phrase: "A has 2 dims but Sub got 1 specs",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 64, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64)
				k.Copy(A.Sub(tl.All), mark(s))
			})
		},
	},
	{
		name: "whole symbolic tensor as a tile", op: "copy", phrase: "A has a symbolic shape; take a region of it with Sub",
		build: func(f *tl.Func) {
			n := f.Sym("n")
			A := f.In("A", tl.F16, n, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(A, mark(s))
			})
		},
	},
	{
		name: "zero Region", op: "copy", phrase: "empty Region; make one with Sub",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(tl.Region{}, mark(s))
			})
		},
	},
	{
		name: "tile op operand of the wrong type", op: "copy", phrase: "operand is int; want a *Tensor or a Region",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(3, mark(s))
			})
		},
	},
	{
		name: "If with a non-bool condition", op: "if", phrase: "condition has type i32; want bool (use a comparison)",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.If(mark(tl.Int(1)), func() {})
			})
		},
	},
	{
		name: "While with a float condition", op: "while", phrase: "condition has type f32; want bool",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x := k.Var(tl.F32, 1)
				k.While(mark(x.Val()), func() { x.Assign(0) })
			})
		},
	},
	{
		name: "And of integers", op: "if", phrase: "&& needs bool operands, got i32 and i32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				c := tl.Int(1).And(2)    // the error travels with the value ...
				k.If(mark(c), func() {}) // ... and is reported where it is used
			})
		},
	},
	{
		name: "arithmetic on a bool", op: "store", phrase: "+ needs numbers, got bool and i32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x := k.Var(tl.I32, 0)
				x.Assign(mark(x.Val().Lt(3).Add(1)))
			})
		},
	},
	{
		name: "Not of a number", op: "store", phrase: "not needs a bool, got i32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x := k.Var(tl.I32, 0)
				x.Assign(mark(x.Val().Not()))
			})
		},
	},
	{
		name: "unset Expr variable", op: "if", phrase: "the Expr is the zero value; was a variable of type tl.Expr never set?",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				var cond tl.Expr
				k.If(mark(cond), func() {})
			})
		},
	},
	{
		name: "float modulo", op: "fill", phrase: "% needs integers",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F32, 8)
				k.Fill(s, mark(tl.Float(1).Mod(2)))
			})
		},
	},
	{
		name: "Select with a non-bool condition", op: "store", phrase: "select needs a bool condition, got i32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x := k.Var(tl.F32, 0)
				x.Assign(mark(tl.Select(1, 2.0, 3.0)))
			})
		},
	},
	{
		name: "float stored into an integer", op: "store", phrase: "cannot store f32 into i32 l0 without an explicit cast",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.I32, 4)
				l.Set(mark(0.5), 0)
			})
		},
	},
	{
		name: "tile used as a scalar", op: "fill", phrase: "a tile cannot be used as a scalar; index it with At",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F32, 8)
				k.Fill(s, mark(s))
			})
		},
	},
	{
		name: "reduce dim out of range", op: "reduce_sum", phrase: "dim 2 is out of range for f0 with shape [64 32]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Fragment(tl.F32, 64, 32)
				r := k.Fragment(tl.F32, 64)
				k.ReduceSum(s, mark(r), 2)
			})
		},
	},
	{
		name: "reduce dst shape wrong", op: "reduce_max", phrase: "f1 has shape [32]; reducing f0 [64 32] along dim 1 gives [64]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Fragment(tl.F32, 64, 32)
				r := k.Fragment(tl.F32, 32)
				k.ReduceMax(s, mark(r), 1)
			})
		},
	},
	{
		name: "reduce a global tensor", op: "reduce_min", phrase: "A is global; reduce a fragment or shared tile",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F32, 64, 32)
			kernel1(f, func(k *tl.Block) {
				r := k.Fragment(tl.F32, 64)
				k.ReduceMin(A, mark(r), 1)
			})
		},
	},
	{
		name: "reduce nil tile", op: "reduce_absmax", phrase: "nil tile",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				r := k.Fragment(tl.F32, 64)
				k.ReduceAbsMax(nil, mark(r), 1)
			})
		},
	},
	{
		name: "tile op inside a Parallel body", op: "fill", phrase: "only element stores and if may appear inside a Parallel loop",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				acc := k.Fragment(tl.F32, 64)
				k.Parallel(func(i tl.Expr) {
					k.Fill(acc, mark(0))
				}, 64)
			})
		},
	},
	{
		name: "loop inside a Parallel body", op: "serial", phrase: "only element stores and if may appear inside a Parallel loop",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				acc := k.Fragment(tl.F32, 64)
				k.Parallel(func(i tl.Expr) {
					k.Serial(mark(2), func(j tl.Expr) { acc.Set(0, i) })
				}, 64)
			})
		},
	},
	{
		name: "Parallel body with the wrong arity", op: "parallel", phrase: "does not take 2 index arguments",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Parallel(mark(func(i tl.Expr) {}), 64, 64)
			})
		},
	},
	{
		name: "Parallel with a zero extent", op: "parallel", phrase: "extent 0 of i0 must be positive",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 1)
				k.Parallel(func(i tl.Expr) { l.Set(0, 0) }, mark(0))
			})
		},
	},
	{
		name: "second kernel", op: "kernel", phrase: "a program has one kernel; this is the second",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {})
			f.Kernel(tl.Grid(mark(1)), 128, func(k *tl.Block) {})
		},
	},
	{
		name: "store before Kernel", op: "store", phrase: "must be called inside Kernel",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 4)
			O.Set(mark(1.0), 0)
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "copy after Kernel returns", op: "copy", phrase: "must be called inside Kernel",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			var kb *tl.Block
			var acc *tl.Tensor
			kernel1(f, func(k *tl.Block) {
				kb = k
				acc = k.Fragment(tl.F32, 64)
			})
			kb.Copy(acc, mark(O))
		},
	},
	{
		name: "Pipelined with 0 stages", op: "pipelined", phrase: "stages = 0; want at least 1",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Pipelined(mark(4), 0, func(i tl.Expr) {})
			})
		},
	},
	{
		name: "Defer at kernel top level", op: "defer", phrase: "only a statement of a Pipelined loop's body may be deferred",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Defer(mark(func() { l.Set(0, 0) }))
			})
		},
	},
	{
		name: "Defer in a Serial loop", op: "defer", phrase: "only a statement of a Pipelined loop's body may be deferred",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Serial(4, func(i tl.Expr) {
					k.Defer(mark(func() { l.Set(0, i) }))
				})
			})
		},
	},
	{
		name: "Defer in an Unrolled loop", op: "defer", phrase: "only a statement of a Pipelined loop's body may be deferred",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Unrolled(4, func(i tl.Expr) {
					k.Defer(mark(func() { l.Set(0, i) }))
				})
			})
		},
	},
	{
		name: "Defer under an If in a Pipelined loop", op: "defer", phrase: "only a statement of a Pipelined loop's body may be deferred",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Pipelined(4, 2, func(i tl.Expr) {
					k.If(i.Gt(0), func() {
						k.Defer(mark(func() { l.Set(0, i) }))
					})
				})
			})
		},
	},
	{
		name: "Defer inside a Defer", op: "defer", phrase: "a deferred body may not defer again",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Pipelined(4, 2, func(i tl.Expr) {
					k.Defer(func() {
						k.Defer(mark(func() { l.Set(0, i) }))
					})
				})
			})
		},
	},
	{
		name: "Defer in a Parallel body", op: "defer", phrase: "only element stores and if may appear inside a Parallel loop",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Pipelined(4, 2, func(i tl.Expr) {
					k.Parallel(func(j tl.Expr) {
						k.Defer(mark(func() { l.Set(0, j) }))
					}, 4)
				})
			})
		},
	},
	{
		name: "bad op in a legal Defer body", op: "store", phrase: "index 70 is outside dim 0 of l0 (size 4)",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				l := k.Local(tl.F32, 4)
				k.Pipelined(4, 2, func(i tl.Expr) {
					k.Defer(func() { l.Set(mark(1.0), 70) })
				})
			})
		},
	},
	{
		name: "float loop bound", op: "serial", phrase: "loop bounds must be integers, got i32 and f32",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Serial(mark(2.5), func(i tl.Expr) {})
			})
		},
	},
	{
		name: "loop variable used after its loop", op: "copy", phrase: "variable k0 is used outside the loop or kernel that binds it",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 256, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				var last tl.Expr
				k.Serial(4, func(i tl.Expr) { last = i })
				k.Copy(A.Sub(tl.Tile(last, 64), tl.All), mark(s))
			})
		},
	},
	{
		name: "input tensor from another Func", op: "copy", phrase: "buffer X does not belong to this function",
		build: func(f *tl.Func) {
			X := tl.NewFunc("other").In("X", tl.F16, 64, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 64, 64)
				k.Copy(X, mark(s))
			})
		},
	},
	{
		name: "tile from another Func", op: "gemm", phrase: "buffer theirs does not belong to this function",
		build: func(f *tl.Func) {
			var theirs *tl.Tensor
			kernel1(tl.NewFunc("other"), func(k *tl.Block) {
				theirs = k.Shared(tl.F16, 32, 64).Named("theirs")
			})
			kernel1(f, func(k *tl.Block) {
				a := k.Shared(tl.F16, 64, 32)
				c := k.Fragment(tl.F32, 64, 64)
				k.Gemm(a, theirs, mark(c))
			})
		},
	},
	{
		name: "duplicate tile names", op: "alloc", phrase: `duplicate name "x"`,
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Shared(tl.F16, 8).Named("x")
				k.Fragment(tl.F32, mark(8)).Named("x")
			})
		},
	},
	{
		name: "tile named like a parameter", op: "alloc", phrase: `duplicate name "A"`,
		build: func(f *tl.Func) {
			f.In("A", tl.F16, 8)
			kernel1(f, func(k *tl.Block) {
				k.Shared(tl.F16, mark(8)).Named("A")
			})
		},
	},
	{
		name: "swizzle on a fragment", op: "swizzle", phrase: "f0 is fragment; only shared tiles have a swizzle",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Fragment(tl.F32, 8, 8).Swizzled(mark(ir.Swizzle128B))
			})
		},
	},
	{
		name: "float tensor dim", op: "param", phrase: "A: dim 1.5f is not an integer",
		build: func(f *tl.Func) {
			f.In("A", tl.F16, mark(1.5))
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "zero tensor dim", op: "param", phrase: "A: sizes and strides must be positive, got 0",
		build: func(f *tl.Func) {
			f.In("A", tl.F16, mark(0), 4)
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "strides for the wrong number of dims", op: "param", phrase: "A: 1 strides for 2 dims",
		build: func(f *tl.Func) {
			f.In("A", tl.F16, mark(4), 4).WithStrides(1)
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "zero-size tile", op: "alloc", phrase: "s0: dims must be positive, got [0 8]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Shared(tl.F16, mark(0), 8)
			})
		},
	},
	{
		name: "invalid element type", op: "alloc", phrase: "s0: invalid element type dtype(99)",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Shared(tl.DType(99), mark(8))
			})
		},
	},
	{
		name: "rasterize with a zero panel", op: "rasterize", phrase: "panel size 0 must be positive",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Rasterize(mark(0), false)
			})
		},
	},
}

// TestBuildErrors builds malformed programs and checks that each gets its
// error, naming the op and the file:line of the call that built it.
func TestBuildErrors(t *testing.T) {
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			marked = nil
			err := buildNoPanic(t, strings.ReplaceAll(tc.name, " ", ""), tc.lim, tc.build)
			if len(marked) != 1 {
				t.Fatalf("the case marks %d lines; want 1", len(marked))
			}
			line := marked[0]
			if err == nil {
				t.Fatalf("Build succeeded; want a %s error at line %d", tc.op, line)
			}
			text := err.Error()
			for _, want := range []string{tc.op, fmt.Sprintf("%s:%d", markedFile, line), tc.phrase} {
				if !strings.Contains(text, want) {
					t.Errorf("error does not contain %q:\n%s", want, text)
				}
			}
			var list ir.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T; want ir.ErrorList", err)
			}
			n := tc.n
			if n == 0 {
				n = 1
			}
			if len(list) != n {
				t.Errorf("got %d errors; want %d:\n%s", len(list), n, text)
			}
			found := false
			for _, e := range list {
				if e.Op == tc.op && filepath.Base(e.Pos.File) == markedFile && e.Pos.Line == line && strings.Contains(e.Msg, tc.phrase) {
					found = true
				}
			}
			if !found {
				t.Errorf("no single error has op %q, position %s:%d and message %q:\n%s", tc.op, markedFile, line, tc.phrase, text)
			}
		})
	}
	if len(errCases) < 14 {
		t.Errorf("%d cases; the issue asks for at least 14", len(errCases))
	}
}

// buildNoPanic builds a program and fails the test if either step panics.
func buildNoPanic(t *testing.T, name string, lim *ir.Limits, build func(f *tl.Func)) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic while building: %v", r)
		}
	}()
	f := tl.NewFunc(name)
	build(f)
	if lim != nil {
		_, err = f.Build(*lim)
	} else {
		_, err = f.Build()
	}
	return err
}

// TestNoKernel checks that a program with no kernel is reported at the
// NewFunc call that started it.
func TestNoKernel(t *testing.T) {
	marked = nil
	var f *tl.Func
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic while building: %v", r)
			}
		}()
		f = tl.NewFunc(mark("nokernel"))
		f.In("A", tl.F16, 4)
	}()
	_, err := f.Build()
	want := fmt.Sprintf("errors_test.go:%d: func: nokernel has no kernel", marked[0])
	if err == nil || err.Error() != want {
		t.Errorf("Build error = %v; want %s", err, want)
	}
}

// TestErrorShape checks the error's types and fields and its text form:
// "file:line: op: message", one line per error.
func TestErrorShape(t *testing.T) {
	f := tl.NewFunc("two")
	marked = nil
	f.Kernel(tl.Grid(mark(1)), 100, func(k *tl.Block) {
		a := k.Shared(tl.F16, 64, 32)
		b := k.Shared(tl.BF16, 32, 64)
		c := k.Fragment(tl.F32, 64, 64)
		k.Gemm(a, b, mark(c))
	})
	lines := marked
	fn, err := f.Build()
	if fn != nil {
		t.Errorf("Build returned a program with its error")
	}
	list, ok := err.(ir.ErrorList)
	if !ok {
		t.Fatalf("error is %T; want ir.ErrorList", err)
	}
	want := []struct {
		op   string
		line int
		msg  string
	}{
		{"kernel", lines[0], "threads = 100 is not a positive multiple of 32 (a warp)"},
		{"gemm", lines[1], "A is f16 but B is bf16; they must match"},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d errors; want %d:\n%v", len(list), len(want), err)
	}
	var text []string
	for i, e := range list {
		var _ error = e // *ir.Error is an error itself
		if e.Op != want[i].op || e.Pos.Line != want[i].line || e.Msg != want[i].msg {
			t.Errorf("error %d = {%q, line %d, %q}; want {%q, line %d, %q}", i, e.Op, e.Pos.Line, e.Msg, want[i].op, want[i].line, want[i].msg)
		}
		if !filepath.IsAbs(e.Pos.File) || filepath.Base(e.Pos.File) != "errors_test.go" {
			t.Errorf("error %d is at %q; want the absolute path of errors_test.go", i, e.Pos.File)
		}
		text = append(text, fmt.Sprintf("errors_test.go:%d: %s: %s", want[i].line, want[i].op, want[i].msg))
	}
	if got := err.Error(); got != strings.Join(text, "\n") {
		t.Errorf("text:\n%s\nwant:\n%s", got, strings.Join(text, "\n"))
	}
	var one *ir.Error
	if !errors.As(list[0], &one) || one != list[0] {
		t.Errorf("an element does not unwrap as *ir.Error")
	}
	if (ir.ErrorList{}).Err() != nil || (ir.ErrorList(nil)).Err() != nil {
		t.Errorf("an empty ErrorList's Err is not nil")
	}
}

// TestBuildOK checks that a well-formed program builds with no error, and
// that Build returns the same program on a second call.
func TestBuildOK(t *testing.T) {
	f := tl.NewFunc("ok")
	n := f.Sym("n")
	A := f.In("A", tl.F16, n, 64)
	B := f.In("B", tl.F16, 64, 64)
	O := f.Out("O", tl.F32, n, 64)
	f.Kernel(tl.Grid(tl.CeilDiv(n, 64)), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		as := k.Shared(tl.F16, 64, 64)
		bs := k.Shared(tl.F16, 64, 64).Swizzled(ir.Swizzle128B)
		acc := k.Fragment(tl.F32, 64, 64)
		row := k.Fragment(tl.F32, 64)
		k.Copy(A.Sub(tl.Tile(bx, 64), tl.All), as)
		k.Copy(B, bs)
		k.Gemm(as, bs, acc, tl.ClearAccum)
		k.ReduceMax(acc, row, 1)
		k.Parallel(func(i, j tl.Expr) {
			acc.Set(acc.At(i, j).Sub(row.At(i)), i, j)
		}, 64, 64)
		k.Copy(acc, O.Sub(tl.Tile(bx, 64), tl.All))
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if fn == nil || fn.Kernel == nil || len(fn.Kernel.Body) != 6 {
		t.Fatalf("Build returned %v", fn)
	}
	if fn2, err := f.Build(ir.Limits{MaxSharedBytes: 16 * 1024, MaxThreads: 128}); err != nil || fn2 != fn {
		t.Errorf("second Build at the exact limits = %p, %v; want %p, nil", fn2, err, fn)
	}
}

// Warpgroup blocks: a warpgroup the block has, not nested, no loops inside.
var roleErrCases = []errCase{
	{
		name: "warpgroup past the block's", op: "warpgroup", phrase: "warpgroup 1 of a block of 128 threads",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Warpgroup(mark(1), func() {}) })
		},
	},
	{
		name: "nested warpgroup blocks", op: "warpgroup", phrase: "a warpgroup block inside another one",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				k.Warpgroup(0, func() { k.Warpgroup(mark(1), func() {}) })
			})
		},
	},
	{
		name: "loop in a warpgroup block", op: "warpgroup", phrase: "no loops inside a warpgroup block",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				k.Warpgroup(1, func() { k.Serial(mark(2), func(tl.Expr) {}) })
			})
		},
	},
	{
		name: "a warpgroup's fragment used by all", op: "warpgroup", phrase: "fragment x is used by all warpgroups here and by warpgroup 0 alone",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64).Named("x")
				k.Warpgroup(0, func() { k.Clear(x) })
				k.Copy(x, mark(O))
			})
		},
	},
	{
		name: "tile copy in a warpgroup block", op: "warpgroup", phrase: "a copy in a warpgroup block must read or write a fragment",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F32, 64)
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				sh := k.Shared(tl.F32, 64)
				k.Warpgroup(1, func() { k.Copy(mark(A), sh) })
			})
		},
	},
}

func init() { errCases = append(errCases, roleErrCases...) }

// Refuse fails Build with its message at the caller's file:line.
func TestRefuse(t *testing.T) {
	f := tl.NewFunc("refused")
	X := f.In("X", tl.F32, 4)
	f.Refuse("option %q is not implemented", "x")
	_, _, line, _ := runtime.Caller(0)
	line--
	f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
		x := k.Fragment(tl.F32, 4)
		k.Copy(X, x)
	})
	_, err := f.Build()
	want := fmt.Sprintf("errors_test.go:%d: refuse: option \"x\" is not implemented", line)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Build: %v, want %q", err, want)
	}
}
