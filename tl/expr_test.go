package tl

import (
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
)

// TestExprTyping checks the type and folded form of expressions built with
// tl, and the type errors they carry.
func TestExprTyping(t *testing.T) {
	x := Expr{e: &ir.Var{Name: "x", Kind: ir.LoopVar}} // an i32 loop index
	h := Expr{e: &ir.Load{Buf: &ir.Buffer{Name: "h", DType: ir.BF16, Shape: []ir.Expr{ir.IntConst(4)}}, Idx: []ir.Expr{ir.IntConst(0)}}}
	cond := x.Lt(4)
	tests := []struct {
		name   string
		got    Expr
		want   string   // ExprString of the result
		typ    ir.DType // its type
		folded bool     // whether it is an integer constant
		err    string   // a key phrase of the error it carries, if any
	}{
		// Integer constants fold.
		{name: "int+int", got: Int(2).Add(3), want: "5", typ: ir.I32, folded: true},
		{name: "int-int", got: Int(7).Sub(10), want: "-3", typ: ir.I32, folded: true},
		{name: "int*int", got: Int(6).Mul(7), want: "42", typ: ir.I32, folded: true},
		{name: "int/int truncates", got: Int(-7).Div(2), want: "-3", typ: ir.I32, folded: true},
		{name: "int%int", got: Int(-7).Mod(2), want: "-1", typ: ir.I32, folded: true},
		{name: "min", got: Min(3, Int(-1)), want: "-1", typ: ir.I32, folded: true},
		{name: "max", got: Max(3, Int(-1)), want: "3", typ: ir.I32, folded: true},
		{name: "i32+i64", got: Int(1).Add(int64(2)), want: "3", typ: ir.I64, folded: true},
		{name: "int32 operand", got: Int(1).Add(int32(2)), want: "3", typ: ir.I32, folded: true},
		{name: "nested", got: Int(10).Add(6).Div(4).Mul(Int(2).Sub(1)), want: "4", typ: ir.I32, folded: true},
		{name: "division by zero is left", got: Int(1).Div(0), want: "1 / 0", typ: ir.I32},
		{name: "modulo by zero is left", got: Int(1).Mod(0), want: "1 % 0", typ: ir.I32},

		// Identities drop.
		{name: "x+0", got: x.Add(0), want: "x", typ: ir.I32},
		{name: "0+x", got: Int(0).Add(x), want: "x", typ: ir.I32},
		{name: "x-0", got: x.Sub(0), want: "x", typ: ir.I32},
		{name: "x*1", got: x.Mul(1), want: "x", typ: ir.I32},
		{name: "1*x", got: Int(1).Mul(x), want: "x", typ: ir.I32},
		{name: "x/1", got: x.Div(1), want: "x", typ: ir.I32},
		{name: "0-x stays", got: Int(0).Sub(x), want: "0 - x", typ: ir.I32},
		{name: "x*0 stays", got: x.Mul(0), want: "x * 0", typ: ir.I32},
		{name: "x+i64 0 widens", got: x.Add(int64(0)), want: "x + 0", typ: ir.I64},
		{name: "float x+0 stays", got: h.Add(0), want: "h[0] + 0", typ: ir.F32},

		// Promotion.
		{name: "int*float", got: Int(2).Mul(1.5), want: "2 * 1.5f", typ: ir.F32},
		{name: "x*float32", got: x.Mul(float32(0.5)), want: "x * 0.5f", typ: ir.F32},
		{name: "bf16 load computes in f32", got: h, want: "h[0]", typ: ir.F32},
		{name: "bf16*int", got: h.Mul(x), want: "h[0] * x", typ: ir.F32},
		{name: "i32+i64 var", got: x.Add(int64(5)), want: "x + 5", typ: ir.I64},
		{name: "float+float", got: Float(1).Add(2.0), want: "1f + 2f", typ: ir.F32},

		// Comparisons and logic give bools.
		{name: "lt", got: x.Lt(4), want: "x < 4", typ: ir.Bool},
		{name: "int ge float", got: x.Ge(0.5), want: "x >= 0.5f", typ: ir.Bool},
		{name: "constant compare is not folded", got: Int(1).Eq(1), want: "1 == 1", typ: ir.Bool},
		{name: "and", got: cond.And(x.Gt(0)), want: "x < 4 && x > 0", typ: ir.Bool},
		{name: "or of bool constants", got: cond.Or(true), want: "x < 4 || true", typ: ir.Bool},
		{name: "not", got: cond.Not(), want: "!(x < 4)", typ: ir.Bool},
		{name: "ne le", got: x.Ne(1).Or(x.Le(2)), want: "x != 1 || x <= 2", typ: ir.Bool},

		// Select promotes its arms.
		{name: "select int int", got: Select(cond, 1, 2), want: "select(x < 4, 1, 2)", typ: ir.I32},
		{name: "select int float", got: Select(cond, 1, 2.5), want: "select(x < 4, 1, 2.5f)", typ: ir.F32},
		{name: "select i32 i64", got: Select(cond, x, int64(2)), want: "select(x < 4, x, 2)", typ: ir.I64},
		{name: "select bf16 float", got: Select(cond, h, NegInf()), want: "select(x < 4, h[0], -inf)", typ: ir.F32},
		{name: "select bools", got: Select(cond, true, cond), want: "select(x < 4, true, x < 4)", typ: ir.Bool},

		// CeilDiv.
		{name: "ceildiv constants", got: CeilDiv(10, 4), want: "3", typ: ir.I32, folded: true},
		{name: "ceildiv exact", got: CeilDiv(8, 4), want: "2", typ: ir.I32, folded: true},
		{name: "ceildiv zero", got: CeilDiv(0, 64), want: "0", typ: ir.I32, folded: true},
		{name: "ceildiv by 1 is not simplified", got: CeilDiv(x, 1), want: "x + 1 - 1", typ: ir.I32},
		{name: "ceildiv symbolic", got: CeilDiv(x, 64), want: "(x + 64 - 1) / 64", typ: ir.I32},

		// Unary ops.
		{name: "neg int constant", got: Int(3).Neg(), want: "-3", typ: ir.I32, folded: true},
		{name: "neg i64 constant", got: lift(int64(3)).Neg(), want: "-3", typ: ir.I64, folded: true},
		{name: "neg float constant", got: Float(2).Neg(), want: "-2f", typ: ir.F32},
		{name: "neg var", got: x.Neg(), want: "-x", typ: ir.I32},
		{name: "neg of a sum", got: x.Add(1).Neg(), want: "-(x + 1)", typ: ir.I32},
		{name: "neg bf16", got: h.Neg(), want: "-h[0]", typ: ir.F32},
		{name: "abs int", got: Abs(x), want: "abs(x)", typ: ir.I32},
		{name: "exp of int", got: Exp(x), want: "exp(x)", typ: ir.F32},
		{name: "math", got: Rsqrt(Sqrt(Log(Log2(Exp2(h))))), want: "rsqrt(sqrt(log(log2(exp2(h[0])))))", typ: ir.F32},
		{name: "cast", got: Cast(h.Mul(2), ir.F16), want: "f16(h[0] * 2)", typ: ir.F16},
		{name: "cast to int", got: Cast(1.5, ir.I32), want: "i32(1.5f)", typ: ir.I32},
		{name: "inf", got: Inf(), want: "inf", typ: ir.F32},

		// Type errors travel with the value.
		{name: "and of ints", got: Int(1).And(2), err: "&& needs bool operands, got i32 and i32"},
		{name: "or of bool and int", got: cond.Or(x), err: "|| needs bool operands, got bool and i32"},
		{name: "bool+int", got: cond.Add(1), err: "+ needs numbers, got bool and i32"},
		{name: "int<bool", got: x.Lt(true), err: "< needs numbers, got i32 and bool"},
		{name: "float mod", got: Float(1).Mod(2), err: "% needs integers"},
		{name: "not int", got: x.Not(), err: "not needs a bool, got i32"},
		{name: "neg bool", got: cond.Neg(), err: "neg needs a number, got bool"},
		{name: "abs bool", got: Abs(cond), err: "abs needs a number, got bool"},
		{name: "exp bool", got: Exp(true), err: "exp needs a number, got bool"},
		{name: "select int cond", got: Select(x, 1, 2), err: "select needs a bool condition, got i32"},
		{name: "select bool and int", got: Select(cond, true, 1), err: "select arms differ: bool and i32"},
		{name: "string", got: Int(1).Add("one"), err: "cannot use string as an expression"},
		{name: "nil", got: lift(nil), err: "cannot use <nil> as an expression"},
		{name: "zero Expr", got: Expr{}.Add(1), err: "the Expr is the zero value"},
		{name: "zero Expr operand", got: x.Mul(Expr{}), err: "the Expr is the zero value"},
		{name: "tile as a scalar", got: lift(&Tensor{b: &ir.Buffer{Name: "t", Scope: ir.Shared, Shape: []ir.Expr{ir.IntConst(4)}}}), err: "a tile cannot be used as a scalar"},
		{name: "first error wins", got: Int(1).And(2).Add(cond).Mul(3), err: "&& needs bool operands"},
		{name: "error through select", got: Select(cond, Int(1).And(2), 0), err: "&& needs bool operands"},
		{name: "error through cast", got: Cast(cond.Add(1), ir.F32), err: "+ needs numbers"},
		{name: "error through math", got: Exp(x.Not()), err: "not needs a bool"},
		{name: "error through ceildiv", got: CeilDiv(cond, 2), err: "+ needs numbers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err != "" {
				if tc.got.err == "" || !strings.Contains(tc.got.err, tc.err) {
					t.Errorf("error = %q; want one containing %q", tc.got.err, tc.err)
				}
				if tc.got.e != nil {
					t.Errorf("an expression with an error has the node %s", ir.ExprString(tc.got.e))
				}
				return
			}
			if tc.got.err != "" {
				t.Fatalf("unexpected error %q", tc.got.err)
			}
			if s := ir.ExprString(tc.got.IR()); s != tc.want {
				t.Errorf("got %s; want %s", s, tc.want)
			}
			if typ := tc.got.IR().Type(); typ != tc.typ {
				t.Errorf("type %s; want %s", typ, tc.typ)
			}
			if _, ok := ir.ConstInt(tc.got.IR()); ok != tc.folded {
				t.Errorf("constant = %v; want %v", ok, tc.folded)
			}
		})
	}
}

// TestFoldKeepsNode checks that x+0 and x*1 return x's own node.
func TestFoldKeepsNode(t *testing.T) {
	v := &ir.Var{Name: "x"}
	x := Expr{e: v}
	for _, got := range []Expr{x.Add(0), Int(0).Add(x), x.Sub(0), x.Mul(1), Int(1).Mul(x), x.Div(1)} {
		if got.e != ir.Expr(v) {
			t.Errorf("got %s (%T); want the Var itself", ir.ExprString(got.e), got.e)
		}
	}
}

// TestLift checks how Go values become expressions.
func TestLift(t *testing.T) {
	tests := []struct {
		v   any
		typ ir.DType
		s   string
	}{
		{3, ir.I32, "3"},
		{int32(-3), ir.I32, "-3"},
		{int64(1 << 40), ir.I64, "1099511627776"},
		{2.5, ir.F32, "2.5f"},
		{float32(0.25), ir.F32, "0.25f"},
		{true, ir.Bool, "true"},
		{false, ir.Bool, "false"},
		{math.Inf(-1), ir.F32, "-inf"},
		{Int(7), ir.I32, "7"},
	}
	for _, tc := range tests {
		x := lift(tc.v)
		if x.err != "" {
			t.Errorf("lift(%v): %s", tc.v, x.err)
			continue
		}
		if x.e.Type() != tc.typ || ir.ExprString(x.e) != tc.s {
			t.Errorf("lift(%#v) = %s %s; want %s %s", tc.v, x.e.Type(), ir.ExprString(x.e), tc.typ, tc.s)
		}
	}
	// A scalar variable reads as a load of its one element.
	f := NewFunc("lift")
	var x Expr
	f.Kernel(Grid(1), 32, func(k *Block) {
		v := k.Var(ir.F16, 1).Named("v")
		x = lift(v)
		if y := v.Val(); ir.ExprString(y.e) != "v[0]" {
			t.Errorf("Val = %s; want v[0]", ir.ExprString(y.e))
		}
	})
	if x.err != "" || ir.ExprString(x.e) != "v[0]" || x.e.Type() != ir.F32 {
		t.Errorf("lift(Var) = %s (%q); want the f32 load v[0]", ir.ExprString(x.e), x.err)
	}
}
