package tl_test

import (
	"testing"

	"github.com/tilego/tilego/tl"
)

// Sizes that overflow, register tiles past their limit, and programs the
// verifier passed on to a later step that refuses them or runs them wrong
// (issue 50).
var verify50Cases = []errCase{
	{
		name: "shared tile whose element count overflows", op: "alloc", phrase: "element count of [4294967296 4294967296] overflows",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Shared(tl.F32, mark(1<<32), 1<<32) })
		},
	},
	{
		name: "fragment past the register limit", op: "alloc", phrase: "a fragment may hold at most 1024 a thread",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Fragment(tl.F32, mark(1<<17), 1<<17) })
		},
	},
	{
		name: "fragment of 2^34 elements", op: "alloc", phrase: "17179869184 elements over 128 threads",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Fragment(tl.F32, mark(1<<17), 1<<17) })
		},
	},
	{
		name: "local array past the limit", op: "alloc", phrase: "a local array may hold at most 1024",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Local(tl.I32, mark(64), 64) })
		},
	},
	{
		name: "tensor whose element count overflows", op: "param", phrase: "A: the element count overflows",
		build: func(f *tl.Func) {
			f.In("A", tl.F32, mark(1<<40), 1<<40)
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "strides whose last offset overflows", op: "param", phrase: "A: the offset of its last element overflows",
		build: func(f *tl.Func) {
			f.In("A", tl.F32, 1<<20, 4).WithStrides(mark(1<<50), 1)
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "grid times threads overflows", op: "kernel", phrase: "the grid's blocks times threads overflows",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(1<<40), 1<<40), 128, func(k *tl.Block) {})
		},
	},
	{
		name: "grid of zero blocks", op: "kernel", phrase: "grid dim 0 is 0; want at least 1 block",
		build: func(f *tl.Func) {
			f.Kernel(tl.Grid(mark(0)), 128, func(k *tl.Block) {})
		},
	},
	{
		name: "Parallel extent past the fragment", op: "store", phrase: "runs over 128 points but dim 0 of fragment f0 has 64",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Parallel(func(i tl.Expr) { x.Set(mark(1), i) }, 128)
			})
		},
	},
	{
		name: "Parallel extent past the fragment it reads", op: "store", phrase: "runs over 32 points but dim 1 of fragment f0 has 16",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				x, y := k.Fragment(tl.F32, 16, 16), k.Fragment(tl.F32, 16, 32)
				k.Parallel(func(i, j tl.Expr) { y.Set(mark(x.At(i, j)), i, j) }, 16, 32)
			})
		},
	},
	{
		name: "Pipelined inside Pipelined", op: "pipelined", phrase: "a pipelined loop inside another pipelined loop",
		build: func(f *tl.Func) {
			A := f.In("A", tl.F16, 256, 64)
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F16, 32, 64)
				k.Pipelined(2, 2, func(i tl.Expr) {
					k.Pipelined(mark(4), 2, func(j tl.Expr) {
						k.Copy(A.Sub(tl.Tile(i.Mul(4).Add(j), 32), tl.All), s)
					})
				})
			})
		},
	},
	{
		name: "Pipelined under a Serial under a Pipelined", op: "pipelined", phrase: "a pipelined loop inside another pipelined loop",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				k.Pipelined(2, 2, func(i tl.Expr) {
					k.Serial(2, func(j tl.Expr) { k.Pipelined(mark(4), 2, func(tl.Expr) {}) })
				})
			})
		},
	},
	{
		name: "atomic add into f16", op: "atomic_add", phrase: "destination O is f16; atomic adds are into f32 tensors only",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F16, 64)
			kernel1(f, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.AtomicAdd(x, mark(O))
			})
		},
	},
	{
		name: "atomic add into bf16", op: "atomic_add", phrase: "is bf16; atomic adds are into f32 tensors only",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.BF16, 64)
			kernel1(f, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.AtomicAdd(x, mark(O))
			})
		},
	},
	{
		name: "Sym no parameter binds", op: "sym", phrase: "size m is not a dim of any parameter",
		build: func(f *tl.Func) {
			m := f.Sym(mark("m"))
			f.Kernel(tl.Grid(tl.CeilDiv(m, 64)), 128, func(k *tl.Block) {})
		},
	},
	{
		name: "Sym only inside a dim's expression", op: "sym", phrase: "size n is not a dim of any parameter",
		build: func(f *tl.Func) {
			n := f.Sym(mark("n"))
			f.In("A", tl.F32, n.Mul(2))
			kernel1(f, func(k *tl.Block) {})
		},
	},
	{
		name: "every block copies to the same region", op: "copy", phrase: "every block along grid axis x writes the same region of O",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.Copy(x, mark(O))
			})
		},
	},
	{
		name: "blocks along y write the same rows", op: "copy", phrase: "grid axis y writes the same region of O",
		build: func(f *tl.Func) {
			n := f.Sym("n")
			O := f.Out("O", tl.F32, 64, n)
			f.Kernel(tl.Grid(tl.CeilDiv(n, 64), n), 128, func(k *tl.Block) {
				bx, _, _ := k.Idx()
				x := k.Fragment(tl.F32, 64, 64)
				k.Clear(x)
				k.Copy(x, mark(O.Sub(tl.All, tl.Tile(bx, 64))))
			})
		},
	},
	{
		name: "every block stores the same element", op: "store", phrase: "every block along grid axis x writes the same region of O",
		build: func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
				k.Serial(1, func(tl.Expr) { O.Set(1, mark(3)) })
			})
		},
	},
	{
		name: "Parallel of more than 2^31-1 points", op: "parallel", phrase: "make more than 2^31-1 points",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) { k.Parallel(func(i, j tl.Expr) {}, mark(1<<20), 1<<20) })
		},
	},
	{
		name: "atomic add from a global tensor", op: "atomic_add", phrase: "source A is global",
		build: func(f *tl.Func) {
			A, O := f.In("A", tl.F32, 64), f.Out("O", tl.F32, 64)
			kernel1(f, func(k *tl.Block) { k.AtomicAdd(A, mark(O)) })
		},
	},
	{
		name: "Parallel reads a shared element another point writes", op: "parallel", phrase: "a point reads s0[i0 + 1] while another writes s0[i0]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F32, 65)
				k.Parallel(func(i tl.Expr) { s.Set(mark(s.At(i.Add(1))), i) }, 64)
			})
		},
	},
	{
		name: "every Parallel point writes one shared element", op: "parallel", phrase: "every point along i0 writes s0[0]",
		build: func(f *tl.Func) {
			kernel1(f, func(k *tl.Block) {
				s := k.Shared(tl.F32, 64)
				k.Parallel(func(i tl.Expr) { s.Set(mark(1), 0) }, 64)
			})
		},
	},
}

func init() { errCases = append(errCases, verify50Cases...) }

// TestRaceRuleAccepts builds programs whose blocks write disjoint regions
// (or write under a condition on the block, or by atomics) and checks the
// race rule lets them through.
func TestRaceRuleAccepts(t *testing.T) {
	cases := []struct {
		name  string
		build func(f *tl.Func)
	}{
		{"indexed by the block", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 256)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				bx, _, _ := k.Idx()
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.Copy(x, O.Sub(tl.Tile(bx, 64)))
			})
		}},
		{"one block writes", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				bx, _, _ := k.Idx()
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.If(bx.Eq(0), func() { k.Copy(x, O) })
			})
		}},
		{"through a variable set from the block", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 256)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				bx, _, _ := k.Idx()
				row := k.Var(tl.I32, bx.Mul(64))
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.Copy(x, O.Sub(tl.Range(row.Val(), 64)))
			})
		}},
		{"a spread walk", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 1024)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.Spread(16, func(t tl.Expr) { k.Copy(x, O.Sub(tl.Tile(t, 64))) })
			})
		}},
		{"atomic adds", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64)
			f.Kernel(tl.Grid(4), 128, func(k *tl.Block) {
				x := k.Fragment(tl.F32, 64)
				k.Clear(x)
				k.AtomicAdd(x, O)
			})
		}},
		{"a Parallel loop guarded to one point", func(f *tl.Func) {
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				s := k.Shared(tl.F32, 64)
				k.Parallel(func(i tl.Expr) { k.If(i.Eq(0), func() { s.Set(1, 0) }) }, 64)
			})
		}},
		{"a Parallel loop over its own elements", func(f *tl.Func) {
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				s := k.Shared(tl.F32, 64, 8)
				k.Parallel(func(i, j tl.Expr) { s.Set(s.At(i, j).Mul(2), i, j) }, 64, 8)
			})
		}},
		{"one block along x", func(f *tl.Func) {
			O := f.Out("O", tl.F32, 64, 256)
			f.Kernel(tl.Grid(1, 4), 128, func(k *tl.Block) {
				_, by, _ := k.Idx()
				x := k.Fragment(tl.F32, 64, 64)
				k.Clear(x)
				k.Copy(x, O.Sub(tl.All, tl.Tile(by, 64)))
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := buildNoPanic(t, "ok", nil, tc.build); err != nil {
				t.Errorf("Build: %v", err)
			}
		})
	}
}
