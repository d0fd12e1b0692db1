package fuzz

import (
	"fmt"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// builder turns a Prog into a tl program. vars[0] is bx; vars[d] the index
// of the loop at depth d.
type builder struct {
	p    *Prog
	f    *tl.Func
	k    *tl.Block
	rows tl.Expr
	ts   []*tl.Tensor
	vars []tl.Expr
}

// Func builds p with the tl API (each op records a line of this file).
func (p *Prog) Func() (f *tl.Func, err error) {
	defer func() { // a description that tl cannot take is reported, not a crash
		if r := recover(); r != nil {
			err = fmt.Errorf("tl panicked building the program: %v", r)
		}
	}()
	b := &builder{p: p, f: tl.NewFunc(fmt.Sprintf("fuzz_%d", p.Seed))}
	b.rows = tl.Int(p.Rows)
	tiles := any(p.Blocks)
	if p.SymRows {
		b.rows = b.f.Sym("R")
		tiles = tl.CeilDiv(b.rows, p.BM)
	}
	grid := tiles
	if p.Spread > 0 {
		grid = p.Spread
	}
	b.ts = make([]*tl.Tensor, len(p.Bufs))
	for i, d := range p.Bufs {
		if d.Scope.global() {
			b.ts[i] = b.param(d)
		}
	}
	b.f.Kernel(tl.Grid(grid), p.Threads, func(k *tl.Block) {
		b.k = k
		if p.SplitN {
			k.SplitN()
		}
		if p.WS {
			k.WarpSpecialize()
		}
		bx, _, _ := k.Idx()
		b.vars = []tl.Expr{bx}
		if x, ok := p.rowVarInput(); ok {
			zeros := make([]any, len(p.Bufs[x].Shape))
			for i := range zeros {
				zeros[i] = 0
			}
			zero := tl.Min(tl.Max(tl.Cast(b.ts[x].At(zeros...), tl.I32), 0), 0) // inputs lie in ±[1/4, 2]
			b.vars[0] = k.Let(zero.Add(bx))
		}
		for i, d := range p.Bufs {
			if !d.Scope.global() {
				b.ts[i] = b.alloc(d)
			}
		}
		if p.UnboundSym {
			k.If(b.f.Sym("Q").Ge(0), func() { b.ops(p.Body) })
			return
		}
		if p.Spread > 0 {
			k.Spread(tiles, func(t tl.Expr) {
				b.vars[0] = t
				b.ops(p.Body)
			})
			return
		}
		if p.Repeat > 0 {
			k.Serial(p.Repeat, func(tl.Expr) { b.ops(p.Body) })
			return
		}
		b.ops(p.Body)
	})
	return b.f, nil
}

// rowVarInput is the input RowVar reads (the first), if p has RowVar and
// an input.
func (p *Prog) rowVarInput() (int, bool) {
	if !p.RowVar || p.Spread > 0 || p.UnboundSym {
		return 0, false
	}
	for i, d := range p.Bufs {
		if d.Scope == In {
			return i, true
		}
	}
	return 0, false
}

func (b *builder) param(d Buf) *tl.Tensor {
	shape := make([]any, len(d.Shape))
	for i, n := range d.Shape {
		shape[i] = n
		if n == RowsDim {
			shape[i] = b.rows
		}
	}
	var t *tl.Tensor
	if d.Scope == In {
		t = b.f.In(d.Name, d.DT, shape...)
	} else {
		t = b.f.Out(d.Name, d.DT, shape...)
	}
	if d.Perm != nil {
		t.WithStrides(b.strides(shape, d.Perm)...)
	}
	return t
}

// strides of a dense tensor whose dims lie in memory in the order perm.
func (b *builder) strides(shape []any, perm []int) []any {
	s := make([]any, len(shape))
	n := tl.Int(1)
	for i := len(perm) - 1; i >= 0; i-- {
		s[perm[i]] = n
		n = n.Mul(shape[perm[i]])
	}
	return s
}

func (b *builder) alloc(d Buf) *tl.Tensor {
	var t *tl.Tensor
	switch d.Scope {
	case Shared:
		t = b.k.Shared(d.DT, d.Shape...)
		if d.Plain {
			t.Swizzled(tl.SwizzleNone)
		}
	case Frag:
		t = b.k.Fragment(d.DT, d.Shape...)
	default:
		t = b.k.Local(d.DT, d.Shape...)
	}
	return t.Named(d.Name)
}

// ref is a tile operand: a whole tile or a region.
func (b *builder) ref(r Ref) any {
	t := b.ts[r.Buf]
	if r.Spec == nil {
		return t
	}
	specs := make([]any, len(r.Spec))
	for i, s := range r.Spec {
		switch {
		case s.Drop && s.Var > 0:
			specs[i] = b.vars[s.Var-1]
		case s.Drop:
			specs[i] = s.Const
		case s.Var > 0:
			specs[i] = tl.Tile(b.vars[s.Var-1], s.N)
		default:
			specs[i] = tl.Range(s.Const, s.N)
		}
	}
	return t.Sub(specs...)
}

func (b *builder) ops(ops []Op) {
	for i := range ops {
		b.op(&ops[i])
	}
}

func (b *builder) op(o *Op) {
	k := b.k
	switch o.Kind {
	case OpCopy:
		switch o.Cache {
		case 1:
			k.Copy(b.ref(o.Src), b.ref(o.Dst), tl.EvictFirst)
		case 2:
			k.Copy(b.ref(o.Src), b.ref(o.Dst), tl.EvictLast)
		default:
			k.Copy(b.ref(o.Src), b.ref(o.Dst))
		}
	case OpAtomic:
		k.AtomicAdd(b.ref(o.Src), b.ref(o.Dst))
	case OpPrefetch:
		k.Prefetch(b.ref(o.Src))
	case OpFill:
		k.Fill(b.ref(o.Dst), o.Value)
	case OpReduce:
		src, dst := b.ts[o.Src.Buf], b.ts[o.Dst.Buf]
		var opts []tl.ReduceOpt
		if o.Accum {
			opts = append(opts, tl.Accumulate)
		}
		switch o.Reduce {
		case ir.ReduceSum:
			k.ReduceSum(src, dst, o.Dim, opts...)
		case ir.ReduceMax:
			k.ReduceMax(src, dst, o.Dim, opts...)
		case ir.ReduceMin:
			k.ReduceMin(src, dst, o.Dim, opts...)
		default:
			k.ReduceAbsMax(src, dst, o.Dim, opts...)
		}
	case OpGemm:
		opts := []tl.GemmOpt{tl.WithPolicy(o.Policy)}
		if o.TransA {
			opts = append(opts, tl.TransA)
		}
		if o.TransB {
			opts = append(opts, tl.TransB)
		}
		if o.Clear {
			opts = append(opts, tl.ClearAccum)
		}
		k.Gemm(b.ref(o.Src), b.ref(o.Dst), b.ref(o.C), opts...)
	case OpParallel:
		dst := b.ts[o.Dst.Buf]
		shape := b.p.Bufs[o.Dst.Buf].Shape
		if o.Ext != nil {
			shape = o.Ext
		}
		k.Parallel(func(iv []tl.Expr) {
			if o.Mask == "" {
				dst.Set(b.expr(o.Expr, iv), toAny(iv)...)
				return
			}
			k.If(maskCond(o, iv), func() { dst.Set(b.expr(o.Expr, iv), toAny(iv)...) })
		}, shape...)
	case OpLoop:
		body := func(i tl.Expr) {
			b.vars = append(b.vars, i)
			b.ops(o.Body)
			b.vars = b.vars[:len(b.vars)-1]
		}
		switch o.Loop {
		case Serial:
			k.Serial(o.N, body)
		case Unrolled:
			k.Unrolled(o.N, body)
		default:
			k.Pipelined(o.N, o.Stages, body)
		}
	case OpDefer:
		k.Defer(func() { b.ops(o.Body) })
	case OpWarpgroup:
		k.Warpgroup(o.N, func() { b.ops(o.Body) })
	case OpIf:
		s := k.If(b.cond(o), func() { b.ops(o.Body) })
		if len(o.Else) > 0 {
			s.Else(func() { b.ops(o.Else) })
		}
	case OpWhile:
		// A counted While: the condition reads a variable the body steps.
		n := k.Var(tl.I32, 0)
		k.While(n.Val().Lt(o.N), func() {
			b.ops(o.Body)
			n.Assign(n.Val().Add(1))
		})
	}
}

func (b *builder) cond(o *Op) tl.Expr {
	v := b.vars[min(o.Var, len(b.vars)-1)]
	switch o.Cmp {
	case "eq":
		return v.Eq(o.Const)
	case "ge":
		return v.Ge(o.Const)
	}
	return v.Lt(o.Const)
}

// maskCond is a Parallel loop's mask: i + Off compared with the last
// variable (with Off alone in a 1-D loop).
func maskCond(o *Op, iv []tl.Expr) tl.Expr {
	x, y := iv[0].Add(o.Off), iv[len(iv)-1]
	if len(iv) == 1 {
		x, y = iv[0], tl.Int(o.Off)
	}
	if o.Mask == "gt" {
		return x.Gt(y)
	}
	return x.Le(y)
}

func toAny(xs []tl.Expr) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// expr builds a Parallel loop's value over the loop's variables iv.
func (b *builder) expr(e *Expr, iv []tl.Expr) tl.Expr {
	arg := func(i int) tl.Expr { return b.expr(e.Args[i], iv) }
	switch e.Op {
	case "load":
		d := b.p.Bufs[e.Buf]
		idx := make([]any, len(e.Map))
		for i, m := range e.Map {
			x := iv[m]
			if e.Off != nil && e.Off[i] != 0 {
				x = x.Add(e.Off[i]).Mod(d.Shape[i])
			}
			idx[i] = x
		}
		return b.ts[e.Buf].At(idx...)
	case "const":
		return tl.Float(e.Val)
	case "index":
		x := b.vars[0]
		for i, m := range e.Mul {
			if i < len(iv) && m != 0 {
				x = x.Add(iv[i].Mul(m))
			}
		}
		x = x.Mod(e.Mod)
		if e.DT == ir.I32 {
			return x
		}
		return tl.Cast(x, tl.F32)
	case "add":
		return arg(0).Add(arg(1))
	case "sub":
		return arg(0).Sub(arg(1))
	case "mul":
		return arg(0).Mul(arg(1))
	case "max":
		return tl.Max(arg(0), arg(1))
	case "min":
		return tl.Min(arg(0), arg(1))
	case "neg":
		return arg(0).Neg()
	case "abs":
		return tl.Abs(arg(0))
	case "exp2": // clamped: no storage type overflows
		return tl.Exp2(tl.Min(arg(0), 4))
	case "tanh":
		return tl.Tanh(arg(0))
	case "erf":
		return tl.Erf(arg(0))
	case "sigmoid":
		return tl.Sigmoid(arg(0))
	case "log1p": // of a magnitude: in its domain
		return tl.Log1p(tl.Abs(arg(0)))
	case "expm1": // clamped, as exp2
		return tl.Expm1(tl.Min(arg(0), 4))
	case "pow": // of a clamped magnitude: in its domain, bounded
		return tl.Pow(tl.Min(tl.Abs(arg(0)), 4), 2.5)
	case "sin":
		return tl.Sin(arg(0))
	case "cos":
		return tl.Cos(arg(0))
	case "cast":
		return tl.Cast(arg(0), e.DT)
	case "select":
		return tl.Select(arg(0).Gt(arg(1)), arg(2), arg(3))
	}
	panic("fuzz: unknown expression op " + e.Op)
}
