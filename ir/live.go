package ir

// Span is a live range: the first and last statement (in program order)
// that touch a tile; a use inside a loop spans the whole loop, unless the
// loop is serial and each iteration starts by overwriting the whole tile
// (see fresh).
type Span struct{ First, Last int }

// Overlaps reports whether two live ranges share a statement.
func (a Span) Overlaps(b Span) bool { return a.First <= b.Last && b.First <= a.Last }

// LiveRanges numbers the statements of body in order and returns each
// shared tile's span. Tiles never touched have no entry.
func LiveRanges(body []Stmt) map[*Buffer]Span {
	spans := map[*Buffer]Span{}
	n := 0
	use := func(b *Buffer, s Span) {
		if b == nil || b.Scope != Shared {
			return
		}
		if old, ok := spans[b]; ok {
			s = Span{min(old.First, s.First), max(old.Last, s.Last)}
		}
		spans[b] = s
	}
	var visit func(body []Stmt) map[*Buffer]bool
	visit = func(body []Stmt) map[*Buffer]bool {
		inside := map[*Buffer]bool{}
		for _, st := range body {
			at := n
			n++
			for _, b := range DirectUses(st) {
				use(b, Span{at, at})
				inside[b] = true
			}
			var kids []Stmt
			loop := false
			switch st := st.(type) {
			case *For:
				kids, loop = st.Body, true
			case *While:
				kids, loop = st.Body, true
			case *Parallel:
				kids = st.Body
			case *Deferred:
				// Its enclosing loop spans it; the last iteration's run right
				// after the loop needs no more, as nothing runs in between.
				kids = st.Body
			case *Warpgroup:
				kids = st.Body
			case *If:
				kids = append(append([]Stmt{}, st.Then...), st.Else...)
			}
			used := visit(kids)
			var renewed map[*Buffer]bool
			if f, ok := st.(*For); ok && f.Kind != Pipelined {
				renewed = fresh(f.Body)
			}
			for b := range used {
				inside[b] = true
				if loop && !renewed[b] {
					use(b, Span{at, n - 1})
				}
			}
		}
		return inside
	}
	visit(body)
	return spans
}

// fresh lists the tiles that a serial loop's iteration overwrites whole
// before anything else in it touches them: a statement of the body itself
// (not under an if) copies or fills all of the tile. Nothing of such a
// tile outlives an iteration, so its bytes are free between its last use
// in one iteration and that write in the next. A Pipelined loop's tiles
// are not: its copies run ahead into later iterations.
func fresh(body []Stmt) map[*Buffer]bool {
	seen, out := map[*Buffer]bool{}, map[*Buffer]bool{}
	for _, st := range body {
		var dst *Buffer
		switch st := st.(type) {
		case *Copy:
			if st.Dst.IsWhole() {
				dst = st.Dst.Buf
			}
		case *Fill:
			if st.Dst.IsWhole() {
				dst = st.Dst.Buf
			}
		}
		if dst != nil && !seen[dst] && !readsBuffer(st, dst) {
			out[dst] = true
		}
		Walk([]Stmt{st}, func(s Stmt) {
			for _, b := range DirectUses(s) {
				seen[b] = true
			}
		})
	}
	return out
}

// readsBuffer reports whether st, a Copy or a Fill, reads b: as its source,
// or in a region start or a value.
func readsBuffer(st Stmt, b *Buffer) bool {
	found := false
	expr := func(e Expr) {
		WalkExpr(e, func(x Expr) {
			if l, ok := x.(*Load); ok && l.Buf == b {
				found = true
			}
		})
	}
	starts := func(r Region) {
		for _, e := range r.Start {
			expr(e)
		}
	}
	switch st := st.(type) {
	case *Copy:
		found = st.Src.Buf == b
		starts(st.Src)
		starts(st.Dst)
	case *Fill:
		starts(st.Dst)
		expr(st.Value)
	}
	return found
}

// DirectUses lists the buffers a statement itself names (not its body's).
func DirectUses(st Stmt) []*Buffer {
	var bs []*Buffer
	expr := func(e Expr) {
		WalkExpr(e, func(x Expr) {
			if l, ok := x.(*Load); ok {
				bs = append(bs, l.Buf)
			}
		})
	}
	region := func(r Region) {
		bs = append(bs, r.Buf)
		for _, e := range r.Start {
			expr(e)
		}
	}
	switch st := st.(type) {
	case *Copy:
		region(st.Src)
		region(st.Dst)
	case *AtomicAdd:
		region(st.Src)
		region(st.Dst)
	case *Prefetch:
		region(st.Src)
	case *Ticket:
		region(st.Counter)
		region(st.Dst)
	case *WaitCount:
		region(st.Counter)
	case *Signal:
		region(st.Counter)
	case *Gemm:
		region(st.A)
		region(st.B)
		region(st.C)
	case *Fill:
		region(st.Dst)
		expr(st.Value)
	case *Reduce:
		bs = append(bs, st.Src, st.Dst)
	case *Store:
		bs = append(bs, st.Buf)
		for _, e := range st.Idx {
			expr(e)
		}
		expr(st.Value)
	case *For:
		expr(st.Start)
		expr(st.Stop)
	case *While:
		expr(st.Cond)
	case *If:
		expr(st.Cond)
	}
	return bs
}

// PeakSharedBytes is the most shared memory live at any one statement:
// tiles whose lifetimes do not overlap may share bytes (tiles never used
// count throughout). It is what the verifier checks against the target.
func (k *Kernel) PeakSharedBytes() int {
	spans := LiveRanges(k.Body)
	last := 0
	for _, s := range spans {
		last = max(last, s.Last)
	}
	peak := 0
	for i := 0; i <= last; i++ {
		n := 0
		for _, b := range k.Allocs {
			if b.Scope != Shared {
				continue
			}
			if s, ok := spans[b]; !ok || (s.First <= i && i <= s.Last) {
				n = satAdd(n, satMul(b.NumElems(), b.DType.Bytes()))
			}
		}
		peak = max(peak, n)
	}
	return peak
}
