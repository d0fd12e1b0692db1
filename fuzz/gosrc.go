package fuzz

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tilego/tilego/ir"
)

// GoSource prints p as a Go function that builds the same program with tl
// (the reproducer of a finding).
func (p *Prog) GoSource() string {
	w := &goWriter{p: p}
	w.line("// Fuzz%d builds the program of seed %d (tilego fuzz).", p.Seed, p.Seed)
	w.line("func Fuzz%d() *tl.Func {", p.Seed)
	w.depth++
	w.line("f := tl.NewFunc(%q)", fmt.Sprintf("fuzz_%d", p.Seed))
	rows, grid := strconv.Itoa(p.Rows), strconv.Itoa(p.Blocks)
	if p.SymRows {
		w.line("R := f.Sym(\"R\") // %d at the run", p.Rows)
		rows, grid = "R", fmt.Sprintf("tl.CeilDiv(R, %d)", p.BM)
	}
	for _, b := range p.Bufs {
		if !b.Scope.global() {
			continue
		}
		var dims []string
		for _, d := range b.Shape {
			if d == RowsDim {
				dims = append(dims, rows)
			} else {
				dims = append(dims, strconv.Itoa(d))
			}
		}
		ctor := map[Scope]string{In: "In", Out: "Out"}[b.Scope]
		s := fmt.Sprintf("%s := f.%s(%q, %s, %s)", b.Name, ctor, b.Name, dtName(b.DT), strings.Join(dims, ", "))
		if b.Perm != nil {
			s += fmt.Sprintf(".WithStrides(%s)", strings.Join(permStrides(dims, b.Perm), ", "))
		}
		if b.Accum {
			s += " // accumulated into: starts from random values"
		}
		w.line("%s", s)
	}
	tiles := grid
	if p.Spread > 0 {
		grid = strconv.Itoa(p.Spread)
	}
	w.line("f.Kernel(tl.Grid(%s), %d, func(k *tl.Block) {", grid, p.Threads)
	w.depth++
	if p.SplitN {
		w.line("k.SplitN()")
	}
	if p.WS {
		w.line("k.WarpSpecialize()")
	}
	w.line("bx, _, _ := k.Idx()")
	w.line("_ = bx")
	w.vars = []string{"bx"}
	if x, ok := p.rowVarInput(); ok {
		zeros := strings.TrimSuffix(strings.Repeat("0, ", len(p.Bufs[x].Shape)), ", ")
		w.line("row := k.Let(tl.Min(tl.Max(tl.Cast(%s.At(%s), tl.I32), 0), 0).Add(bx)) // bx, through an input read", p.Bufs[x].Name, zeros)
		w.vars[0] = "row"
	}
	for _, b := range p.Bufs {
		if b.Scope.global() {
			continue
		}
		ctor := map[Scope]string{Shared: "Shared", Frag: "Fragment", Local: "Local"}[b.Scope]
		s := fmt.Sprintf("%s := k.%s(%s)", b.Name, ctor, strings.Join(append([]string{dtName(b.DT)}, strings.Fields(strings.ReplaceAll(ints(b.Shape), ",", ""))...), ", "))
		if b.Plain {
			s += ".Swizzled(tl.SwizzleNone)"
		}
		w.line("%s.Named(%q)", s, b.Name)
	}
	if p.UnboundSym {
		w.line("k.If(f.Sym(\"Q\").Ge(0), func() { // Q: a size no parameter binds")
		w.block(p.Body)
		w.line("})")
	} else if p.Spread > 0 {
		w.line("k.Spread(%s, func(t tl.Expr) {", tiles)
		w.vars[0] = "t"
		w.block(p.Body)
		w.line("})")
	} else {
		if p.Repeat > 0 {
			w.line("k.Serial(%d, func(tl.Expr) {", p.Repeat)
			w.block(p.Body)
			w.line("})")
		} else {
			w.ops(p.Body)
		}
	}
	w.depth--
	w.line("})")
	w.line("return f")
	w.depth--
	w.line("}")
	return useTiles(w.b.String(), p.Bufs)
}

// useTiles adds "_ = name" after the declaration of every on-chip tile the
// body never names (the shrinker may leave one), so the reproducer compiles.
func useTiles(src string, bufs []Buf) string {
	lines := strings.Split(src, "\n")
	var out []string
	for _, l := range lines {
		out = append(out, l)
		for _, b := range bufs {
			decl := b.Name + " := k."
			if b.Scope.global() || !strings.HasPrefix(strings.TrimSpace(l), decl) {
				continue
			}
			if len(regexp.MustCompile(`(^|[^"\w])`+b.Name+`\b($|[^"])`).FindAllStringIndex(src, 2)) == 1 { // the declaration alone (Named's string is quoted)
				out = append(out, l[:len(l)-len(strings.TrimLeft(l, "\t"))]+"_ = "+b.Name)
			}
		}
	}
	return strings.Join(out, "\n")
}

type goWriter struct {
	p     *Prog
	b     strings.Builder
	depth int
	vars  []string
}

func (w *goWriter) line(format string, args ...any) {
	w.b.WriteString(strings.Repeat("\t", w.depth))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func dtName(dt ir.DType) string {
	return map[ir.DType]string{ir.F32: "tl.F32", ir.F16: "tl.F16", ir.BF16: "tl.BF16", ir.F8E4M3: "tl.F8E4M3",
		ir.F8E5M2: "tl.F8E5M2", ir.I32: "tl.I32", ir.I64: "tl.I64", ir.Bool: "tl.Bool"}[dt]
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// permStrides are the strides of a dense tensor of dims laid out in the
// order perm, as Go expressions.
func permStrides(dims []string, perm []int) []string {
	s := make([]string, len(dims))
	n := "1"
	for i := len(perm) - 1; i >= 0; i-- {
		s[perm[i]] = n
		if n == "1" {
			n = dims[perm[i]]
		} else {
			n = fmt.Sprintf("tl.Int(%s).Mul(%s)", n, dims[perm[i]])
		}
	}
	return s
}

func (w *goWriter) ref(r Ref) string {
	b := w.p.Bufs[r.Buf]
	if r.Spec == nil {
		return b.Name
	}
	specs := make([]string, len(r.Spec))
	for i, s := range r.Spec {
		switch {
		case s.Drop && s.Var > 0:
			specs[i] = w.vars[s.Var-1]
		case s.Drop:
			specs[i] = strconv.Itoa(s.Const)
		case s.Var > 0:
			specs[i] = fmt.Sprintf("tl.Tile(%s, %d)", w.vars[s.Var-1], s.N)
		default:
			specs[i] = fmt.Sprintf("tl.Range(%d, %d)", s.Const, s.N)
		}
	}
	return fmt.Sprintf("%s.Sub(%s)", b.Name, strings.Join(specs, ", "))
}

func (w *goWriter) ops(ops []Op) {
	for i := range ops {
		w.op(&ops[i])
	}
}

func goFloat(v float64) string {
	switch {
	case v > 1e308:
		return "math.Inf(1)"
	case v < -1e308:
		return "math.Inf(-1)"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (w *goWriter) op(o *Op) {
	switch o.Kind {
	case OpCopy:
		hint := [...]string{"", ", tl.EvictFirst", ", tl.EvictLast"}[o.Cache]
		w.line("k.Copy(%s, %s%s)", w.ref(o.Src), w.ref(o.Dst), hint)
	case OpAtomic:
		w.line("k.AtomicAdd(%s, %s)", w.ref(o.Src), w.ref(o.Dst))
	case OpPrefetch:
		w.line("k.Prefetch(%s)", w.ref(o.Src))
	case OpFill:
		w.line("k.Fill(%s, %s)", w.ref(o.Dst), goFloat(o.Value))
	case OpReduce:
		name := map[ir.ReduceKind]string{ir.ReduceSum: "ReduceSum", ir.ReduceMax: "ReduceMax", ir.ReduceMin: "ReduceMin", ir.ReduceAbsMax: "ReduceAbsMax"}[o.Reduce]
		acc := ""
		if o.Accum {
			acc = ", tl.Accumulate"
		}
		w.line("k.%s(%s, %s, %d%s)", name, w.ref(o.Src), w.ref(o.Dst), o.Dim, acc)
	case OpGemm:
		opts := []string{"tl.WithPolicy(tl." + map[ir.Policy]string{ir.Square: "Square", ir.FullRow: "FullRow", ir.FullCol: "FullCol"}[o.Policy] + ")"}
		if o.TransA {
			opts = append(opts, "tl.TransA")
		}
		if o.TransB {
			opts = append(opts, "tl.TransB")
		}
		if o.Clear {
			opts = append(opts, "tl.ClearAccum")
		}
		w.line("k.Gemm(%s, %s, %s, %s)", w.ref(o.Src), w.ref(o.Dst), w.ref(o.C), strings.Join(opts, ", "))
	case OpParallel:
		d := w.p.Bufs[o.Dst.Buf]
		iv := []string{"i", "j"}[:len(d.Shape)]
		w.line("k.Parallel(func(%s tl.Expr) {", strings.Join(iv, ", "))
		w.depth++
		set := fmt.Sprintf("%s.Set(%s, %s)", d.Name, w.expr(o.Expr, iv), strings.Join(iv, ", "))
		if o.Mask != "" {
			cmp := map[string]string{"le": "Le", "gt": "Gt"}[o.Mask]
			x, y := fmt.Sprintf("%s.Add(%d)", iv[0], o.Off), iv[len(iv)-1]
			if len(iv) == 1 {
				x, y = iv[0], strconv.Itoa(o.Off)
			}
			w.line("k.If(%s.%s(%s), func() { %s })", x, cmp, y, set)
		} else {
			w.line("%s", set)
		}
		w.depth--
		ext := d.Shape
		if o.Ext != nil {
			ext = o.Ext
		}
		w.line("}, %s)", ints(ext))
	case OpLoop:
		v := fmt.Sprintf("i%d", len(w.vars))
		switch o.Loop {
		case Serial:
			w.line("k.Serial(%d, func(%s tl.Expr) {", o.N, v)
		case Unrolled:
			w.line("k.Unrolled(%d, func(%s tl.Expr) {", o.N, v)
		default:
			w.line("k.Pipelined(%d, %d, func(%s tl.Expr) {", o.N, o.Stages, v)
		}
		w.vars = append(w.vars, v)
		w.block(o.Body)
		w.vars = w.vars[:len(w.vars)-1]
		w.line("})")
	case OpWarpgroup:
		w.line("k.Warpgroup(%d, func() {", o.N)
		w.block(o.Body)
		w.line("})")
	case OpDefer:
		w.line("k.Defer(func() {")
		w.block(o.Body)
		w.line("})")
	case OpIf:
		v := w.vars[min(o.Var, len(w.vars)-1)]
		cmp := map[string]string{"lt": "Lt", "eq": "Eq", "ge": "Ge"}[o.Cmp]
		if cmp == "" {
			cmp = "Lt"
		}
		w.line("k.If(%s.%s(%d), func() {", v, cmp, o.Const)
		w.block(o.Body)
		if len(o.Else) > 0 {
			w.line("}).Else(func() {")
			w.block(o.Else)
		}
		w.line("})")
	case OpWhile:
		w.line("{")
		w.depth++
		w.line("n := k.Var(tl.I32, 0)")
		w.line("k.While(n.Val().Lt(%d), func() {", o.N)
		w.block(o.Body)
		w.depth++
		w.line("n.Assign(n.Val().Add(1))")
		w.depth--
		w.line("})")
		w.depth--
		w.line("}")
	}
}

func (w *goWriter) block(ops []Op) {
	w.depth++
	w.ops(ops)
	w.depth--
}

func (w *goWriter) expr(e *Expr, iv []string) string {
	arg := func(i int) string { return w.expr(e.Args[i], iv) }
	switch e.Op {
	case "load":
		d := w.p.Bufs[e.Buf]
		idx := make([]string, len(e.Map))
		for i, m := range e.Map {
			idx[i] = iv[m]
			if e.Off != nil && e.Off[i] != 0 {
				idx[i] = fmt.Sprintf("%s.Add(%d).Mod(%d)", iv[m], e.Off[i], d.Shape[i])
			}
		}
		return fmt.Sprintf("%s.At(%s)", d.Name, strings.Join(idx, ", "))
	case "const":
		return fmt.Sprintf("tl.Float(%s)", goFloat(e.Val))
	case "index":
		x := w.vars[0]
		for i, m := range e.Mul {
			if i < len(iv) && m != 0 {
				x += fmt.Sprintf(".Add(%s.Mul(%d))", iv[i], m)
			}
		}
		x += fmt.Sprintf(".Mod(%d)", e.Mod)
		if e.DT == ir.I32 {
			return x
		}
		return fmt.Sprintf("tl.Cast(%s, tl.F32)", x)
	case "add", "sub", "mul":
		m := map[string]string{"add": "Add", "sub": "Sub", "mul": "Mul"}[e.Op]
		return fmt.Sprintf("%s.%s(%s)", arg(0), m, arg(1))
	case "max", "min":
		m := map[string]string{"max": "Max", "min": "Min"}[e.Op]
		return fmt.Sprintf("tl.%s(%s, %s)", m, arg(0), arg(1))
	case "neg":
		return arg(0) + ".Neg()"
	case "abs":
		return fmt.Sprintf("tl.Abs(%s)", arg(0))
	case "exp2":
		return fmt.Sprintf("tl.Exp2(tl.Min(%s, 4))", arg(0))
	case "tanh", "erf", "sigmoid", "sin", "cos":
		m := map[string]string{"tanh": "Tanh", "erf": "Erf", "sigmoid": "Sigmoid", "sin": "Sin", "cos": "Cos"}[e.Op]
		return fmt.Sprintf("tl.%s(%s)", m, arg(0))
	case "log1p":
		return fmt.Sprintf("tl.Log1p(tl.Abs(%s))", arg(0))
	case "pow":
		return fmt.Sprintf("tl.Pow(tl.Min(tl.Abs(%s), 4), 2.5)", arg(0))
	case "expm1":
		return fmt.Sprintf("tl.Expm1(tl.Min(%s, 4))", arg(0))
	case "cast":
		return fmt.Sprintf("tl.Cast(%s, %s)", arg(0), dtName(e.DT))
	case "select":
		return fmt.Sprintf("tl.Select(%s.Gt(%s), %s, %s)", arg(0), arg(1), arg(2), arg(3))
	}
	return "?" + e.Op
}
