package tl

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ir"
)

// Expr is a scalar expression under construction. A type error made while
// building it travels with the value and is reported, with the position of
// the op that consumes it, when the program is built.
type Expr struct {
	e   ir.Expr
	err string
}

// IR returns the expression node.
func (x Expr) IR() ir.Expr { return x.e }

// Int is an integer constant: i32, or i64 where v does not fit in 32 bits
// (as a C literal takes the first of int and long long that holds it).
func Int(v int) Expr {
	if int64(int32(v)) != int64(v) {
		return Expr{e: &ir.Const{T: ir.I64, I: int64(v)}}
	}
	return Expr{e: ir.IntConst(int64(v))}
}

// Float is an f32 constant.
func Float(v float64) Expr { return Expr{e: &ir.Const{T: ir.F32, F: v}} }

// Inf is +infinity; NegInf is -infinity (f32).
func Inf() Expr    { return Float(math.Inf(1)) }
func NegInf() Expr { return Float(math.Inf(-1)) }

// lift turns a Go value into an expression: ints, floats, bools, Exprs and
// scalar variables (Var) are accepted.
func lift(v any) Expr {
	switch v := v.(type) {
	case Expr:
		if v.e == nil && v.err == "" {
			return Expr{err: "the Expr is the zero value; was a variable of type tl.Expr never set?"}
		}
		return v
	case int:
		return Int(v)
	case int32:
		return Int(int(v))
	case int64:
		return Expr{e: &ir.Const{T: ir.I64, I: v}}
	case float64:
		return Float(v)
	case float32:
		return Float(float64(v))
	case bool:
		b := int64(0)
		if v {
			b = 1
		}
		return Expr{e: &ir.Const{T: ir.Bool, I: b}}
	case *Tensor:
		if v == nil || v.b == nil {
			return Expr{err: errNilTensor}
		}
		if v.b.Scope == ir.Local && v.b.NumElems() == 1 {
			idx := make([]ir.Expr, len(v.b.Shape))
			for i := range idx {
				idx[i] = ir.IntConst(0)
			}
			return Expr{e: &ir.Load{Buf: v.b, Idx: idx}}
		}
		return Expr{err: "a tile cannot be used as a scalar; index it with At"}
	}
	return Expr{err: fmt.Sprintf("cannot use %T as an expression", v)}
}

func firstErr(xs ...Expr) string {
	for _, x := range xs {
		if x.err != "" {
			return x.err
		}
	}
	return ""
}

func promote(a, b ir.DType) ir.DType {
	switch {
	case a.IsFloat() || b.IsFloat():
		return ir.F32
	case a == ir.I64 || b == ir.I64:
		return ir.I64
	}
	return ir.I32
}

func binary(op ir.BinOp, xa, ya any) Expr {
	x, y := lift(xa), lift(ya)
	if err := firstErr(x, y); err != "" {
		return Expr{err: err}
	}
	xt, yt := x.e.Type(), y.e.Type()
	var t ir.DType
	switch {
	case op.IsLogic():
		if xt != ir.Bool || yt != ir.Bool {
			return Expr{err: fmt.Sprintf("%s needs bool operands, got %s and %s", op, xt, yt)}
		}
		t = ir.Bool
	case xt == ir.Bool || yt == ir.Bool:
		return Expr{err: fmt.Sprintf("%s needs numbers, got %s and %s", op, xt, yt)}
	case op.IsCompare():
		t = ir.Bool
	default:
		t = promote(xt, yt)
		if (op == ir.Mod) && t.IsFloat() {
			return Expr{err: "% needs integers"}
		}
		if op == ir.Pow {
			t = ir.F32
		}
	}
	if c := fold(op, x.e, y.e, t); c != nil {
		return Expr{e: c}
	}
	return Expr{e: &ir.Binary{Op: op, X: x.e, Y: y.e, T: t}}
}

// fold evaluates integer arithmetic on constants and drops x+0 and x*1, so
// that tile offsets stay readable and the verifier can check them. It
// wraps as the GPU does (ir.WrapInt) and as the interpreter computes.
func fold(op ir.BinOp, x, y ir.Expr, t ir.DType) ir.Expr {
	a, aok := ir.ConstInt(x)
	b, bok := ir.ConstInt(y)
	if !t.IsInt() {
		return nil
	}
	if aok && bok {
		var v int64
		switch op {
		case ir.Add:
			v = a + b
		case ir.Sub:
			v = a - b
		case ir.Mul:
			v = a * b
		case ir.Div, ir.Mod:
			if b == 0 {
				return nil
			}
			v = a / b
			if op == ir.Mod {
				v = a % b
			}
		case ir.Min:
			v = min(a, b)
		case ir.Max:
			v = max(a, b)
		default:
			return nil
		}
		return &ir.Const{T: t, I: ir.WrapInt(t, v)} // as the GPU computes it
	}
	switch {
	case (op == ir.Add || op == ir.Sub) && bok && b == 0 && x.Type() == t:
		return x
	case op == ir.Add && aok && a == 0 && y.Type() == t:
		return y
	case (op == ir.Mul || op == ir.Div) && bok && b == 1 && x.Type() == t:
		return x
	case op == ir.Mul && aok && a == 1 && y.Type() == t:
		return y
	}
	return nil
}

// Arithmetic, comparison and logic. Operands may be Exprs, Go numbers or
// scalar variables.
func (x Expr) Add(y any) Expr { return binary(ir.Add, x, y) }
func (x Expr) Sub(y any) Expr { return binary(ir.Sub, x, y) }
func (x Expr) Mul(y any) Expr { return binary(ir.Mul, x, y) }
func (x Expr) Div(y any) Expr { return binary(ir.Div, x, y) }
func (x Expr) Mod(y any) Expr { return binary(ir.Mod, x, y) }
func (x Expr) Lt(y any) Expr  { return binary(ir.Lt, x, y) }
func (x Expr) Le(y any) Expr  { return binary(ir.Le, x, y) }
func (x Expr) Gt(y any) Expr  { return binary(ir.Gt, x, y) }
func (x Expr) Ge(y any) Expr  { return binary(ir.Ge, x, y) }
func (x Expr) Eq(y any) Expr  { return binary(ir.Eq, x, y) }
func (x Expr) Ne(y any) Expr  { return binary(ir.Ne, x, y) }
func (x Expr) And(y any) Expr { return binary(ir.And, x, y) }
func (x Expr) Or(y any) Expr  { return binary(ir.Or, x, y) }
func (x Expr) Neg() Expr      { return unary(ir.Neg, x) }
func (x Expr) Not() Expr      { return unary(ir.Not, x) }

// Min and Max of two values.
func Min(a, b any) Expr { return binary(ir.Min, a, b) }

// Pow is x^y in f32 (integer operands convert), C's pow: a negative x
// only to a whole power. Exact in the interpreter (float64, then rounded);
// CUDA's powf on NVIDIA; on AMD exp2(y·log2|x|), whose relative error
// grows with |y·log2 x| (docs/language.md).
func Pow(x, y any) Expr { return binary(ir.Pow, x, y) }
func Max(a, b any) Expr { return binary(ir.Max, a, b) }

// CeilDiv is (a + b - 1) / b for integers.
func CeilDiv(a, b any) Expr { return lift(a).Add(b).Sub(1).Div(b) }

func unary(op ir.UnOp, xa any) Expr {
	x := lift(xa)
	if x.err != "" {
		return x
	}
	t := x.e.Type()
	switch op {
	case ir.Not:
		if t != ir.Bool {
			return Expr{err: fmt.Sprintf("not needs a bool, got %s", t)}
		}
	case ir.Neg, ir.Abs:
		if t == ir.Bool {
			return Expr{err: fmt.Sprintf("%s needs a number, got bool", op)}
		}
		t = t.Compute()
		if c, ok := ir.ConstInt(x.e); ok && op == ir.Neg {
			return Expr{e: &ir.Const{T: t, I: ir.WrapInt(t, -c)}}
		}
	default:
		if t == ir.Bool {
			return Expr{err: fmt.Sprintf("%s needs a number, got bool", op)}
		}
		t = ir.F32
	}
	return Expr{e: &ir.Unary{Op: op, X: x.e, T: t}}
}

// Math functions, computed in f32.
func Exp(x any) Expr   { return unary(ir.Exp, x) }
func Exp2(x any) Expr  { return unary(ir.Exp2, x) }
func Log(x any) Expr   { return unary(ir.Log, x) }
func Log2(x any) Expr  { return unary(ir.Log2, x) }
func Sqrt(x any) Expr  { return unary(ir.Sqrt, x) }
func Rsqrt(x any) Expr { return unary(ir.Rsqrt, x) }
func Abs(x any) Expr   { return unary(ir.Abs, x) }
func Tanh(x any) Expr  { return unary(ir.Tanh, x) }
func Erf(x any) Expr   { return unary(ir.Erf, x) }
func Log1p(x any) Expr { return unary(ir.Log1p, x) }
func Expm1(x any) Expr { return unary(ir.Expm1, x) }
func Sin(x any) Expr   { return unary(ir.Sin, x) }
func Cos(x any) Expr   { return unary(ir.Cos, x) }

// Sigmoid is 1 / (1 + e^-x), in f32.
func Sigmoid(x any) Expr { return unary(ir.Sigmoid, x) }

// Cast converts x to dt (round to nearest even for narrower floats).
func Cast(x any, dt DType) Expr {
	e := lift(x)
	if e.err != "" {
		return e
	}
	return Expr{e: &ir.Cast{X: e.e, T: dt}}
}

// Select is cond ? a : b.
func Select(cond, a, b any) Expr {
	c, x, y := lift(cond), lift(a), lift(b)
	if err := firstErr(c, x, y); err != "" {
		return Expr{err: err}
	}
	if c.e.Type() != ir.Bool {
		return Expr{err: fmt.Sprintf("select needs a bool condition, got %s", c.e.Type())}
	}
	xt, yt := x.e.Type(), y.e.Type()
	t := xt
	if xt != yt {
		if xt == ir.Bool || yt == ir.Bool {
			return Expr{err: fmt.Sprintf("select arms differ: %s and %s", xt, yt)}
		}
		t = promote(xt, yt)
	}
	return Expr{e: &ir.Select{Cond: c.e, X: x.e, Y: y.e, T: t}}
}
