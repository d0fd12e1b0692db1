package interp

import (
	"math"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// TestIntegerSemantics runs integer arithmetic and conversions at their
// edges and checks the GPU's answers (docs/language.md): two's-complement
// wrap, exact i64, cvt.rzi conversions (toward zero, saturating, NaN to 0).
func TestIntegerSemantics(t *testing.T) {
	const p53 = int64(1) << 53
	cases := []struct {
		name  string
		value func(k *tl.Block) tl.Expr // stored into an i64 output
		want  float64
	}{
		{"i64 past 2^53 stays exact", func(k *tl.Block) tl.Expr {
			v := k.Var(tl.I64, p53)
			v.Assign(v.Val().Add(int64(1)))
			return v.Val().Sub(p53)
		}, 1},
		{"i64 compares exactly past 2^53", func(k *tl.Block) tl.Expr {
			v := k.Var(tl.I64, p53+1)
			return tl.Select(v.Val().Gt(p53), 1, 0)
		}, 1},
		{"i32 add wraps", func(k *tl.Block) tl.Expr {
			v := k.Var(tl.I32, math.MaxInt32)
			return v.Val().Add(1)
		}, math.MinInt32},
		{"i64 stored into i32 wraps", func(k *tl.Block) tl.Expr {
			v := k.Var(tl.I32, 0)
			v.Assign(k.Var(tl.I64, int64(1)<<32+5).Val())
			return v.Val()
		}, 5},
		{"i64 cast to i32 wraps", func(k *tl.Block) tl.Expr {
			return tl.Cast(k.Var(tl.I64, int64(1)<<32-1).Val(), tl.I32)
		}, -1},
		{"f32 past i32 saturates", func(k *tl.Block) tl.Expr {
			return tl.Cast(k.Var(tl.F32, 3e9).Val(), tl.I32)
		}, math.MaxInt32},
		{"f32 below i32 saturates", func(k *tl.Block) tl.Expr {
			return tl.Cast(k.Var(tl.F32, -3e9).Val(), tl.I32)
		}, math.MinInt32},
		{"NaN converts to 0", func(k *tl.Block) tl.Expr {
			return tl.Cast(k.Var(tl.F32, math.NaN()).Val(), tl.I32)
		}, 0},
		{"f32 truncates toward zero", func(k *tl.Block) tl.Expr {
			return tl.Cast(k.Var(tl.F32, -2.75).Val(), tl.I64)
		}, -2},
		{"an i64 from f32 stored into i32 wraps", func(k *tl.Block) tl.Expr {
			v := k.Var(tl.I32, 0)
			v.Assign(tl.Cast(k.Var(tl.F32, 1e10).Val(), tl.I64).Add(0))
			return v.Val()
		}, 1410065408}, // 10^10 mod 2^32: an i64 then wraps into the i32
		{"constant folding wraps as the run does", func(k *tl.Block) tl.Expr {
			return tl.Int(1 << 30).Mul(4).Add(k.Var(tl.I32, 0).Val())
		}, 0},
		{"run-time i32 multiply wraps alike", func(k *tl.Block) tl.Expr {
			return k.Var(tl.I32, 1<<30).Val().Mul(4)
		}, 0},
		{"integer division truncates toward zero", func(k *tl.Block) tl.Expr {
			return k.Var(tl.I32, -7).Val().Div(2)
		}, -3},
		{"i32 min over -1 wraps", func(k *tl.Block) tl.Expr {
			return k.Var(tl.I32, math.MinInt32).Val().Div(-1)
		}, math.MinInt32},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("ints")
			out := f.Out("out", tl.I64, 1)
			f.Kernel(tl.Grid(1), 32, func(k *tl.Block) {
				v := tc.value(k)
				k.Parallel(func(i tl.Expr) { out.Set(v, i) }, 1)
			})
			fn, err := f.Build()
			if err != nil {
				t.Fatal(err)
			}
			o := tensor.New(ir.I64, 1)
			if err := Run(fn, []*tensor.Tensor{o}); err != nil {
				t.Fatal(err)
			}
			if got := o.At(0); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
		})
	}
}

// TestConstantFolding checks tl's folding against the GPU's semantics:
// i32 wraps, and an Int too large for 32 bits is an i64 (as a C literal).
func TestConstantFolding(t *testing.T) {
	cases := []struct {
		name string
		e    tl.Expr
		t    ir.DType
		v    int64
	}{
		{"i32 product wraps", tl.Int(1 << 30).Mul(4), ir.I32, 0},
		{"i32 sum wraps", tl.Int(math.MaxInt32).Add(1), ir.I32, math.MinInt32},
		{"negating the i32 minimum wraps", tl.Int(math.MinInt32).Neg(), ir.I32, math.MinInt32},
		{"a large Int is an i64", tl.Int(1 << 40), ir.I64, 1 << 40},
		{"i64 arithmetic keeps 64 bits", tl.Int(1 << 40).Mul(4), ir.I64, 1 << 42},
	}
	for _, tc := range cases {
		c, ok := tc.e.IR().(*ir.Const)
		if !ok || c.T != tc.t || c.I != tc.v {
			t.Errorf("%s: got %s; want the %s constant %d", tc.name, ir.ExprString(tc.e.IR()), tc.t, tc.v)
		}
	}
}
