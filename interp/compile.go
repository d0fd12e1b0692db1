package interp

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// compiler turns the IR into Go closures once, so each block runs without
// re-walking the tree.
type compiler struct {
	f        *ir.Func
	slot     map[*ir.Var]int
	nslots   int
	buf      map[*ir.Buffer]int
	bufs     []*buffer
	syms     map[*ir.Var]int
	err      error
	atomicMu sync.Mutex
	halt     atomic.Pointer[error] // the reason to stop, once set (guard.go)
	coop     *coop                 // a cooperative kernel's schedule, guarded by atomicMu
}

type (
	eval func(*state) float64
	exec func(*state)
)

func (c *compiler) prepare(args []*tensor.Tensor, syms map[*ir.Var]int) {
	c.syms = syms
	for v := range syms {
		c.varSlot(v)
	}
	for _, v := range c.f.Kernel.Idx {
		c.varSlot(v)
	}
	for i, p := range c.f.Params {
		t := args[i]
		c.buf[p] = len(c.bufs)
		c.bufs = append(c.bufs, &buffer{b: p, shape: t.Shape, strides: t.Strides, global: t.Data})
	}
	nlocal, elems := 0, 0
	for _, b := range c.f.Kernel.Allocs {
		shape, _ := b.StaticShape()
		c.buf[b] = len(c.bufs)
		c.bufs = append(c.bufs, &buffer{b: b, shape: shape, strides: tensor.RowMajor(shape), local: nlocal, size: b.NumElems()})
		nlocal++
		if elems += max(b.NumElems(), 0); elems > MaxOnChipElems || elems < 0 {
			c.errorf("interp: %s: the kernel's tiles take more than %d elements a block, more than the interpreter holds (verified against larger limits than a GPU's?)", c.f.Name, MaxOnChipElems)
			return
		}
	}
}

// MaxOnChipElems bounds the elements of a block's tiles the interpreter
// allocates for each of its workers: 16 Mi float64s (128 MiB), hundreds of
// times the shared memory and registers of any GPU's block.
const MaxOnChipElems = 1 << 24

// symValues is called by newState to load symbolic sizes into their slots.
func (c *compiler) varSlot(v *ir.Var) int {
	if s, ok := c.slot[v]; ok {
		return s
	}
	c.slot[v] = c.nslots
	c.nslots++
	return c.nslots - 1
}

func (c *compiler) errorf(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// f32 rounds an f32 result, so interpreted arithmetic matches the GPU's.
func f32(x float64) float64 { return float64(float32(x)) }

func (c *compiler) expr(e ir.Expr) eval {
	switch e := e.(type) {
	case *ir.Const:
		v := e.F
		if !e.T.IsFloat() {
			v = float64(ir.WrapInt(e.T, e.I))
		}
		return func(*state) float64 { return v }
	case *ir.Var:
		s, ok := c.slot[e]
		if !ok {
			c.errorf("variable %s is not bound", e.Name)
			return func(*state) float64 { return 0 }
		}
		return func(st *state) float64 { return st.vars[s] }
	case nil:
		c.errorf("interp: missing expression")
		return func(*state) float64 { return 0 }
	}
	if e.Type().IsInt() { // exact, in int64 (ints.go)
		iv := c.iexpr(e)
		return func(st *state) float64 { return float64(iv(st)) }
	}
	switch e := e.(type) {
	case *ir.Cast:
		if xt := e.X.Type(); xt.IsInt() {
			iv, t := c.iexpr(e.X), e.T
			if t == ir.Bool {
				return func(st *state) float64 { return b2f(iv(st) != 0) }
			}
			return func(st *state) float64 { return tensor.Round(t, intToFloat(iv(st))) }
		}
		x, t := c.expr(e.X), e.T
		return func(st *state) float64 { return tensor.Round(t, x(st)) }
	case *ir.Select:
		cond, x, y := c.expr(e.Cond), c.asFloat(e.X), c.asFloat(e.Y)
		return func(st *state) float64 {
			if cond(st) != 0 {
				return x(st)
			}
			return y(st)
		}
	case *ir.Unary:
		return c.unary(e)
	case *ir.Binary:
		return c.binary(e)
	case *ir.Load:
		return c.load(e)
	}
	c.errorf("interp: unknown expression %T", e)
	return func(*state) float64 { return 0 }
}

// asFloat compiles an operand of float arithmetic: an integer converts to
// f32 first, as C converts it (ints.go).
func (c *compiler) asFloat(e ir.Expr) eval {
	if e != nil && e.Type().IsInt() {
		iv := c.iexpr(e)
		return func(st *state) float64 { return intToFloat(iv(st)) }
	}
	return c.expr(e)
}

func (c *compiler) unary(e *ir.Unary) eval {
	x := c.asFloat(e.X)
	var fn func(float64) float64
	switch e.Op {
	case ir.Neg:
		fn = func(v float64) float64 { return -v }
	case ir.Not:
		fn = func(v float64) float64 { return b2f(v == 0) }
	case ir.Abs:
		fn = math.Abs
	case ir.Exp:
		fn = math.Exp
	case ir.Exp2:
		fn = math.Exp2
	case ir.Log:
		fn = math.Log
	case ir.Log2:
		fn = math.Log2
	case ir.Sqrt:
		fn = math.Sqrt
	case ir.Rsqrt:
		fn = func(v float64) float64 { return 1 / math.Sqrt(v) }
	case ir.Tanh:
		fn = math.Tanh
	case ir.Sigmoid:
		fn = func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	case ir.Erf:
		fn = math.Erf
	case ir.Log1p:
		fn = math.Log1p
	case ir.Expm1:
		fn = math.Expm1
	case ir.Sin:
		fn = math.Sin
	case ir.Cos:
		fn = math.Cos
	default:
		c.errorf("interp: unknown operator %d", e.Op)
		return func(*state) float64 { return 0 }
	}
	if e.T == ir.F32 {
		return func(st *state) float64 { return f32(fn(x(st))) }
	}
	return func(st *state) float64 { return fn(x(st)) }
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// fmax and fmin follow CUDA's fmaxf/fminf: a NaN operand loses.
func fmax(a, b float64) float64 {
	if a != a || b > a {
		return b
	}
	return a
}

func fmin(a, b float64) float64 {
	if a != a || b < a {
		return b
	}
	return a
}

// binary compiles float arithmetic, comparisons and logic; integer
// arithmetic is ibinary's (ints.go).
func (c *compiler) binary(e *ir.Binary) eval {
	if e.Op.IsCompare() && e.X.Type().IsInt() && e.Y.Type().IsInt() {
		return c.icompare(e)
	}
	x, y := c.asFloat(e.X), c.asFloat(e.Y)
	var fn func(a, b float64) float64
	switch e.Op {
	case ir.Add:
		fn = func(a, b float64) float64 { return a + b }
	case ir.Sub:
		fn = func(a, b float64) float64 { return a - b }
	case ir.Mul:
		fn = func(a, b float64) float64 { return a * b }
	case ir.Div:
		fn = func(a, b float64) float64 { return a / b }
	case ir.Pow:
		fn = math.Pow
	case ir.Min:
		fn = fmin
	case ir.Max:
		fn = fmax
	case ir.Lt:
		fn = func(a, b float64) float64 { return b2f(a < b) }
	case ir.Le:
		fn = func(a, b float64) float64 { return b2f(a <= b) }
	case ir.Gt:
		fn = func(a, b float64) float64 { return b2f(a > b) }
	case ir.Ge:
		fn = func(a, b float64) float64 { return b2f(a >= b) }
	case ir.Eq:
		fn = func(a, b float64) float64 { return b2f(a == b) }
	case ir.Ne:
		fn = func(a, b float64) float64 { return b2f(a != b) }
	case ir.And:
		return func(st *state) float64 { return b2f(x(st) != 0 && y(st) != 0) }
	case ir.Or:
		return func(st *state) float64 { return b2f(x(st) != 0 || y(st) != 0) }
	default:
		c.errorf("interp: %s on %s operands", e.Op, e.T)
		return func(*state) float64 { return 0 }
	}
	if e.T == ir.F32 {
		return func(st *state) float64 { return f32(fn(x(st), y(st))) }
	}
	return func(st *state) float64 { return fn(x(st), y(st)) }
}

// icompare compares two integers exactly.
func (c *compiler) icompare(e *ir.Binary) eval {
	x, y := c.iexpr(e.X), c.iexpr(e.Y)
	var fn func(a, b int64) bool
	switch e.Op {
	case ir.Lt:
		fn = func(a, b int64) bool { return a < b }
	case ir.Le:
		fn = func(a, b int64) bool { return a <= b }
	case ir.Gt:
		fn = func(a, b int64) bool { return a > b }
	case ir.Ge:
		fn = func(a, b int64) bool { return a >= b }
	case ir.Eq:
		fn = func(a, b int64) bool { return a == b }
	default:
		fn = func(a, b int64) bool { return a != b }
	}
	return func(st *state) float64 { return b2f(fn(x(st), y(st))) }
}

// addr compiles the element offset of idx in b; ok is false when out of
// bounds, which the caller reports or masks.
func (c *compiler) addr(b *buffer, idx []ir.Expr) func(*state) (int, bool) {
	fns := make([]eval, len(idx))
	for i, x := range idx {
		fns[i] = c.expr(x)
	}
	return func(st *state) (int, bool) {
		off := 0
		for i, fn := range fns {
			v := int(fn(st))
			if v < 0 || v >= b.shape[i] {
				return 0, false
			}
			off += v * b.strides[i]
		}
		return off, true
	}
}

func (st *state) data(b *buffer) []float64 {
	if b.global != nil {
		return b.global
	}
	return st.mem[b.local]
}

func (c *compiler) load(e *ir.Load) eval {
	b := c.bufs[c.buf[e.Buf]]
	at := c.addr(b, e.Idx)
	return func(st *state) float64 {
		off, ok := at(st)
		if !ok {
			st.failIdx(e.Buf, e.Idx, c, "read")
			return 0
		}
		return b.readFloat(st.data(b)[off])
	}
}

func (st *state) failIdx(b *ir.Buffer, idx []ir.Expr, c *compiler, what string) {
	if st.err != nil {
		return
	}
	vals := make([]int, len(idx))
	for i, x := range idx {
		vals[i] = int(c.expr(x)(st))
	}
	st.err = fmt.Errorf("%s of %s%v is out of bounds (shape %v)", what, b.Name, vals, c.bufs[c.buf[b]].shape)
}
