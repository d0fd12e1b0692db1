package cudagen

import (
	"fmt"
	"math"
	"strings"

	"github.com/tilego/tilego/compiler/infer"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

func (e *emitter) expr(x ir.Expr) string {
	switch x := x.(type) {
	case *ir.Const:
		switch {
		case x.T == ir.Bool:
			return fmt.Sprint(x.I != 0)
		case x.T == ir.I64:
			return fmt.Sprintf("%dLL", x.I)
		case x.T.IsInt():
			return fmt.Sprint(x.I)
		case math.IsInf(x.F, 1):
			return "tl::inf()"
		case math.IsInf(x.F, -1):
			return "(-tl::inf())"
		case math.IsNaN(x.F):
			return "__int_as_float(0x7fffffff)"
		}
		s := fmt.Sprintf("%.9g", x.F)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s + "f"
	case *ir.Var:
		return x.Name
	case *ir.Binary:
		return e.binary(x)
	case *ir.Unary:
		a := e.expr(x.X)
		isF := x.T.IsFloat()
		switch x.Op {
		case ir.Neg:
			if strings.HasPrefix(a, "-") { // "--3.0f" would be a decrement
				return "(- " + a + ")"
			}
			return "(-" + a + ")"
		case ir.Not:
			return "(!" + a + ")"
		case ir.Abs:
			if isF {
				return "fabsf(" + a + ")"
			}
			return "abs(" + a + ")"
		case ir.Exp:
			return "expf(" + a + ")"
		case ir.Exp2:
			return "tl::exp2f_(" + a + ")"
		case ir.Log:
			return "logf(" + a + ")"
		case ir.Log2:
			return "tl::log2f_(" + a + ")"
		case ir.Sqrt:
			return "sqrtf(" + a + ")"
		case ir.Rsqrt:
			return "rsqrtf(" + a + ")"
		case ir.Tanh:
			return "tl::tanh_(" + a + ")"
		case ir.Sigmoid:
			return "tl::sigmoid_(" + a + ")"
		case ir.Erf:
			return "tl::erf_(" + a + ")"
		case ir.Log1p:
			return "tl::log1p_(" + a + ")"
		case ir.Expm1:
			return "tl::expm1_(" + a + ")"
		case ir.Sin:
			return "tl::sin_(" + a + ")"
		case ir.Cos:
			return "tl::cos_(" + a + ")"
		}
	case *ir.Cast:
		a := e.expr(x.X)
		switch x.T {
		case ir.F16, ir.BF16, ir.F8E4M3, ir.F8E5M2: // round, then compute on in f32
			return load(x.T, e.store(x.T, a))
		}
		return "((" + ctype(x.T) + ")(" + a + "))"
	case *ir.Select:
		return fmt.Sprintf("(%s ? %s : %s)", e.expr(x.Cond), e.expr(x.X), e.expr(x.Y))
	case *ir.Load:
		if x.Buf.Scope == ir.Fragment {
			return load(x.Buf.DType, fragGet(x.Buf, e.fragIndex(x.Buf, x.Idx)))
		}
		if e.par != nil {
			if r, ok := e.par.vecs[x]; ok {
				return vecElem(x, r)
			}
		}
		return load(x.Buf.DType, e.ref(x.Buf, x.Idx))
	}
	e.failHere("the CUDA target cannot lower an expression %T", x)
	return "0"
}

// value is a stored value's C expression: its integer additions,
// subtractions and products that may overflow (ir.IntRanges) wrap (two's
// complement, as the interpreter computes them), where a plain C
// operation would leave the overflow undefined and the compiler free to
// fold it to anything. Indices stay plain C: one that overflows addresses
// outside its tile anyway.
func (e *emitter) value(x ir.Expr) string {
	saved := e.wrapInts
	e.wrapInts = true
	defer func() { e.wrapInts = saved }()
	return e.expr(x)
}

// intRanges bounds the kernel's integer expressions, worked out once.
func (e *emitter) intRanges() *ir.IntRanges {
	if e.ranges == nil {
		e.ranges = ir.NewIntRanges(e.c.f)
	}
	return e.ranges
}

func (e *emitter) binary(x *ir.Binary) string {
	a, b := e.expr(x.X), e.expr(x.Y)
	if x.Op == ir.Pow { // f32 whatever the operands
		return "tl::pow_((float)(" + a + "), (float)(" + b + "))"
	}
	isF := x.X.Type().IsFloat() || x.Y.Type().IsFloat()
	if isF {
		// Mixed int/float operands compute in f32, as the interpreter does.
		if !x.X.Type().IsFloat() {
			a = "(float)(" + a + ")"
		}
		if !x.Y.Type().IsFloat() {
			b = "(float)(" + b + ")"
		}
	}
	if e.wrapInts && !isF && (x.Op == ir.Add || x.Op == ir.Sub || x.Op == ir.Mul) && !e.intRanges().Fits(x) {
		u := map[ir.DType]string{ir.I32: "unsigned", ir.I64: "unsigned long long"}[x.T]
		if u != "" { // C leaves signed overflow undefined; the language wraps
			return fmt.Sprintf("((%s)((%s)(%s) %s (%s)(%s)))", ctype(x.T), u, a, x.Op, u, b)
		}
	}
	if r, ok := reciprocal(x); ok {
		return "(" + a + " * " + e.expr(&ir.Const{T: ir.F32, F: r}) + ")"
	}
	switch x.Op {
	case ir.Min:
		if isF {
			return "fminf(" + a + ", " + b + ")"
		}
		return "min(" + a + ", " + b + ")"
	case ir.Max:
		if isF {
			return "fmaxf(" + a + ", " + b + ")"
		}
		return "max(" + a + ", " + b + ")"
	}
	return "(" + a + " " + x.Op.String() + " " + b + ")"
}

// ref is the C lvalue of one element of a buffer.
func (e *emitter) ref(b *ir.Buffer, idx []ir.Expr) string {
	saved := e.wrapInts
	e.wrapInts = false
	defer func() { e.wrapInts = saved }()
	switch b.Scope {
	case ir.Global:
		return fmt.Sprintf("%s[%s]", b.Name, e.globalOffset(b, e.exprs(idx)))
	case ir.Shared:
		return e.sharedRef(b, e.exprs(idx))
	case ir.Local:
		shape, _ := b.StaticShape()
		return fmt.Sprintf("%s[%s]", b.Name, flatIndex(shape, e.exprs(idx)))
	case ir.Fragment:
		return fmt.Sprintf("%s[%s]", b.Name, e.fragIndex(b, idx))
	}
	return "0"
}

// fragIndex is the register of a fragment element accessed in the
// Parallel loop being emitted.
func (e *emitter) fragIndex(b *ir.Buffer, idx []ir.Expr) string {
	saved := e.wrapInts
	e.wrapInts = false
	defer func() { e.wrapInts = saved }()
	if e.par == nil || e.par.drv == nil {
		e.failHere("fragment %s accessed outside a Parallel loop a fragment drives", b.Name)
		return "0"
	}
	keep, ok := infer.AccessKeep(e.par.p, idx)
	if !ok {
		e.fail(errAt("parallel", e.par.p.P, "fragment %s must be indexed by the loop's own variables, each once (got %s)", b.Name, ir.ExprString(&ir.Load{Buf: b, Idx: idx})))
		return "0"
	}
	want := e.par.drv.Project(keep)
	if !want.Equal(e.c.layouts[b]) {
		e.fail(errAt("parallel", e.par.p.P, "fragment %s has layout %s, but this loop visits its elements in layout %s", b.Name, e.c.layouts[b], want))
		return "0"
	}
	return regExpr(e.par.drv.RegMap(keep), "r")
}

func (e *emitter) exprs(xs []ir.Expr) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = e.expr(x)
	}
	return out
}

// regExpr is the C form of a register index map applied to r.
func regExpr(terms []layout.Term, r string) string {
	if len(terms) == 0 {
		return "0"
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = fmt.Sprintf("(%s / %d %% %d) * %d", r, t.Div, t.Mod, t.Mul)
	}
	return strings.Join(parts, " + ")
}

func flatIndex(shape []int, idx []string) string {
	s := ""
	for i, x := range idx {
		if i == 0 {
			s = "(" + x + ")"
			continue
		}
		s = fmt.Sprintf("(%s * %d + %s)", s, shape[i], x)
	}
	if s == "" {
		return "0"
	}
	return s
}

// strides returns a global tensor's element strides as C expressions.
func (e *emitter) strides(b *ir.Buffer) []string {
	n := len(b.Shape)
	out := make([]string, n)
	if b.Strides != nil {
		for i, s := range b.Strides {
			out[i] = e.expr(s)
		}
		return out
	}
	acc := "1"
	for i := n - 1; i >= 0; i-- {
		out[i] = acc
		if c, ok := ir.ConstInt(b.Shape[i]); ok && acc != "" {
			if v, ok2 := atoi(acc); ok2 {
				acc = fmt.Sprint(v * c)
				continue
			}
		}
		acc = fmt.Sprintf("(%s * %s)", acc, e.expr(b.Shape[i]))
	}
	return out
}

func atoi(s string) (int64, bool) {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return v, err == nil && fmt.Sprint(v) == s
}

func (e *emitter) globalOffset(b *ir.Buffer, idx []string) string {
	st := e.strides(b)
	var parts []string
	for i, x := range idx {
		if x == "0" {
			continue
		}
		if e.global[b] {
			x = "(long long)(" + x + ")"
		}
		if st[i] == "1" {
			parts = append(parts, x)
		} else {
			parts = append(parts, x+" * "+st[i])
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " + ")
}

// sharedBase is the address of a shared tile's current stage.
func (e *emitter) sharedBase(b *ir.Buffer) string {
	sb := e.c.smem.bufs[b]
	if sb.stages > 1 {
		st, ok := e.stage[b]
		if !ok {
			e.failHere("multi-buffered tile %s used outside its pipelined loop", b.Name)
		}
		return fmt.Sprintf("(smem + %d + (%s) * %d)", sb.off, st, sb.stageBytes)
	}
	return fmt.Sprintf("(smem + %d)", sb.off)
}

// sharedOffset is the byte offset of element (row, col) in a shared tile.
func (e *emitter) sharedOffset(b *ir.Buffer, row, col string) string {
	sb := e.c.smem.bufs[b]
	return fmt.Sprintf("tl::swz<%d, %d, %d, %d, %d>(%s, %s)", sb.panelW, sb.rows, sb.eb, sb.swzN, sb.swzRep, row, col)
}

// sharedRowCol flattens an index into a shared tile's (row, col) view.
func sharedRowCol(b *ir.Buffer, idx []string) (string, string) {
	shape, _ := b.StaticShape()
	n := len(idx)
	return flatIndex(shape[:n-1], idx[:n-1]), idx[n-1]
}

func (e *emitter) sharedRef(b *ir.Buffer, idx []string) string {
	row, col := sharedRowCol(b, idx)
	return fmt.Sprintf("*(%s*)(%s + %s)", ctype(b.DType), e.sharedBase(b), e.sharedOffset(b, row, col))
}

// sharedReplica is the condition that picks one replica of the fragment
// driving the Parallel loop being emitted, for a store into b, which the
// block shares (shared or global memory); "" where every thread stores.
func (e *emitter) sharedReplica(b *ir.Buffer) string {
	if e.par == nil || e.par.drv == nil || (b.Scope != ir.Shared && b.Scope != ir.Global) {
		return ""
	}
	return firstReplica(e.par.drv)
}

func (e *emitter) storeStmt(s *ir.Store) {
	if s.Buf.Scope == ir.Shared && e.par == nil {
		e.beforeSharedWrite()
	}
	if s.Buf.Scope == ir.Fragment {
		e.line("%s", fragSet(s.Buf, e.fragIndex(s.Buf, s.Idx), e.store(s.Buf.DType, e.value(s.Value))))
		return
	}
	store := fmt.Sprintf("%s = %s;", e.ref(s.Buf, s.Idx), e.store(s.Buf.DType, e.value(s.Value)))
	// A fragment that holds each element in several threads (replicas)
	// drives the loop: one of them stores to memory the block shares, so
	// that no replica reads an element another has already rewritten.
	if rep := e.sharedReplica(s.Buf); rep != "" {
		store = fmt.Sprintf("if (%s) %s", rep, store)
	}
	e.line("%s", store)
	if s.Buf.Scope == ir.Shared && e.par == nil {
		e.written()
	}
}

// reciprocal is 1/c rounded to f32 when x divides a float by a constant c
// whose reciprocal is a normal f32: the division becomes a multiply, within
// 1.5 ulps of the quotient. C must keep x / c an IEEE division, a dozen
// instructions and a reciprocal on the MUFU pipe (a soft cap's s/cap on
// every score cost FlashAttention 40% of its time).
func reciprocal(x *ir.Binary) (float64, bool) {
	c, ok := x.Y.(*ir.Const)
	if x.Op != ir.Div || !ok || !(x.X.Type().IsFloat() || c.T.IsFloat()) {
		return 0, false
	}
	v := c.F
	if !c.T.IsFloat() {
		v = float64(c.I)
	}
	r := float64(float32(1 / float64(float32(v)))) // ±Inf for 0, 0 for ±Inf, NaN for NaN
	if math.IsNaN(r) || math.IsInf(r, 0) || math.Abs(r) < 0x1p-126 {
		return 0, false
	}
	return r, true
}
