package cudagen

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// emitter writes the CUDA C++ of one kernel.
type emitter struct {
	wrapInts  bool          // inside a stored value (value): integer arithmetic that may overflow wraps
	ranges    *ir.IntRanges // bounds of integer expressions (intRanges)
	c         *compilation
	b         strings.Builder
	ind       int
	tmp       int
	stage     map[*ir.Buffer]string // stage index of multi-buffered shared tiles
	par       *parCtx
	dirty     bool // shared memory written since the last barrier
	unfenced  bool // written with plain stores since the last proxy fence (syncState)
	pending   bool // cp.async copies issued and not yet waited for
	read      bool // shared memory read since the last barrier
	halfRead  bool // a warpgroup's half stored by TMA since its last barrier (warpgroup_epilogue.go)
	multicast bool // the producer issues its ring loads as the cluster's halves (cluster.go)
	err       error
	global    map[*ir.Buffer]bool // globals needing 64-bit offsets
	funcs     map[string]bool     // device functions generated for this kernel
	preamble  []string            // their definitions
	turns     *turnState          // the ping-pong loop being emitted (pingpong.go)
	// walkTurnOwed: warpgroup 1's last turn of a drawn walk is taken past
	// the walk (grid_loop.go).
	walkTurnOwed bool
	waits        *wgmmaWaits         // wgmma groups in flight in a loop with Deferred statements
	role         *ir.Warpgroup       // the warpgroup block being emitted (roles.go)
	roleCur      ir.Stmt             // its statement being emitted
	roleSeen     map[*ir.Buffer]bool // shared tiles it read or wrote since its last barrier
	roleWrote    map[*ir.Buffer]bool // shared tiles it wrote since its last barrier
}

// parCtx is the Parallel loop being emitted. Its statements run per index
// point in one thread, so they take no barriers between them (one there
// would sit inside a loop over the thread's points, which not every thread
// enters: a deadlock).
type parCtx struct {
	p    *ir.Parallel
	drv  *layout.Fragment     // the fragment that drives the loop; nil: threads stride the index space
	vecs map[*ir.Load]vecRead // shared tiles read by vector (par_vec_reads.go)
}

func emitPass(c *compilation) error {
	e := &emitter{c: c, stage: map[*ir.Buffer]string{}, global: map[*ir.Buffer]bool{}, funcs: map[string]bool{}}
	src := e.kernel()
	if len(e.preamble) > 0 { // generated helpers go between the include and the kernel
		head := "#include \"" + headerName(e.c.opts.Arch) + "\"\n"
		src = strings.Replace(src, head, head+"\n"+strings.Join(e.preamble, "\n"), 1)
	}
	if e.err != nil {
		return e.err
	}
	c.prog = &Program{Func: c.f, Name: c.f.Name, Arch: c.opts.Arch, Source: src, Threads: c.launchThreads(), Shared: c.smem.total, Layouts: c.layouts, TMA: c.tmaSpecs, PingPong: c.pingPong, smem: c.smem,
		Counter: c.ws != nil && c.ws.walk != nil && c.ws.walk.draw, Early: c.f.Kernel.StartEarly && gridDeps(c.opts.Arch),
		Cooperative: c.f.Kernel.Cooperative}
	return nil
}

// fail records the first error; one without a position gets that of the
// statement being emitted, so every refusal points at the user's op.
func (e *emitter) fail(err error) {
	if e.err != nil || err == nil {
		return
	}
	var pe *ir.Error
	if !errors.As(err, &pe) && e.c.at != nil {
		err = errAt(stmtName(e.c.at), e.c.at.Position(), "%v", err)
	}
	e.err = err
}

// failHere refuses the statement being emitted, at its position.
func (e *emitter) failHere(format string, args ...any) {
	e.fail(fmt.Errorf(format, args...))
}

func (e *emitter) line(format string, args ...any) {
	e.b.WriteString(strings.Repeat("  ", e.ind))
	fmt.Fprintf(&e.b, format, args...)
	e.b.WriteByte('\n')
}

func (e *emitter) open(format string, args ...any) {
	e.line(format+" {", args...)
	e.ind++
}

func (e *emitter) close() {
	e.ind--
	e.line("}")
}

func (e *emitter) fresh(prefix string) string {
	e.tmp++
	return fmt.Sprintf("%s%d", prefix, e.tmp)
}

// ctype is the C type that stores dt.
func ctype(dt ir.DType) string {
	switch dt {
	case ir.F32:
		return "float"
	case ir.F16, ir.BF16:
		return "uint16_t"
	case ir.F8E4M3, ir.F8E5M2:
		return "uint8_t"
	case ir.I64:
		return "long long"
	case ir.Bool:
		return "bool"
	}
	return "int"
}

// load converts a stored value to the type expressions compute in.
func load(dt ir.DType, x string) string {
	switch dt {
	case ir.BF16:
		return "tl::bf16_to_f32(" + x + ")"
	case ir.F16:
		return "tl::f16_to_f32(" + x + ")"
	case ir.F8E4M3:
		return "tl::e4m3_to_f32(" + x + ")"
	case ir.F8E5M2:
		return "tl::e5m2_to_f32(" + x + ")"
	}
	return x
}

// store converts a computed value to dt's storage, rounding as chosen.
func (e *emitter) store(dt ir.DType, x string) string {
	suffix := map[string]string{"rn": "", "rz": "_rz", "ra": "_ra"}[e.c.opts.Rounding]
	switch dt {
	case ir.BF16:
		return "tl::f32_to_bf16" + suffix + "(" + x + ")"
	case ir.F16:
		return "tl::f32_to_f16" + suffix + "(" + x + ")"
	case ir.F8E4M3:
		return "tl::f32_to_e4m3(" + x + ")"
	case ir.F8E5M2:
		return "tl::f32_to_e5m2(" + x + ")"
	}
	return "(" + ctype(dt) + ")(" + x + ")"
}

func (e *emitter) kernel() string {
	f, k := e.c.f, e.c.f.Kernel
	var params []string
	// A kernel that starts early reads what the kernel before it writes
	// while that one runs: no __restrict__, which would let nvcc load
	// inputs through the non-coherent read-only path.
	restrict := " __restrict__"
	if k.StartEarly {
		restrict = ""
	}
	for _, p := range f.Params {
		q := "const "
		if p.Output {
			q = ""
		}
		params = append(params, fmt.Sprintf("%s%s*%s %s", q, ctype(p.DType), restrict, p.Name))
		e.global[p] = needs64(p)
	}
	for _, s := range f.Syms {
		params = append(params, "const int "+s.Name)
	}
	if f.SMs != nil {
		params = append(params, "const int "+f.SMs.Name)
	}
	params = append(params, e.tmaParams()...)
	if e.c.ws != nil && e.c.ws.walk != nil && e.c.ws.walk.draw {
		params = append(params, "int* __restrict__ "+counterParam)
	}
	e.line("// Generated by tilego from %s. Do not edit.", f.Name)
	e.line("#include \"%s\"", headerName(e.c.opts.Arch))
	e.line("")
	bounds := fmt.Sprint(k.Threads)
	if e.c.ws != nil { // one block an SM, so setmaxnreg can hand out registers
		bounds = fmt.Sprintf("%d, 1", e.c.launchThreads())
	} else if n := e.c.minBlocks(); n > 1 {
		bounds = fmt.Sprintf("%d, %d", k.Threads, n)
	}
	cluster := ""
	if e.c.cluster {
		cluster = "__cluster_dims__(2, 1, 1) "
	}
	e.open("extern \"C\" __global__ void __launch_bounds__(%s) %s%s(%s)", bounds, cluster, f.Name, strings.Join(params, ", "))
	e.line("extern __shared__ __align__(1024) uint8_t smem[];")
	e.line("const int tid = threadIdx.x, warp = tid / 32, lane = tid %% 32;")
	if k.NextEarly && gridDeps(e.c.opts.Arch) {
		e.line("tl::grid_launch_next(); // the next kernel may start early (NextEarly)")
	}
	e.blockIndices(k)
	e.declRegs(k.Allocs)
	e.line("(void)warp; (void)lane;")
	e.lateStart(k)
	if e.c.ws != nil {
		e.wsSplit()
	} else {
		if e.c.roleBars >= 0 {
			e.initBars(barRing{e.c.roleBars, k.Threads / 128, 128})
		}
		for f, l := range e.c.tma { // at most one loop runs on from an outer loop's iterations
			if l.outer != nil {
				e.tmaInit(l, e.c.ringSize(f))
				e.line("int ring = 0; // the ring positions used so far (ringPos)")
			}
		}
	}
	e.stmts(k.Body)
	if e.c.cluster { // no arrival from the partner may find this block gone
		e.line("tl::cluster_sync();")
	}
	if k.StartEarly && gridDeps(e.c.opts.Arch) {
		e.line("tl::grid_wait(); // end after the kernel before (StartEarly)")
	}
	e.close()
	return e.b.String()
}

// gridDeps: the arch has programmatic dependent launch (sm_90 on), which
// StartEarly and NextEarly lower to.
func gridDeps(arch string) bool {
	n, ok := smVersion(arch)
	return ok && n >= 90
}

// needs64 reports whether offsets into a global tensor may pass 2^31.
func needs64(p *ir.Buffer) bool {
	shape, ok := p.StaticShape()
	if !ok {
		return true
	}
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n >= math.MaxInt32
}

// blockIndices declares bx, by, bz, applying the rasterization swizzle:
// blocks run in panels of Panel rows (or columns) so that neighbours in
// launch order share operand tiles in L2.
func (e *emitter) blockIndices(k *ir.Kernel) {
	names := []string{"blockIdx.x", "blockIdx.y", "blockIdx.z"}
	if r := k.Raster; r != nil && len(k.Idx) >= 2 {
		e.line("int %s, %s;", k.Idx[0].Name, k.Idx[1].Name)
		e.open("")
		major, minor := "gridDim.y", "gridDim.x" // row order: panels of rows of by
		if r.ColMajor {
			major, minor = minor, major
		}
		e.line("const int pid = blockIdx.y * gridDim.x + blockIdx.x, panel = %d;", r.Panel)
		e.line("const int group = pid / (panel * %s), first = group * panel;", minor)
		e.line("const int size = min(%s - first, panel);", major)
		e.line("const int a = first + (pid %% size), b = (pid %% (panel * %s)) / size;", minor)
		if r.ColMajor {
			e.line("%s = a; %s = b;", k.Idx[0].Name, k.Idx[1].Name)
		} else {
			e.line("%s = b; %s = a;", k.Idx[0].Name, k.Idx[1].Name)
		}
		e.close()
		for i := 2; i < len(k.Idx); i++ {
			e.line("const int %s = %s;", k.Idx[i].Name, names[i])
		}
		return
	}
	for i, v := range k.Idx {
		e.line("const int %s = %s;", v.Name, names[i])
	}
}

func (e *emitter) stmts(body []ir.Stmt) {
	for _, s := range body {
		if e.err != nil {
			return
		}
		e.stmt(s)
	}
}

// stmt emits s; a panic while it does names s (ice.go), so the previous
// statement is restored only on the normal return.
func (e *emitter) stmt(s ir.Stmt) {
	prev := e.c.at
	e.c.at = s
	e.lower(s)
	e.c.at = prev
}

func (e *emitter) lower(s ir.Stmt) {
	if e.role != nil && e.par == nil {
		defer e.roleStmt(s)()
	}
	switch s := s.(type) {
	case *ir.Copy:
		if w := e.c.ws; w != nil && w.walk != nil && slices.Contains(w.walk.copies, s) {
			e.walkWait(w.walk) // the producer loads it (persistent_loads.go)
			break
		}
		e.copy(s, false)
	case *ir.AtomicAdd:
		if tc := e.c.tmaReduces[s]; tc != nil {
			e.tmaReduce(s, tc)
			break
		}
		e.copy(&ir.Copy{At: s.At, Src: s.Src, Dst: s.Dst}, true)
	case *ir.Prefetch:
		e.prefetch(s)
	case *ir.Ticket:
		e.ticket(s)
	case *ir.WaitCount:
		e.waitCount(s)
	case *ir.Signal:
		e.signal(s)
	case *ir.Gemm:
		switch {
		case e.c.wgmma[s]:
			e.wgmma(s)
		case amd(e.c.opts.Arch) && e.c.mfma[s].scalar:
			e.scalarGemm(s)
		case amd(e.c.opts.Arch):
			e.mfmaGemm(s)
		case e.role != nil:
			e.fail(errAt("gemm", s.P, "a Gemm in a warpgroup block needs wgmma (sm_90a, a 64-row output): %s", wgmmaFits(e.c, s)))
		default:
			e.gemm(s)
		}
	case *ir.Fill:
		e.fill(s)
	case *ir.Reduce:
		e.reduce(s)
	case *ir.Parallel:
		e.parallel(s)
	case *ir.Store:
		e.storeStmt(s)
	case *ir.For:
		e.forLoop(s)
	case *ir.Warpgroup:
		e.warpgroup(s)
	case *ir.While:
		e.syncIfDirty(e.readsShared(s.Body) || e.writesShared(s.Body))
		before := e.state()
		e.open("while (%s)", e.expr(s.Cond))
		e.stmts(s.Body)
		e.loopEndSync(s.Body)
		e.close()
		e.merge(before) // the body may not run at all
	case *ir.If:
		before, roleBefore := e.state(), e.roleState()
		e.open("if (%s)", e.expr(s.Cond))
		e.stmts(s.Then)
		e.branchSync(roleBefore)
		e.close()
		then, roleThen := e.state(), e.roleState()
		e.setState(before)
		e.roleSeen, e.roleWrote = maps.Clone(roleBefore.seen), maps.Clone(roleBefore.wrote)
		if len(s.Else) > 0 {
			e.open("else")
			e.stmts(s.Else)
			e.branchSync(roleBefore)
			e.close()
		}
		e.merge(then) // what follows may come from either branch
		if e.role != nil {
			m := mergeRoleState(e.roleState(), roleThen)
			e.roleSeen, e.roleWrote = m.seen, m.wrote
		}
	default:
		e.fail(errAt(stmtName(s), s.Position(), "the CUDA target cannot lower a %T", s))
	}
}

// branchSync ends a branch of a warpgroup block that wrote shared tiles
// not written since the barrier before it with the warpgroup's barrier, so
// the path that skips the branch owes none for them (MLA zeroes an edge
// page's slots so). Outside a block every write meets its barrier at once
// (wroteShared).
func (e *emitter) branchSync(before roleState) {
	if e.role == nil || e.par != nil {
		return
	}
	for b := range e.roleWrote {
		if !before.wrote[b] {
			e.roleSync()
			return
		}
	}
}

func (e *emitter) forLoop(s *ir.For) {
	if s.Kind == ir.Pipelined && len(e.c.smem.hoisted[s]) > 0 {
		e.pipelined(s)
		return
	}
	if hasDeferred(s) {
		e.lateLoop(s)
		return
	}
	e.syncIfDirty(e.readsShared(s.Body) || e.writesShared(s.Body))
	if s.Kind == ir.Unrolled { // after the barrier, so that it names the loop
		e.line("#pragma unroll")
	}
	before := e.state()
	v := s.Var.Name
	defer e.walkStages(s)()
	if s.Kind == ir.Spread {
		e.spreadOpen(s)
	} else {
		e.open("for (int %s = %s; %s < %s; ++%s)", v, e.expr(s.Start), v, e.expr(s.Stop), v)
	}
	e.stmts(s.Body)
	if h := e.c.halves; h != nil && h.walk == s && !e.dirty && !e.read && !e.pending {
		if e.halfRead { // nothing else owed: the warpgroup meets itself before writing its half again
			e.halfSync(false)
		}
	} else {
		e.loopEndSync(s.Body)
	}
	if s.Kind == ir.Spread {
		e.spreadClose(s)
	} else {
		e.close()
	}
	e.merge(before) // the body may not run at all
}

// syncState is what the emitter knows about shared memory at a point of
// the program: the barriers and waits still owed (dirty, read), the
// cp.async copies not yet waited for (pending), and plain writes not yet
// fenced for the async proxy, wgmma's and TMA's reads (unfenced).
type syncState struct{ dirty, pending, read, unfenced bool }

func (e *emitter) state() syncState { return syncState{e.dirty, e.pending, e.read, e.unfenced} }
func (e *emitter) setState(s syncState) {
	e.dirty, e.pending, e.read, e.unfenced = s.dirty, s.pending, s.read, s.unfenced
}
func (e *emitter) merge(other syncState) { // control may arrive from either point: owe what either owes
	e.dirty, e.pending, e.read = e.dirty || other.dirty, e.pending || other.pending, e.read || other.read
	e.unfenced = e.unfenced || other.unfenced
}

// loopEndSync puts a barrier at the end of a loop body that touches shared
// memory, so the next iteration's writes cannot race this one's reads;
// copies still in flight are waited for first, since the next iteration's
// code was emitted assuming none were. A body that ends on a barrier, with
// no shared memory touched since, owes none, unless it writes global
// memory, which the barrier at the end also orders before the next
// iteration.
func (e *emitter) loopEndSync(body []ir.Stmt) {
	if e.role == nil && !e.dirty && !e.read && !e.pending && !writesGlobal(body) {
		return
	}
	if e.readsShared(body) || e.writesShared(body) {
		e.flushAsync()
		e.sync()
	}
}

// writesGlobal reports whether body may write global memory: a copy, store
// or atomic add into a global tensor, or a counter.
func writesGlobal(body []ir.Stmt) bool {
	found := false
	ir.Walk(body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Copy:
			found = found || s.Dst.Buf.Scope == ir.Global
		case *ir.Store:
			found = found || s.Buf.Scope == ir.Global
		case *ir.AtomicAdd, *ir.Ticket, *ir.Signal:
			found = true
		}
	})
	return found
}

func (e *emitter) sync() {
	e.noBarrierInTurns()
	if e.par != nil { // inside a loop over one thread's points: not every thread would arrive
		e.fail(errAt("parallel", e.par.p.P, "a block-wide barrier inside the loop's per-thread body would deadlock (an op here needs one)"))
		return
	}
	if e.role != nil {
		e.roleSync()
		return
	}
	e.proxyFence()     // plain writes before wgmma/TMA reads
	if e.c.ws != nil { // the producer warpgroup has left: only the consumers meet
		e.line("tl::bar_sync(1, %d);", e.c.ws.consumers)
	} else {
		e.line("__syncthreads();")
	}
	e.dirty, e.read, e.halfRead = false, false, false
}

// syncIfDirty emits a barrier before an op that reads shared memory other
// threads wrote (or, with war, writes what others may still read).
func (e *emitter) syncIfDirty(reads bool) {
	if reads && (e.dirty || e.pending) {
		if e.role != nil && !e.pending && !e.roleRereads() {
			return // it reads no tile its warpgroup wrote since its barrier
		}
		e.flushAsync()
		e.sync()
	}
}

// proxyFence orders the thread's plain shared-memory writes before the
// async proxy's reads (wgmma, TMA) that follow a barrier or hand-off, on
// sm_90a: where some were written since the last barrier and not all are
// fenced yet (a hand-off that waits after one that fenced them needs none).
func (e *emitter) proxyFence() {
	if e.dirty && e.unfenced && e.c.opts.Arch == "sm_90a" && e.c.asyncProxy() {
		e.fence()
	}
}

// asyncProxy reports whether the kernel touches shared memory through the
// async proxy at all (wgmma operands, TMA loads and stores): without, no
// plain write needs fencing, and the fence (a MEMBAR that waits for the
// thread's outstanding loads) would only cost.
func (c *compilation) asyncProxy() bool {
	if len(c.tmaSpecs) > 0 || c.ws != nil {
		return true
	}
	for _, on := range c.wgmma {
		if on {
			return true
		}
	}
	return false
}

// fence emits fence.proxy.async: every plain write so far is fenced.
func (e *emitter) fence() {
	e.line("tl::fence_proxy_async();")
	e.unfenced = false
}

// written notes plain writes of shared memory (or cp.async copies into
// it): a barrier is owed before other threads read them, and a proxy
// fence before wgmma or TMA does.
func (e *emitter) written() { e.dirty, e.unfenced = true, true }

func (e *emitter) beforeSharedWrite() {
	if e.role != nil && !e.pending && !e.roleRetouches() {
		return // only tiles its warpgroup has not touched since its barrier
	}
	if e.dirty || e.read || e.pending {
		e.flushAsync()
		e.sync()
	}
}

// flushAsync waits for the cp.async copies issued but not yet waited for.
// Copies outside pipelined loops are waited for lazily, at the first op
// that reads shared memory, so that a loop's prologue loads overlap them.
func (e *emitter) flushAsync() {
	if e.pending {
		e.line("tl::cp_async_wait<0>();")
		e.pending = false
		e.written()
	}
}

func (e *emitter) readsShared(body []ir.Stmt) bool  { return touches(body, true) }
func (e *emitter) writesShared(body []ir.Stmt) bool { return touches(body, false) }

// touches reports whether body reads (or writes) any shared tile.
func touches(body []ir.Stmt, reads bool) bool { return len(sharedBufs(body, reads)) > 0 }

// sharedBufs lists the shared tiles body reads (or writes).
func sharedBufs(body []ir.Stmt, reads bool) map[*ir.Buffer]bool {
	found := map[*ir.Buffer]bool{}
	add := func(b *ir.Buffer) {
		if b != nil && b.Scope == ir.Shared {
			found[b] = true
		}
	}
	exprReads := func(x ir.Expr) {
		ir.WalkExpr(x, func(y ir.Expr) {
			if l, ok := y.(*ir.Load); ok {
				add(l.Buf)
			}
		})
	}
	ir.Walk(body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Copy:
			if reads {
				add(s.Src.Buf)
			} else {
				add(s.Dst.Buf)
			}
		case *ir.AtomicAdd:
			if reads {
				add(s.Src.Buf)
			}
		case *ir.Ticket:
			if !reads {
				add(s.Dst.Buf)
			}
		case *ir.Gemm:
			if reads {
				add(s.A.Buf)
				add(s.B.Buf)
			}
		case *ir.Fill:
			if !reads {
				add(s.Dst.Buf)
			}
		case *ir.Reduce:
			if reads {
				add(s.Src)
			} else {
				add(s.Dst)
			}
		case *ir.Store:
			if reads {
				exprReads(s.Value)
			} else {
				add(s.Buf)
			}
		case *ir.If:
			if reads {
				exprReads(s.Cond)
			}
		}
	})
	return found
}

// packed reports whether a fragment keeps two 16-bit elements per register.
func packed(b *ir.Buffer) bool { return b.Scope == ir.Fragment && b.DType.Bits() == 16 }

// fragGet reads register idx of a fragment, as stored.
func fragGet(b *ir.Buffer, idx string) string {
	if packed(b) {
		return fmt.Sprintf("tl::get_h(%s, %s)", b.Name, idx)
	}
	return fmt.Sprintf("%s[%s]", b.Name, idx)
}

// fragSet writes register idx of a fragment with an already stored value.
func fragSet(b *ir.Buffer, idx, val string) string {
	if packed(b) {
		return fmt.Sprintf("tl::set_h(%s, %s, %s);", b.Name, idx, val)
	}
	return fmt.Sprintf("%s[%s] = %s;", b.Name, idx, val)
}

// minBlocks is how many blocks an SM should hold at once, for the launch
// bounds: as many as Hopper's 228 KB of shared memory per SM takes (1 KB
// of it reserved per block), as long as each thread keeps at least 128
// registers and its wgmma operands fit in its share. Without it, a kernel
// whose shared memory lets two 256-thread blocks share an SM can come out
// of the compiler at 130 registers and hold one (FlashAttention d128,
// 128×64 tiles: 0.19 → 0.26 ms on an H100 when its TMA store added three
// registers). 1 means no bound.
func (c *compilation) minBlocks() int {
	if !strings.HasPrefix(c.opts.Arch, "sm_90") || c.smem.total == 0 {
		return 1
	}
	threads := c.f.Kernel.Threads
	n := max(1, min(blocksBySharedMem(c.smem.total), 512/threads))
	regs := c.wgmmaRegs()
	for n > 1 && regs > 65536/(n*threads) {
		n--
	}
	return n
}

// wgmmaRegs is the registers a thread holds for its wgmma operands: the
// accumulators and the A operands read from registers. ptxas cannot
// spill those, so launch bounds that leave a thread fewer make the
// kernel fail to compile (FlashAttention d256 at 128×48 tiles, two blocks
// of 256 threads an SM: 164 such registers against 128).
func (c *compilation) wgmmaRegs() int {
	seen := map[*ir.Buffer]bool{}
	n := 0
	add := func(b *ir.Buffer) {
		if b.Scope != ir.Fragment || seen[b] || c.layouts[b] == nil {
			return
		}
		seen[b] = true
		r := c.layouts[b].NumRegs()
		if packed(b) {
			r = (r + 1) / 2
		}
		n += r
	}
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		if g, ok := s.(*ir.Gemm); ok && c.wgmma[g] {
			add(g.C.Buf)
			add(g.A.Buf)
		}
	})
	return n
}

// blocksBySharedMem is how many blocks of a kernel using shared bytes of
// shared memory fit on one Hopper SM (228 KB, 1 KB of it reserved a block).
func blocksBySharedMem(shared int) int {
	const smShared, reserved = 228 * 1024, 1024
	return smShared / (shared + reserved)
}
