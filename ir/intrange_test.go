package ir

import "testing"

// Products, sums and differences of bounded variables fit; those that
// may pass the i32 range, or read an unbounded value, do not.
func TestIntRangesFits(t *testing.T) {
	c := func(v int64) *Const { return &Const{T: I32, I: v} }
	bin := func(op BinOp, x, y Expr) *Binary { return &Binary{Op: op, X: x, Y: y, T: I32} }
	n := &Var{Name: "N", Kind: SymSize}
	bx := &Var{Name: "bx", Kind: BlockIdx}
	i := &Var{Name: "i"}
	k := &Var{Name: "k"}
	tile := &Buffer{Name: "t", Scope: Local, DType: I32, Shape: []Expr{c(1)}}
	in := &Buffer{Name: "X", Scope: Global, DType: I32, Shape: []Expr{c(1)}}
	loop := &For{Var: k, Start: c(0), Stop: bin(Div, bin(Add, n, c(127)), c(128))}
	f := &Func{Syms: []*Var{n}, Kernel: &Kernel{Grid: []Expr{c(64)}, Idx: []*Var{bx}, Body: []Stmt{
		&Store{Buf: tile, Idx: []Expr{c(0)}, Value: bin(Mod, bx, c(7))},
		loop,
		&Parallel{Vars: []*Var{i}, Extents: []int{128}},
	}}}
	r := NewIntRanges(f)
	for _, tc := range []struct {
		name string
		e    *Binary
		fits bool
	}{
		{"tile row", bin(Add, bin(Mul, k, c(128)), i), true},        // k < ceil(N/128): k·128 + i < 2^31
		{"block row", bin(Add, bin(Mul, bx, c(128)), i), true},      // bx < 64
		{"past i32", bin(Mul, i, c(1<<25)), false},                  // 127·2^25
		{"size squared", bin(Mul, n, n), false},                     // N up to 2^31-1
		{"stored tile", bin(Mul, &Load{Buf: tile}, c(1<<27)), true}, // t in [0, 6]
		{"loaded input", bin(Sub, &Load{Buf: in}, c(1)), false},     // any i32
	} {
		if got := r.Fits(tc.e); got != tc.fits {
			t.Errorf("%s: Fits %v, want %v", tc.name, got, tc.fits)
		}
	}
}
