package interp

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Integers compute as the GPU computes them (docs/language.md): in int64,
// wrapped to the expression's type (two's complement; ir.WrapInt), never
// through a float64, which would round an i64 past 2^53. A float converts
// to an integer as CUDA's cvt.rzi does: toward zero, saturating at the
// type's bounds, NaN to 0.
//
// Registers and on-chip memory hold float64s. An i64 on-chip element holds
// its int64's bits (an i64 needs all 64); a global i64 tensor holds
// float64 values, the host tensors' form.

type ieval func(*state) int64

// iexpr compiles an expression to an int64 evaluator: exact for integer
// types, converted as a cast to i64 would for others.
func (c *compiler) iexpr(e ir.Expr) ieval {
	t := e.Type()
	if !t.IsInt() {
		f := c.expr(e)
		if t == ir.Bool {
			return func(st *state) int64 { return int64(f(st)) }
		}
		return func(st *state) int64 { return cvtInt(ir.I64, f(st)) }
	}
	switch e := e.(type) {
	case *ir.Const:
		v := ir.WrapInt(t, e.I)
		return func(*state) int64 { return v }
	case *ir.Var:
		f := c.expr(e)
		return func(st *state) int64 { return int64(f(st)) }
	case *ir.Binary:
		return c.ibinary(e)
	case *ir.Unary:
		x := c.iexpr(e.X)
		switch e.Op {
		case ir.Neg:
			return func(st *state) int64 { return ir.WrapInt(t, -x(st)) }
		case ir.Abs:
			return func(st *state) int64 {
				v := x(st)
				if v < 0 {
					v = -v
				}
				return ir.WrapInt(t, v)
			}
		}
	case *ir.Cast:
		if e.X.Type().IsInt() || e.X.Type() == ir.Bool {
			x := c.iexpr(e.X)
			return func(st *state) int64 { return ir.WrapInt(t, x(st)) }
		}
		x := c.expr(e.X)
		return func(st *state) int64 { return cvtInt(t, x(st)) }
	case *ir.Select:
		cond, x, y := c.expr(e.Cond), c.iexpr(e.X), c.iexpr(e.Y)
		return func(st *state) int64 {
			if cond(st) != 0 {
				return ir.WrapInt(t, x(st))
			}
			return ir.WrapInt(t, y(st))
		}
	case *ir.Load:
		b := c.bufs[c.buf[e.Buf]]
		at := c.addr(b, e.Idx)
		return func(st *state) int64 {
			off, ok := at(st)
			if !ok {
				st.failIdx(e.Buf, e.Idx, c, "read")
				return 0
			}
			return b.readInt(st.data(b)[off])
		}
	}
	c.errorf("interp: cannot compute %s as an integer", ir.ExprString(e))
	return func(*state) int64 { return 0 }
}

// ibinary computes integer arithmetic in int64, wrapped to e's type.
func (c *compiler) ibinary(e *ir.Binary) ieval {
	x, y, t := c.iexpr(e.X), c.iexpr(e.Y), e.T
	var fn func(a, b int64) int64
	switch e.Op {
	case ir.Add:
		fn = func(a, b int64) int64 { return a + b }
	case ir.Sub:
		fn = func(a, b int64) int64 { return a - b }
	case ir.Mul:
		fn = func(a, b int64) int64 { return a * b }
	case ir.Min:
		fn = func(a, b int64) int64 { return min(a, b) }
	case ir.Max:
		fn = func(a, b int64) int64 { return max(a, b) }
	case ir.Div, ir.Mod:
		what := map[ir.BinOp]string{ir.Div: "division", ir.Mod: "modulo"}[e.Op]
		return func(st *state) int64 {
			a, b := x(st), y(st)
			if b == 0 {
				if st.err == nil {
					st.err = fmt.Errorf("integer %s by zero in %s", what, ir.ExprString(e))
				}
				return 0
			}
			if e.Op == ir.Mod {
				return ir.WrapInt(t, a%b) // Go's / and % truncate toward zero, as C's
			}
			return ir.WrapInt(t, a/b)
		}
	default:
		c.errorf("interp: %s is not integer arithmetic", e.Op)
		return func(*state) int64 { return 0 }
	}
	return func(st *state) int64 { return ir.WrapInt(t, fn(x(st), y(st))) }
}

// cvtInt converts a float to the integer type t as cvt.rzi does: toward
// zero, saturating, NaN to 0 (Go's own conversion of an out-of-range float
// is implementation-defined).
func cvtInt(t ir.DType, x float64) int64 {
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if t == ir.I64 {
		lo, hi = -0x1p63, 0x1p63
	}
	switch {
	case x != x:
		return 0
	case x <= lo:
		return int64(lo)
	case x >= hi && t == ir.I64:
		return math.MaxInt64
	case x >= hi:
		return int64(hi)
	}
	return int64(x) // in range: truncates toward zero
}

// intToFloat is an integer as the GPU converts it to f32 (cvt.rn.f32.s64:
// the nearest f32, ties to even).
func intToFloat(v int64) float64 { return float64(float32(v)) }

// i64Bits says whether b's elements hold int64 bits (on-chip i64).
func (b *buffer) i64Bits() bool { return b.global == nil && b.b.DType == ir.I64 }

// readInt is an element of b (as stored) as an integer.
func (b *buffer) readInt(x float64) int64 {
	switch {
	case b.i64Bits():
		return int64(math.Float64bits(x))
	case b.b.DType.IsFloat():
		return cvtInt(ir.I64, x)
	}
	return int64(x) // i32, bool and global i64: exact float64s
}

// readFloat is an element of b (as stored) as a float64 value.
func (b *buffer) readFloat(x float64) float64 {
	if b.i64Bits() {
		return float64(int64(math.Float64bits(x)))
	}
	return x
}

// fromInt is the element b stores for the integer v.
func (b *buffer) fromInt(v int64) float64 {
	switch dt := b.b.DType; {
	case dt == ir.I64 && b.i64Bits():
		return math.Float64frombits(uint64(v))
	case dt.IsInt():
		return float64(ir.WrapInt(dt, v))
	case dt == ir.Bool:
		return b2f(v != 0)
	default:
		return tensor.Round(dt, intToFloat(v)) // through f32, as the CUDA stores
	}
}

// from is the element b stores for the value x of type t: an integer type
// wraps, a float converts as cvt.rzi, a bool is 0 or 1.
func (b *buffer) from(t ir.DType, x float64) float64 {
	dt := b.b.DType
	switch {
	case t.IsInt():
		return b.fromInt(int64(x))
	case dt.IsInt() && t.IsFloat():
		return b.fromInt(cvtInt(dt, x))
	case dt.IsInt(): // a bool
		return b.fromInt(int64(x))
	}
	return tensor.Round(dt, x)
}

// conv converts the elements of src, as stored, to those dst stores.
func conv(src, dst *buffer) func(float64) float64 {
	if st := src.b.DType; st.IsInt() {
		return func(x float64) float64 { return dst.fromInt(src.readInt(x)) }
	}
	t := src.b.DType.Compute()
	return func(x float64) float64 { return dst.from(t, x) }
}
