package ir

import "math"

// IntRanges bounds a kernel's integer expressions from its loops' bounds,
// its grid and its sizes (a size is at least 1 and an i32). Integer
// arithmetic wraps (two's complement) in the language; a backend whose
// language leaves signed overflow undefined (C) emits an addition,
// subtraction or product that Fits as a plain operation, and the others
// as wrapping ones.
type IntRanges struct {
	vars map[*Var]span
	// An on-chip integer tile that only Stores and Fills write holds one of
	// their values: its loads are bounded by theirs (a walk's tile index).
	writes map[*Buffer][]Expr
	opaque map[*Buffer]bool // written otherwise (a copy, a reduction, a ticket)
	busy   map[*Buffer]bool // being bounded: a value that reads its own tile
	loads  map[*Buffer]span // bounds worked out, once the variables are
}

// span is a closed interval of values.
type span struct{ lo, hi int64 }

func typeSpan(t DType) span {
	switch t {
	case Bool:
		return span{0, 1}
	case I32:
		return span{math.MinInt32, math.MaxInt32}
	}
	return span{math.MinInt64, math.MaxInt64}
}

func (s span) within(t DType) bool {
	r := typeSpan(t)
	return s.lo >= r.lo && s.hi <= r.hi
}

// NewIntRanges bounds the variables of f: loop indices by their loops,
// block indices by the grid, sizes by the i32 range.
func NewIntRanges(f *Func) *IntRanges {
	r := &IntRanges{vars: map[*Var]span{}, writes: map[*Buffer][]Expr{}, opaque: map[*Buffer]bool{}, busy: map[*Buffer]bool{}}
	for _, s := range f.Syms {
		r.vars[s] = span{1, math.MaxInt32}
	}
	k := f.Kernel
	if k == nil {
		return r
	}
	Walk(k.Body, func(s Stmt) {
		switch s := s.(type) {
		case *Store:
			r.writes[s.Buf] = append(r.writes[s.Buf], s.Value)
		case *Fill:
			r.writes[s.Dst.Buf] = append(r.writes[s.Dst.Buf], s.Value)
		case *Copy:
			r.opaque[s.Dst.Buf] = true
		case *Ticket:
			r.opaque[s.Dst.Buf] = true
		case *Gemm:
			r.opaque[s.C.Buf] = true
		case *Reduce:
			r.opaque[s.Dst] = true
		}
	})
	for a, v := range k.Idx {
		if a < len(k.Grid) {
			r.vars[v] = span{0, max(0, r.of(k.Grid[a]).hi-1)}
		}
	}
	Walk(k.Body, func(s Stmt) {
		switch s := s.(type) {
		case *For:
			lo, hi := r.of(s.Start).lo, r.of(s.Stop).hi
			r.vars[s.Var] = span{lo, max(lo, hi-1)}
		case *Parallel:
			for i, v := range s.Vars {
				r.vars[v] = span{0, int64(max(0, s.Extents[i]-1))}
			}
		}
	})
	r.loads = map[*Buffer]span{}
	return r
}

// Fits reports whether an addition, subtraction or product's exact value
// lies in its type's range wherever it is evaluated, so that it never
// wraps.
func (r *IntRanges) Fits(b *Binary) bool {
	s, ok := r.exact(b)
	return ok && s.within(b.T)
}

// of bounds e's value (wrapped into its type).
func (r *IntRanges) of(e Expr) span {
	s, ok := r.exact(e)
	if !ok || !s.within(e.Type()) {
		return typeSpan(e.Type())
	}
	return s
}

// exact bounds e's mathematical value from its operands' (wrapped)
// values; false when that overflows an int64 or nothing bounds it.
func (r *IntRanges) exact(e Expr) (span, bool) {
	switch e := e.(type) {
	case *Const:
		if e.T.IsInt() || e.T == Bool {
			return span{e.I, e.I}, true
		}
	case *Var:
		if s, ok := r.vars[e]; ok {
			return s, true
		}
		if e.Kind == SMCount {
			return span{1, 1 << 16}, true
		}
	case *Binary:
		if !e.T.IsInt() {
			if e.Op >= Lt {
				return span{0, 1}, true
			}
			break
		}
		return binarySpan(e.Op, r.of(e.X), r.of(e.Y))
	case *Unary:
		switch e.Op {
		case Not:
			return span{0, 1}, true
		case Neg:
			x := r.of(e.X)
			if x.lo == math.MinInt64 {
				break
			}
			return span{-x.hi, -x.lo}, true
		}
	case *Cast:
		if e.X.Type().IsInt() || e.X.Type() == Bool {
			return r.of(e.X), true
		}
	case *Select:
		x, y := r.of(e.X), r.of(e.Y)
		return span{min(x.lo, y.lo), max(x.hi, y.hi)}, true
	case *Load:
		if s, ok := r.load(e.Buf); ok {
			return s, true
		}
	}
	return typeSpan(e.Type()), true
}

// load bounds the values of an on-chip integer tile by those its Stores
// and Fills write.
func (r *IntRanges) load(b *Buffer) (span, bool) {
	if b.Scope == Global || !b.DType.IsInt() || r.opaque[b] || len(r.writes[b]) == 0 || r.busy[b] {
		return span{}, false
	}
	if s, ok := r.loads[b]; ok {
		return s, true
	}
	r.busy[b] = true
	s := span{math.MaxInt64, math.MinInt64}
	for _, v := range r.writes[b] {
		x := r.of(&Cast{X: v, T: b.DType})
		s = span{min(s.lo, x.lo), max(s.hi, x.hi)}
	}
	r.busy[b] = false
	if r.loads != nil {
		r.loads[b] = s
	}
	return s, true
}

func binarySpan(op BinOp, x, y span) (span, bool) {
	switch op {
	case Add:
		lo, ok1 := AddChecked(x.lo, y.lo)
		hi, ok2 := AddChecked(x.hi, y.hi)
		return span{lo, hi}, ok1 && ok2
	case Sub:
		if y.lo == math.MinInt64 {
			return span{}, false
		}
		lo, ok1 := AddChecked(x.lo, -y.hi)
		hi, ok2 := AddChecked(x.hi, -y.lo)
		return span{lo, hi}, ok1 && ok2
	case Mul:
		s := span{math.MaxInt64, math.MinInt64}
		for _, a := range []int64{x.lo, x.hi} {
			for _, b := range []int64{y.lo, y.hi} {
				p, ok := MulChecked(a, b)
				if !ok {
					return span{}, false
				}
				s = span{min(s.lo, p), max(s.hi, p)}
			}
		}
		return s, true
	case Div: // toward zero, by a positive divisor: |x/y| <= |x|
		if y.lo > 0 {
			if x.lo >= 0 {
				return span{x.lo / y.hi, x.hi / y.lo}, true
			}
			return span{min(x.lo/y.lo, 0), max(x.hi/y.lo, 0)}, true
		}
	case Mod: // by a positive divisor: the sign of x, below y
		if y.lo > 0 {
			if x.lo >= 0 {
				return span{0, min(x.hi, y.hi-1)}, true
			}
			return span{-(y.hi - 1), y.hi - 1}, true
		}
	case Min:
		return span{min(x.lo, y.lo), min(x.hi, y.hi)}, true
	case Max:
		return span{max(x.lo, y.lo), max(x.hi, y.hi)}, true
	default: // comparisons, And, Or
		return span{0, 1}, true
	}
	return span{math.MinInt64, math.MaxInt64}, true
}
