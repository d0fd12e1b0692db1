package ir

import (
	"math"
	"strings"
	"testing"
)

// The golden test of whole programs is tl's TestPrintGolden (building them
// needs tl, which imports ir); these test the pieces on hand-built IR.

func bin(op BinOp, x, y Expr) Expr {
	t := I32
	switch {
	case op.IsCompare() || op.IsLogic():
		t = Bool
	case x.Type() == F32 || y.Type() == F32:
		t = F32
	}
	return &Binary{Op: op, X: x, Y: y, T: t}
}

func TestExprString(t *testing.T) {
	a, b, c := &Var{Name: "a"}, &Var{Name: "b"}, &Var{Name: "c"}
	f := &Const{T: F32, F: 0.5}
	ld := &Load{Buf: &Buffer{Name: "x", DType: BF16}, Idx: []Expr{a, bin(Add, b, IntConst(1))}}
	tests := []struct {
		e    Expr
		want string
	}{
		{IntConst(-3), "-3"},
		{&Const{T: I64, I: 1 << 40}, "1099511627776"},
		{&Const{T: Bool, I: 1}, "true"},
		{&Const{T: Bool}, "false"},
		{f, "0.5f"},
		{&Const{T: F32, F: 1e-7}, "1e-07f"},
		{&Const{T: F32, F: math.Inf(1)}, "inf"},
		{&Const{T: F32, F: math.Inf(-1)}, "-inf"},
		{nil, "<nil>"},
		{ld, "x[a, b + 1]"},

		// Precedence: only the parentheses that are needed.
		{bin(Add, bin(Mul, a, b), c), "a * b + c"},
		{bin(Mul, bin(Add, a, b), c), "(a + b) * c"},
		{bin(Mul, a, bin(Add, b, c)), "a * (b + c)"},
		{bin(Sub, bin(Sub, a, b), c), "a - b - c"},
		{bin(Sub, a, bin(Sub, b, c)), "a - (b - c)"},
		{bin(Add, a, bin(Add, b, c)), "a + (b + c)"},
		{bin(Div, bin(Sub, bin(Add, a, IntConst(64)), IntConst(1)), IntConst(64)), "(a + 64 - 1) / 64"},
		{bin(Div, a, bin(Mul, b, c)), "a / (b * c)"},
		{bin(Mod, bin(Mul, a, b), c), "a * b % c"},
		{bin(Lt, bin(Add, a, IntConst(1)), bin(Mul, b, c)), "a + 1 < b * c"},
		{bin(Or, bin(And, bin(Lt, a, b), bin(Gt, b, c)), bin(Eq, a, c)), "a < b && b > c || a == c"},
		{bin(And, bin(Or, bin(Lt, a, b), bin(Ge, b, c)), bin(Ne, a, c)), "(a < b || b >= c) && a != c"},
		{bin(Eq, bin(Lt, a, b), bin(Le, b, c)), "(a < b) == (b <= c)"},
		{bin(Sub, a, IntConst(-1)), "a - -1"},
		{bin(Mul, a, &Unary{Op: Neg, X: b, T: I32}), "a * -b"},
		{bin(Min, bin(Add, a, b), bin(Max, c, IntConst(0))), "min(a + b, max(c, 0))"},
		{bin(Mul, bin(Min, a, b), c), "min(a, b) * c"},

		// Unary operators and calls.
		{&Unary{Op: Neg, X: a, T: I32}, "-a"},
		{&Unary{Op: Neg, X: bin(Add, a, b), T: I32}, "-(a + b)"},
		{&Unary{Op: Neg, X: &Unary{Op: Neg, X: a, T: I32}, T: I32}, "-(-a)"},
		{&Unary{Op: Neg, X: &Const{T: F32, F: -2}, T: F32}, "-(-2f)"},
		{&Unary{Op: Neg, X: ld, T: F32}, "-x[a, b + 1]"},
		{&Unary{Op: Not, X: bin(Lt, a, b), T: Bool}, "!(a < b)"},
		{&Unary{Op: Not, X: &Const{T: Bool, I: 1}, T: Bool}, "!true"},
		{&Unary{Op: Exp2, X: bin(Sub, bin(Mul, ld, f), c), T: F32}, "exp2(x[a, b + 1] * 0.5f - c)"},
		{&Unary{Op: Rsqrt, X: a, T: F32}, "rsqrt(a)"},
		{&Cast{X: bin(Add, a, b), T: F16}, "f16(a + b)"},
		{bin(Mul, &Cast{X: a, T: F32}, f), "f32(a) * 0.5f"},
		{&Select{Cond: bin(Gt, a, b), X: bin(Add, a, IntConst(1)), Y: &Const{T: F32, F: math.Inf(-1)}, T: F32}, "select(a > b, a + 1, -inf)"},
		{bin(Add, &Select{Cond: bin(Gt, a, b), X: a, Y: b, T: I32}, c), "select(a > b, a, b) + c"},
	}
	for _, tc := range tests {
		if got := ExprString(tc.e); got != tc.want {
			t.Errorf("got %s; want %s", got, tc.want)
		}
	}
}

// TestPrintStmts checks the text of each kind of statement and of a
// function's header.
func TestPrintStmts(t *testing.T) {
	n := &Var{Name: "n", Kind: SymSize}
	a := &Buffer{Name: "A", DType: F16, Scope: Global, Shape: []Expr{n, IntConst(64)}, Strides: []Expr{IntConst(1), n}}
	o := &Buffer{Name: "O", DType: F32, Scope: Global, Shape: []Expr{n}, Output: true}
	s := &Buffer{Name: "s", DType: F16, Scope: Shared, Shape: []Expr{IntConst(16), IntConst(64)}, Swizzle: Swizzle64B}
	u := &Buffer{Name: "u", DType: F16, Scope: Shared, Shape: []Expr{IntConst(64), IntConst(16)}, Swizzle: SwizzleNone}
	c := &Buffer{Name: "c", DType: F32, Scope: Fragment, Shape: []Expr{IntConst(16), IntConst(16)}}
	r := &Buffer{Name: "r", DType: F32, Scope: Fragment, Shape: []Expr{IntConst(16)}}
	bx := &Var{Name: "bx", Kind: BlockIdx}
	i, j, k, kk := &Var{Name: "i"}, &Var{Name: "j"}, &Var{Name: "k"}, &Var{Name: "kk"}
	row := Region{Buf: a, Start: []Expr{bin(Mul, bx, IntConst(16)), IntConst(0)}, Extent: []int{16, 64}, Keep: []bool{true, true}}
	f := &Func{Name: "demo", Params: []*Buffer{a, o}, Syms: []*Var{n}, Kernel: &Kernel{
		Grid: []Expr{bin(Div, n, IntConst(16))}, Threads: 128, Idx: []*Var{bx},
		Allocs: []*Buffer{s, u, c, r},
		Body: []Stmt{
			&Copy{Src: row, Dst: Whole(s)},
			&Gemm{A: Whole(s), B: Whole(u), C: Whole(c), Policy: FullCol, Clear: true},
			&Gemm{A: Whole(u), B: Whole(s), C: Whole(c), TransA: true, TransB: true},
			&Reduce{Kind: ReduceAbsMax, Src: c, Dst: r, Dim: 1},
			&For{Var: k, Start: IntConst(0), Stop: IntConst(2), Kind: Unrolled, Body: []Stmt{
				&While{Cond: bin(Lt, k, IntConst(1)), Body: []Stmt{
					&If{Cond: bin(Eq, bx, IntConst(0)), Then: []Stmt{
						&Parallel{Vars: []*Var{i, j}, Extents: []int{16, 16}, Body: []Stmt{
							&Store{Buf: c, Idx: []Expr{i, j}, Value: IntConst(0)},
						}},
					}},
				}},
			}},
			&For{Var: kk, Start: IntConst(1), Stop: n, Kind: Pipelined, Stages: 2, Body: []Stmt{
				&Copy{Src: row, Dst: Whole(s), Cache: EvictFirst},
				&Deferred{Body: []Stmt{&Gemm{A: Whole(s), B: Whole(u), C: Whole(c)}}},
			}},
			&Fill{Dst: Region{Buf: r, Start: []Expr{IntConst(4)}, Extent: []int{8}, Keep: []bool{true}}, Value: &Const{T: F32, F: 1}},
			&Parallel{Vars: []*Var{i, j}, Extents: []int{16, 16}, SkipOnes: true, Body: []Stmt{
				&Store{Buf: c, Idx: []Expr{i, j}, Value: bin(Mul, &Load{Buf: c, Idx: []Expr{i, j}}, &Load{Buf: r, Idx: []Expr{i}})},
			}},
			&AtomicAdd{Src: Whole(r), Dst: Region{Buf: o, Start: []Expr{bin(Mul, bx, IntConst(16))}, Extent: []int{16}, Keep: []bool{true}}},
		},
		Raster: &Raster{Panel: 4},
	}}
	want := `func demo(A f16[n, 64] strides[1, n], O f32[n] out) sizes(n) {
  kernel grid(n / 16) threads(128) idx(bx)
  rasterize panel(4) row
  s = alloc shared f16[16, 64] swizzle(64B)
  u = alloc shared f16[64, 16] swizzle(none)
  c = alloc fragment f32[16, 16]
  r = alloc fragment f32[16]
  copy A[(bx * 16):+16, 0:+64] -> s
  gemm s, u -> c (fullcol, clear)
  gemm u, s -> c (square, transA, transB)
  reduce_absmax c dim 1 -> r (accumulate)
  for k in [0, 2) unrolled {
    while k < 1 {
      if bx == 0 {
        parallel i < 16, j < 16 {
          c[i, j] = 0
        }
      }
    }
  }
  for kk in [1, n) pipelined stages(2) {
    copy A[(bx * 16):+16, 0:+64] -> s evict_first
    deferred {
      gemm s, u -> c (square)
    }
  }
  fill r[4:+8] = 1f
  parallel i < 16, j < 16 skip_ones {
    c[i, j] = c[i, j] * r[i]
  }
  atomic_add r -> O[(bx * 16):+16]
}
`
	if got := f.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	empty := (&Func{Name: "empty"}).String()
	if empty != "func empty() {\n}\n" {
		t.Errorf("empty func prints %q", empty)
	}
	var p printer
	p.stmt(nil)
	if !strings.Contains(p.b.String(), "<unknown <nil>>") {
		t.Errorf("an unknown statement prints %q", p.b.String())
	}
	// A malformed kernel still prints, for debugging.
	bad := &Func{Name: "bad", Kernel: &Kernel{Grid: []Expr{IntConst(1), IntConst(2), IntConst(3), IntConst(4)}, Idx: []*Var{bx}}}
	if got := bad.String(); !strings.Contains(got, "kernel grid(1, 2, 3, 4) threads(0) idx(bx)") {
		t.Errorf("a kernel with more grid dims than indices prints %q", got)
	}
}
