package ir

import "fmt"

// Limits are the target's resources the verifier checks against.
type Limits struct {
	MaxSharedBytes int // per block, with the opt-in for large dynamic shared memory
	MaxThreads     int
	// Target, when set, is the target's own check of a verified program
	// (what its compiler can lower), so that Build refuses what the target
	// would refuse later; its errors carry the op's position.
	Target func(*Func) error
}

// DefaultLimits are those of sm_90 (Hopper): 227 KiB of shared memory.
var DefaultLimits = Limits{MaxSharedBytes: 227 * 1024, MaxThreads: 1024}

// Verify checks a program and returns every problem it finds.
func Verify(f *Func, lim Limits) error {
	v := &verifier{f: f, lim: lim, known: map[*Buffer]bool{}, bound: map[*Var]bool{}, parExt: map[*Var]int{}}
	v.run()
	return v.errs.Err()
}

type verifier struct {
	f       *Func
	lim     Limits
	errs    ErrorList
	known   map[*Buffer]bool
	bound   map[*Var]bool
	inPar   int // depth of enclosing Parallel loops
	inDefer int // depth of enclosing Deferred bodies
	inWG    int // depth of enclosing Warpgroup blocks
	inPipe  int // depth of enclosing Pipelined loops
	// parExt is the extent of each index variable of the enclosing
	// Parallel loops.
	parExt map[*Var]int
}

func (v *verifier) errorf(op string, pos Pos, format string, args ...any) {
	v.errs = append(v.errs, &Error{Op: op, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (v *verifier) run() {
	f := v.f
	for _, s := range f.Syms {
		v.bound[s] = true
	}
	if f.SMs != nil {
		v.bound[f.SMs] = true
	}
	names := map[string]bool{}
	for _, p := range f.Params {
		if names[p.Name] {
			v.errorf("param", p.Pos, "duplicate name %q", p.Name)
		}
		names[p.Name] = true
		v.known[p] = true
		if !p.DType.Valid() {
			v.errorf("param", p.Pos, "%s: invalid element type %s", p.Name, p.DType)
		}
		if p.Scope != Global {
			v.errorf("param", p.Pos, "%s: parameters live in global memory, not %s", p.Name, p.Scope)
		}
		if p.Strides != nil && len(p.Strides) != len(p.Shape) {
			v.errorf("param", p.Pos, "%s: %d strides for %d dims", p.Name, len(p.Strides), len(p.Shape))
		}
		v.paramSize(p)
		for _, d := range append(append([]Expr{}, p.Shape...), p.Strides...) {
			v.expr("param", p.Pos, d)
			if c, ok := ConstInt(d); ok && c <= 0 {
				v.errorf("param", p.Pos, "%s: sizes and strides must be positive, got %d", p.Name, c)
			}
		}
	}
	v.symsBound()
	k := f.Kernel
	if k == nil {
		v.errorf("func", f.Pos, "%s has no kernel", f.Name)
		return
	}
	v.kernel(k, names)
}

func (v *verifier) kernel(k *Kernel, names map[string]bool) {
	if len(k.Grid) < 1 || len(k.Grid) > 3 {
		v.errorf("kernel", k.P, "grid has %d dims; want 1 to 3", len(k.Grid))
	}
	for _, x := range k.Idx {
		v.bound[x] = true
	}
	for _, g := range k.Grid {
		v.expr("kernel", k.P, g)
		if g != nil && !g.Type().IsInt() {
			v.errorf("kernel", k.P, "grid dim %s is not an integer", ExprString(g))
		}
	}
	v.gridSize(k)
	owners, roleErrs := FragmentOwners(k.Body) // who may use a Warpgroup block's fragments
	switch {
	case k.Threads <= 0 || k.Threads%32 != 0:
		v.errorf("kernel", k.P, "threads = %d is not a positive multiple of 32 (a warp)", k.Threads)
	case k.Threads > v.lim.MaxThreads:
		v.errorf("kernel", k.P, "threads = %d exceeds the target's %d per block", k.Threads, v.lim.MaxThreads)
	case k.Cluster < 0 || k.Cluster > 2:
		v.errorf("kernel", k.P, "clusters of %d blocks: want 0, 1 or 2", k.Cluster)
	case k.LateStart < 0:
		v.errorf("kernel", k.P, "late start of %d cycles: want 0 or more", k.LateStart)
	}
	if k.Raster != nil && k.Raster.Panel <= 0 {
		v.errorf("rasterize", k.Raster.Pos, "panel size %d must be positive", k.Raster.Panel)
	}
	before := len(v.errs)
	for _, b := range k.Allocs {
		v.known[b] = true
		if names[b.Name] {
			v.errorf("alloc", b.Pos, "duplicate name %q", b.Name)
		}
		names[b.Name] = true
		if !b.DType.Valid() {
			v.errorf("alloc", b.Pos, "%s: invalid element type %s", b.Name, b.DType)
		}
		s, ok := b.StaticShape()
		if !ok || b.Scope == Global {
			v.errorf("alloc", b.Pos, "%s: on-chip buffers need a constant shape in shared, fragment or local scope", b.Name)
			continue
		}
		positive := true
		for _, d := range s {
			positive = positive && d > 0
		}
		if !positive {
			v.errorf("alloc", b.Pos, "%s: dims must be positive, got %v", b.Name, s)
			continue
		}
		if b.Scope == Shared && b.Swizzle > Swizzle128B {
			v.errorf("swizzle", b.Pos, "%s: unknown swizzle %s", b.Name, b.Swizzle)
		}
		v.allocSize(b, k.Threads, owners)
	}
	allocFailed := len(v.errs) > before
	if n := k.PeakSharedBytes(); n > v.lim.MaxSharedBytes && !allocFailed { // a tile refused above is counted there
		v.errorf("kernel", k.P, "shared memory %d bytes exceeds the target's %d per block", n, v.lim.MaxSharedBytes)
	}
	v.spreadAtTop(k.Body)
	v.stmts(k.Body)
	v.errs = append(v.errs, roleErrs...)
	if len(v.errs) == 0 { // on a well-formed body only: it walks regions the checks above vouch for
		v.blockRaces(k)
	}
}

// spreadAtTop checks that Spread loops are statements of the kernel body:
// every block must reach one, with the same bounds, for the values to be
// dealt out whole.
func (v *verifier) spreadAtTop(body []Stmt) {
	for _, s := range body {
		if f, ok := s.(*For); ok && f.Kind == Spread {
			Walk(f.Body, func(st Stmt) {
				if g, ok := st.(*For); ok && g.Kind == Spread {
					v.errorf("spread", g.P, "a spread loop inside another spread loop; spread loops are statements of the kernel body")
				}
			})
			continue
		}
		Walk([]Stmt{s}, func(st Stmt) {
			if g, ok := st.(*For); ok && g.Kind == Spread {
				v.errorf("spread", g.P, "a spread loop nested in another statement; spread loops are statements of the kernel body")
			}
		})
	}
}

func (v *verifier) stmts(body []Stmt) {
	for _, s := range body {
		v.stmt(s)
	}
}

func (v *verifier) stmt(s Stmt) {
	pos := s.Position()
	if v.inPar > 0 {
		switch s.(type) {
		case *Store, *If:
		default:
			v.errorf(opName(s), pos, "only element stores and if may appear inside a Parallel loop, not tile ops or loops")
			return
		}
	}
	switch s := s.(type) {
	case *Copy:
		if !v.region("copy", pos, s.Src) || !v.region("copy", pos, s.Dst) {
			return
		}
		if s.Src.Buf.Scope == Global && s.Dst.Buf.Scope == Global {
			v.errorf("copy", pos, "%s -> %s: both are global; stage the tile through shared memory or a fragment", s.Src.Buf.Name, s.Dst.Buf.Name)
		}
		v.sameShape("copy", pos, s.Src, s.Dst)
		v.writable("copy", pos, s.Dst.Buf)
		if s.Cache > EvictLast {
			v.errorf("copy", pos, "unknown cache hint %d", s.Cache)
		} else if s.Cache != CacheNormal && s.Src.Buf.Scope != Global && s.Dst.Buf.Scope != Global {
			v.errorf("copy", pos, "%s -> %s: a cache hint (%s) is for a copy from or to global memory", s.Src.Buf.Name, s.Dst.Buf.Name, s.Cache)
		}
	case *Prefetch:
		if v.region("prefetch", pos, s.Src) && s.Src.Buf.Scope != Global {
			v.errorf("prefetch", pos, "%s is not a global tensor: only global tiles can be prefetched", s.Src.Buf.Name)
		}
	case *AtomicAdd:
		if !v.region("atomic_add", pos, s.Src) || !v.region("atomic_add", pos, s.Dst) {
			return
		}
		v.sameShape("atomic_add", pos, s.Src, s.Dst)
		v.writable("atomic_add", pos, s.Dst.Buf)
		if s.Src.Buf.Scope == Global {
			v.errorf("atomic_add", pos, "source %s is global; add from a shared tile or a fragment", s.Src.Buf.Name)
		}
		if s.Dst.Buf.Scope != Global {
			v.errorf("atomic_add", pos, "destination %s must be a global tensor", s.Dst.Buf.Name)
		} else {
			v.atomicDType(pos, s.Dst)
		}
	case *Ticket:
		v.ticket(pos, s)
	case *WaitCount:
		v.waitCount(pos, s)
	case *Signal:
		v.signal(pos, s)
	case *Gemm:
		v.gemm(s)
	case *Fill:
		if !v.region("fill", pos, s.Dst) {
			return
		}
		v.expr("fill", pos, s.Value)
		v.writable("fill", pos, s.Dst.Buf)
		if s.Dst.Buf.Scope == Global {
			v.errorf("fill", pos, "%s is global; fill a shared tile or fragment and copy it out", s.Dst.Buf.Name)
		}
		v.valueFits("fill", pos, s.Dst.Buf, s.Value)
	case *Reduce:
		v.reduce(s)
	case *Parallel:
		if len(s.Extents) != len(s.Vars) {
			v.errorf("parallel", pos, "%d index variables for %d extents", len(s.Vars), len(s.Extents))
			return
		}
		for i, x := range s.Vars {
			if s.Extents[i] <= 0 {
				v.errorf("parallel", pos, "extent %d of %s must be positive", s.Extents[i], x.Name)
			}
		}
		v.parallelPoints(pos, s.Extents)
		v.parallelRaces(s)
		if _, _, ok := s.Scale(); s.SkipOnes && !ok {
			v.errorf("parallel", pos, "skip_ones on a loop that is not x[i, ...] = x[i, ...] * f[...]")
		}
		for i, x := range s.Vars {
			v.parExt[x] = s.Extents[i]
		}
		v.scoped(s.Vars, func() {
			v.inPar++
			v.stmts(s.Body)
			v.inPar--
		})
		for _, x := range s.Vars {
			delete(v.parExt, x)
		}
	case *Store:
		if s.Buf == nil {
			v.errorf("store", pos, "missing buffer")
			return
		}
		v.access("store", pos, s.Buf, s.Idx)
		v.expr("store", pos, s.Value)
		v.writable("store", pos, s.Buf)
		v.valueFits("store", pos, s.Buf, s.Value)
	case *For:
		op := s.Kind.String()
		v.expr(op, pos, s.Start)
		v.expr(op, pos, s.Stop)
		if s.Start == nil || s.Stop == nil || !s.Start.Type().IsInt() || !s.Stop.Type().IsInt() {
			v.errorf(op, pos, "loop bounds must be integers, got %s and %s", typeOf(s.Start), typeOf(s.Stop))
		}
		if s.Kind == Pipelined && s.Stages < 1 {
			v.errorf(op, pos, "stages = %d; want at least 1", s.Stages)
		}
		v.nestedPipelined(s)
		if s.Kind == Pipelined {
			v.inPipe++
		}
		v.scoped([]*Var{s.Var}, func() { v.loopBody(s) })
		if s.Kind == Pipelined {
			v.inPipe--
		}
	case *Deferred:
		// Reached only where a Deferred is misplaced: loopBody checks
		// those of a Pipelined loop's body itself.
		if v.inDefer > 0 {
			v.errorf("defer", pos, "a deferred body may not defer again: it already runs one iteration late")
		} else {
			v.errorf("defer", pos, "only a statement of a Pipelined loop's body may be deferred")
		}
		v.deferred(s)
	case *Warpgroup:
		v.warpgroup(s)
	case *While:
		v.cond("while", pos, s.Cond)
		v.stmts(s.Body)
	case *If:
		v.cond("if", pos, s.Cond)
		v.stmts(s.Then)
		v.stmts(s.Else)
	}
}

// loopBody checks a For's body. Its direct Deferred statements are legal
// when the loop is Pipelined (there is a next iteration to run them in) and
// not inside a deferred body: one deferral deep is the two-stage pipeline
// the backends build.
func (v *verifier) loopBody(f *For) {
	for _, s := range f.Body {
		if d, ok := s.(*Deferred); ok && f.Kind == Pipelined && v.inDefer == 0 {
			v.deferred(d)
			continue
		}
		v.stmt(s)
	}
}

// deferred checks a Deferred body's statements as those of the loop body.
func (v *verifier) deferred(d *Deferred) {
	v.inDefer++
	v.stmts(d.Body)
	v.inDefer--
}

// scoped runs check with vars bound, as inside the loop that binds them,
// and unbinds them after: a loop index may not escape its loop.
func (v *verifier) scoped(vars []*Var, check func()) {
	old := make([]bool, len(vars))
	for i, x := range vars {
		old[i] = v.bound[x]
		v.bound[x] = true
	}
	check()
	for i, x := range vars {
		v.bound[x] = old[i]
	}
}

func typeOf(e Expr) DType {
	if e == nil {
		return Invalid
	}
	return e.Type()
}

// opName is the name of the tl call that builds s.
func opName(s Stmt) string {
	switch s := s.(type) {
	case *Copy:
		return "copy"
	case *AtomicAdd:
		return "atomic_add"
	case *Prefetch:
		return "prefetch"
	case *Ticket:
		return "ticket"
	case *WaitCount:
		return "wait_count"
	case *Signal:
		return "signal"
	case *Gemm:
		return "gemm"
	case *Fill:
		return "fill"
	case *Reduce:
		return "reduce_" + s.Kind.String()
	case *Parallel:
		return "parallel"
	case *For:
		return s.Kind.String()
	case *Deferred:
		return "defer"
	case *While:
		return "while"
	case *Store:
		return "store"
	case *If:
		return "if"
	case *Warpgroup:
		return "warpgroup"
	}
	return fmt.Sprintf("%T", s)
}

// OpName is the name of the tl call that builds s, as errors give it.
func OpName(s Stmt) string { return opName(s) }

func (v *verifier) cond(op string, pos Pos, c Expr) {
	v.expr(op, pos, c)
	if c != nil && c.Type() != Bool {
		v.errorf(op, pos, "condition has type %s; want bool (use a comparison)", c.Type())
	}
}

func (v *verifier) writable(op string, pos Pos, b *Buffer) {
	if b.Scope == Global && !b.Output {
		v.errorf(op, pos, "%s is an input; declare it with Out to write it", b.Name)
	}
}

func (v *verifier) valueFits(op string, pos Pos, b *Buffer, val Expr) {
	if val == nil {
		return
	}
	t := val.Type()
	switch {
	case t == Bool && b.DType != Bool:
		v.errorf(op, pos, "cannot store a bool into %s %s", b.DType, b.Name)
	case t.IsFloat() && b.DType.IsInt():
		v.errorf(op, pos, "cannot store %s into %s %s without an explicit cast", t, b.DType, b.Name)
	}
}

// warpgroup checks a Warpgroup block: a warpgroup the block has, not
// inside another one or a Parallel loop (where a thread runs per point),
// and no loops inside, whose pipelines and barriers span every warpgroup.
func (v *verifier) warpgroup(s *Warpgroup) {
	pos, T := s.P, 0
	if k := v.f.Kernel; k != nil {
		T = k.Threads
	}
	switch {
	case T%128 != 0 || s.Index < 0 || s.Index >= T/128:
		v.errorf("warpgroup", pos, "warpgroup %d of a block of %d threads; want whole warpgroups of 128 and an index below %d", s.Index, T, T/128)
	case v.inWG > 0:
		v.errorf("warpgroup", pos, "a warpgroup block inside another one")
	case v.inPar > 0:
		v.errorf("warpgroup", pos, "a warpgroup block inside a parallel loop")
	}
	Walk(s.Body, func(st Stmt) {
		switch st.(type) {
		case *For, *While, *Deferred:
			v.errorf("warpgroup", st.Position(), "no loops inside a warpgroup block (put the block inside the loop)")
		}
	})
	v.inWG++
	v.stmts(s.Body)
	v.inWG--
}
