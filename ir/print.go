package ir

import (
	"fmt"
	"math"
	"strings"
)

// String prints a whole function in the IR's text form, one op a line.
func (f *Func) String() string {
	var p printer
	p.printf("func %s(", f.Name)
	for i, b := range f.Params {
		if i > 0 {
			p.printf(", ")
		}
		p.printf("%s", paramString(b))
	}
	p.printf(")")
	if len(f.Syms) > 0 {
		names := make([]string, len(f.Syms))
		for i, s := range f.Syms {
			names[i] = s.Name
		}
		p.printf(" sizes(%s)", strings.Join(names, ", "))
	}
	if f.SMs != nil {
		p.printf(" device(%s)", f.SMs.Name)
	}
	p.printf(" {\n")
	if k := f.Kernel; k != nil {
		p.depth++
		grid := make([]string, len(k.Grid))
		idx := make([]string, len(k.Idx))
		for i := range k.Grid {
			grid[i] = ExprString(k.Grid[i])
		}
		for i := range k.Idx {
			idx[i] = k.Idx[i].Name
		}
		p.line("kernel grid(%s) threads(%d) idx(%s)", strings.Join(grid, ", "), k.Threads, strings.Join(idx, ", "))
		if k.Raster != nil {
			order := "row"
			if k.Raster.ColMajor {
				order = "col"
			}
			p.line("rasterize panel(%d) %s", k.Raster.Panel, order)
		}
		hints := []struct {
			on   bool
			text string
		}{
			{k.WarpSpecialize, "producer warpgroup"},
			{k.PingPong, "ping-pong warpgroups"},
			{k.Draw, "spread loops drawn"},
			{k.LateStart > 0, fmt.Sprintf("late start %d cycles", k.LateStart)},
			{k.FirstTilesFirst, "first tiles first"},
			{k.NextEarly, "next kernel early"},
			{k.StartEarly, "starts early"},
			{k.Cooperative, "every block at once"},
			{k.SplitN, "warpgroups split N"},
			{k.Cluster > 1, fmt.Sprintf("clusters of %d", k.Cluster)},
		}
		for _, h := range hints {
			if h.on {
				p.line("%s", h.text)
			}
		}
		for _, b := range k.Allocs {
			sw := ""
			if b.Scope == Shared && b.Swizzle != SwizzleAuto {
				sw = " swizzle(" + b.Swizzle.String() + ")"
			}
			p.line("%s = alloc %s %s%s%s", b.Name, b.Scope, b.DType, shapeString(b.Shape), sw)
		}
		p.stmts(k.Body)
		p.depth--
	}
	p.printf("}\n")
	return p.b.String()
}

func paramString(b *Buffer) string {
	s := fmt.Sprintf("%s %s%s", b.Name, b.DType, shapeString(b.Shape))
	if b.Strides != nil {
		s += " strides" + shapeString(b.Strides)
	}
	if b.Scratch {
		s += " scratch"
	} else if b.Output {
		s += " out"
	}
	return s
}

func shapeString(dims []Expr) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = ExprString(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

type printer struct {
	b     strings.Builder
	depth int
}

func (p *printer) printf(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

func (p *printer) line(format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", p.depth))
	p.printf(format, args...)
	p.b.WriteByte('\n')
}

func (p *printer) block(head string, body []Stmt) {
	p.line("%s {", head)
	p.depth++
	p.stmts(body)
	p.depth--
	p.line("}")
}

func (p *printer) stmts(body []Stmt) {
	for _, s := range body {
		p.stmt(s)
	}
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *Copy:
		hint := ""
		if s.Cache != CacheNormal {
			hint = " " + s.Cache.String()
		}
		p.line("copy %s -> %s%s", RegionString(s.Src), RegionString(s.Dst), hint)
	case *AtomicAdd:
		p.line("atomic_add %s -> %s", RegionString(s.Src), RegionString(s.Dst))
	case *Prefetch:
		p.line("prefetch %s", RegionString(s.Src))
	case *Ticket:
		p.line("ticket %s -> %s", RegionString(s.Counter), RegionString(s.Dst))
	case *Signal:
		p.line("signal %s", RegionString(s.Counter))
	case *WaitCount:
		p.line("wait_count %s >= %s", RegionString(s.Counter), ExprString(s.Min))
	case *Gemm:
		opts := []string{s.Policy.String()}
		if s.TransA {
			opts = append(opts, "transA")
		}
		if s.TransB {
			opts = append(opts, "transB")
		}
		if s.Clear {
			opts = append(opts, "clear")
		}
		p.line("gemm %s, %s -> %s (%s)", RegionString(s.A), RegionString(s.B), RegionString(s.C), strings.Join(opts, ", "))
	case *Fill:
		p.line("fill %s = %s", RegionString(s.Dst), ExprString(s.Value))
	case *Reduce:
		mode := "accumulate"
		if s.Clear {
			mode = "clear"
		}
		p.line("reduce_%s %s dim %d -> %s (%s)", s.Kind, s.Src.Name, s.Dim, s.Dst.Name, mode)
	case *Store:
		p.line("%s = %s", ExprString(&Load{Buf: s.Buf, Idx: s.Idx}), ExprString(s.Value))
	case *Parallel:
		parts := make([]string, len(s.Vars))
		for i, v := range s.Vars {
			parts[i] = fmt.Sprintf("%s < %d", v.Name, s.Extents[i])
		}
		head := "parallel " + strings.Join(parts, ", ")
		if s.SkipOnes {
			head += " skip_ones"
		}
		p.block(head, s.Body)
	case *For:
		head := fmt.Sprintf("for %s in [%s, %s) %s", s.Var.Name, ExprString(s.Start), ExprString(s.Stop), s.Kind)
		if s.Kind == Pipelined {
			head += fmt.Sprintf(" stages(%d)", s.Stages)
		}
		p.block(head, s.Body)
	case *Deferred:
		p.block("deferred", s.Body)
	case *Warpgroup:
		p.block(fmt.Sprintf("warpgroup %d", s.Index), s.Body)
	case *While:
		p.block("while "+ExprString(s.Cond), s.Body)
	case *If:
		p.line("if %s {", ExprString(s.Cond))
		p.depth++
		p.stmts(s.Then)
		p.depth--
		if len(s.Else) > 0 {
			p.line("} else {")
			p.depth++
			p.stmts(s.Else)
			p.depth--
		}
		p.line("}")
	default:
		p.line("<unknown %T>", s)
	}
}

// RegionString prints a region as buf[start:+extent, index, ...].
func RegionString(r Region) string {
	if r.Buf == nil {
		return "<nil>"
	}
	if r.IsWhole() {
		return r.Buf.Name
	}
	parts := make([]string, len(r.Start))
	for i := range r.Start {
		if r.Keep[i] {
			start := ExprString(r.Start[i])
			if prec(r.Start[i]) < precAtom { // (bx * 64):+64, not bx * 64:+64
				start = "(" + start + ")"
			}
			parts[i] = fmt.Sprintf("%s:+%d", start, r.Extent[i])
		} else {
			parts[i] = ExprString(r.Start[i])
		}
	}
	return r.Buf.Name + "[" + strings.Join(parts, ", ") + "]"
}

// Precedences for printing, as in Go: operands bind tighter than unary
// operators, which bind tighter than binary ones.
const (
	precOr    = 1 // ||
	precAnd   = 2 // &&
	precCmp   = 3 // < <= > >= == !=
	precAdd   = 4 // + -
	precMul   = 5 // * / %
	precUnary = 6 // -x !x
	precAtom  = 7 // constants, variables, loads, calls
)

func prec(e Expr) int {
	switch e := e.(type) {
	case *Const:
		if ExprString(e)[0] == '-' { // a negative constant reads like -x
			return precUnary
		}
	case *Binary:
		switch {
		case e.Op == Min || e.Op == Max || e.Op == Pow:
		case e.Op == Or:
			return precOr
		case e.Op == And:
			return precAnd
		case e.Op.IsCompare():
			return precCmp
		case e.Op == Add || e.Op == Sub:
			return precAdd
		default:
			return precMul
		}
	case *Unary:
		if e.Op == Neg || e.Op == Not {
			return precUnary
		}
	}
	return precAtom
}

// operand prints e as an operand of an operator of precedence p, with
// parentheses when e binds less tightly. Binary operators group to the
// left, so a right operand of the same precedence keeps its parentheses:
// a - (b - c); so do comparisons inside comparisons.
func operand(e Expr, p int, right bool) string {
	s := ExprString(e)
	if q := prec(e); q < p || q == p && (right || p == precCmp) {
		return "(" + s + ")"
	}
	return s
}

// ExprString prints an expression in infix form, with only the parentheses
// that precedence needs: (N + 64 - 1) / 64.
func ExprString(e Expr) string {
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *Const:
		switch {
		case e.T == Bool:
			return fmt.Sprint(e.I != 0)
		case e.T.IsInt():
			return fmt.Sprint(e.I)
		case math.IsInf(e.F, 1):
			return "inf"
		case math.IsInf(e.F, -1):
			return "-inf"
		default:
			return fmt.Sprintf("%gf", e.F)
		}
	case *Var:
		return e.Name
	case *Binary:
		if e.Op == Min || e.Op == Max || e.Op == Pow {
			return fmt.Sprintf("%s(%s, %s)", e.Op, ExprString(e.X), ExprString(e.Y))
		}
		q := prec(e)
		return fmt.Sprintf("%s %s %s", operand(e.X, q, false), e.Op, operand(e.Y, q, true))
	case *Unary:
		switch e.Op {
		case Neg:
			return "-" + operand(e.X, precAtom, false)
		case Not:
			return "!" + operand(e.X, precAtom, false)
		}
		return fmt.Sprintf("%s(%s)", e.Op, ExprString(e.X))
	case *Cast:
		return fmt.Sprintf("%s(%s)", e.T, ExprString(e.X))
	case *Select:
		return fmt.Sprintf("select(%s, %s, %s)", ExprString(e.Cond), ExprString(e.X), ExprString(e.Y))
	case *Load:
		parts := make([]string, len(e.Idx))
		for i, x := range e.Idx {
			parts[i] = ExprString(x)
		}
		return e.Buf.Name + "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("<%T>", e)
}
