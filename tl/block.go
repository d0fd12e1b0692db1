package tl

import (
	"github.com/tilego/tilego/ir"
)

// Block is the body of a kernel as seen by one thread block: it allocates
// tiles and issues tile ops, which all the block's threads run together.
type Block struct {
	f *Func
	k *ir.Kernel
}

// ok reports whether k is a Block that Kernel made, and records op's
// error otherwise: a zero or nil Block has no program to add to.
func (k *Block) ok(op string) bool {
	if k != nil && k.f != nil && k.k != nil {
		return true
	}
	orphan().errorf(op, callerPos(), "a zero Block: use the one Kernel passes to its body")
	return false
}

// Idx returns the block's index along x, y and z (0 for absent dims).
func (k *Block) Idx() (x, y, z Expr) {
	out := [3]Expr{Int(0), Int(0), Int(0)}
	if !k.ok("idx") {
		return out[0], out[1], out[2]
	}
	for i, v := range k.k.Idx {
		out[i] = Expr{e: v}
	}
	return out[0], out[1], out[2]
}

func (k *Block) alloc(scope ir.Scope, prefix string, dt DType, dims []int) *Tensor {
	if !k.ok("alloc") {
		return nil
	}
	b := &ir.Buffer{Name: k.f.name(prefix), DType: dt, Scope: scope, Pos: callerPos()}
	for _, d := range dims {
		b.Shape = append(b.Shape, ir.IntConst(int64(d)))
	}
	k.k.Allocs = append(k.k.Allocs, b)
	return &Tensor{f: k.f, b: b}
}

// Shared allocates a tile in shared memory.
func (k *Block) Shared(dt DType, dims ...int) *Tensor { return k.alloc(ir.Shared, "s", dt, dims) }

// Fragment allocates a tile spread over the registers of the block's
// threads; the compiler picks which thread holds which element.
func (k *Block) Fragment(dt DType, dims ...int) *Tensor { return k.alloc(ir.Fragment, "f", dt, dims) }

// Local allocates a small array in each thread's registers.
func (k *Block) Local(dt DType, dims ...int) *Tensor { return k.alloc(ir.Local, "l", dt, dims) }

// Var allocates a scalar variable with an initial value; read it with Val
// (or pass it where an expression is expected) and write it with Assign.
// In a persistent walk (a Serial loop around the Pipelined one), a Var set
// once, before the pipelined loop, from inputs, sizes, loop indices and
// other such Vars holds a value computed once an iteration, which a
// producer warpgroup may use too (its copies' addresses: the walk's tile).
func (k *Block) Var(dt DType, init any) *Tensor {
	t := k.alloc(ir.Local, "v", dt, []int{1})
	if t != nil {
		t.Assign(init)
	}
	return t
}

// Let computes v once, where it stands, and returns its value: for an
// expression used several times (GELU's x = acc + bias, which would
// otherwise be read and added at each use). Inside a Parallel loop it is
// computed once per point. It is a scalar variable (Var) of v's type.
func (k *Block) Let(v any) Expr {
	e := lift(v)
	if e.err != "" {
		return e
	}
	t := k.Var(e.e.Type(), e)
	if t == nil {
		return Expr{err: "let: no variable"}
	}
	return t.Val()
}

// Copy copies a tile: src and dst are Tensors or Regions of any scope with
// the same tile shape; elements convert to dst's type. Parts of a global
// region past the tensor's edge read as zero and are not written. A last
// argument EvictFirst or EvictLast tells L2 how the global tile is used.
func (k *Block) Copy(src, dst any, hint ...CacheHint) {
	if !k.ok("copy") {
		return
	}
	pos := callerPos()
	s, ok1 := k.f.region("copy", pos, src)
	d, ok2 := k.f.region("copy", pos, dst)
	if len(hint) > 1 {
		k.f.errorf("copy", pos, "%d cache hints; give at most one", len(hint))
		return
	}
	if ok1 && ok2 {
		c := &ir.Copy{At: ir.At{P: pos}, Src: s, Dst: d}
		if len(hint) == 1 {
			c.Cache = hint[0]
		}
		k.f.emit("copy", pos, c)
	}
}

// CacheHint is Copy's optional last argument: how long the global tile's
// lines should stay in L2 (ir.CacheHint). On Hopper, TMA loads and a
// fragment's paired f32 stores to global memory pass it on; other
// lowerings drop it.
type CacheHint = ir.CacheHint

const (
	// EvictFirst: the tile is read once (a stream of pages).
	EvictFirst = ir.EvictFirst
	// EvictLast: the tile is read again soon.
	EvictLast = ir.EvictLast
)

// Prefetch hints that the global tile src will be read soon, e.g. by the
// block that runs one wave later: its cache lines are fetched into L2.
// It changes no result; parts past the tensor's edge are skipped.
func (k *Block) Prefetch(src any) {
	if !k.ok("prefetch") {
		return
	}
	pos := callerPos()
	if s, ok := k.f.region("prefetch", pos, src); ok {
		k.f.emit("prefetch", pos, &ir.Prefetch{At: ir.At{P: pos}, Src: s})
	}
}

// NumSMs is Func.NumSMs, for use in the kernel's body.
func (k *Block) NumSMs() Expr {
	if !k.ok("num_sms") {
		return Int(0)
	}
	return k.f.NumSMs()
}

// AtomicAdd adds the tile src into the global region dst atomically.
func (k *Block) AtomicAdd(src, dst any) {
	if !k.ok("atomic_add") {
		return
	}
	pos := callerPos()
	s, ok1 := k.f.region("atomic_add", pos, src)
	d, ok2 := k.f.region("atomic_add", pos, dst)
	if ok1 && ok2 {
		k.f.emit("atomic_add", pos, &ir.AtomicAdd{At: ir.At{P: pos}, Src: s, Dst: d})
	}
}

// Ticket adds 1 to counter (one element of a global i32 tensor) once for
// the block, atomically, and leaves the count before the add in dst (one
// element of a shared i32 tile) for every thread. The block's global
// writes before it are seen by any block that draws a later ticket from
// the counter, after its Ticket: the block that finds n-1, of n that write
// and then draw, may read what all n wrote.
func (k *Block) Ticket(counter, dst any) {
	if !k.ok("ticket") {
		return
	}
	pos := callerPos()
	c, ok1 := k.f.region("ticket", pos, counter)
	d, ok2 := k.f.region("ticket", pos, dst)
	if ok1 && ok2 {
		k.f.emit("ticket", pos, &ir.Ticket{At: ir.At{P: pos}, Counter: c, Dst: d})
	}
}

// Signal adds 1 to counter (one element of a global i32 tensor) once for
// the block, after every global write the block made before it, so that a
// kernel waiting for the count (WaitCount) sees them. Unlike Ticket the
// block neither learns the count nor waits for the add: the threads that
// compute go on at once.
func (k *Block) Signal(counter any) {
	if !k.ok("signal") {
		return
	}
	pos := callerPos()
	if c, ok := k.f.region("signal", pos, counter); ok {
		k.f.emit("signal", pos, &ir.Signal{At: ir.At{P: pos}, Counter: c})
	}
}

// WaitCount holds the block until counter (one element of a global i32
// tensor) reaches n, counted by Signals or Tickets of the kernel before
// this one on the stream (a chain's earlier step, which this kernel may
// run beside when it starts early: StartEarly), or, in a Cooperative
// kernel, of other blocks of this one. What those blocks wrote before they
// added is then seen by every thread. Outside a Cooperative kernel the
// counter must not be one this kernel's own blocks add to (a block could
// wait for one that never runs).
func (k *Block) WaitCount(counter, n any) {
	if !k.ok("wait_count") {
		return
	}
	pos := callerPos()
	c, ok := k.f.region("wait_count", pos, counter)
	x := lift(n)
	if ok && k.f.check("wait_count", pos, x) {
		k.f.emit("wait_count", pos, &ir.WaitCount{At: ir.At{P: pos}, Counter: c, Min: x.e})
	}
}

// GemmOpt modifies a Gemm.
type GemmOpt func(*ir.Gemm)

var (
	// TransA: A is stored K×M.
	TransA GemmOpt = func(g *ir.Gemm) { g.TransA = true }
	// TransB: B is stored N×K (as K is in attention's Q·Kᵀ).
	TransB GemmOpt = func(g *ir.Gemm) { g.TransB = true }
	// ClearAccum zeroes C before accumulating.
	ClearAccum GemmOpt = func(g *ir.Gemm) { g.Clear = true }
)

// WithPolicy sets how warps split the output tile.
func WithPolicy(p ir.Policy) GemmOpt { return func(g *ir.Gemm) { g.Policy = p } }

// Gemm accumulates C += A·B on the tensor cores.
func (k *Block) Gemm(a, b, c any, opts ...GemmOpt) {
	if !k.ok("gemm") {
		return
	}
	pos := callerPos()
	ra, ok1 := k.f.region("gemm", pos, a)
	rb, ok2 := k.f.region("gemm", pos, b)
	rc, ok3 := k.f.region("gemm", pos, c)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	g := &ir.Gemm{At: ir.At{P: pos}, A: ra, B: rb, C: rc}
	for _, o := range opts {
		if o == nil {
			k.f.errorf("gemm", pos, "nil option")
			return
		}
		o(g)
	}
	k.f.emit("gemm", pos, g)
}

// Fill sets every element of dst to v.
func (k *Block) Fill(dst any, v any) {
	if !k.ok("fill") {
		return
	}
	pos := callerPos()
	r, ok := k.f.region("fill", pos, dst)
	x := lift(v)
	if ok && k.f.check("fill", pos, x) {
		k.f.emit("fill", pos, &ir.Fill{At: ir.At{P: pos}, Dst: r, Value: x.e})
	}
}

// Clear sets every element of dst to zero.
func (k *Block) Clear(dst any) { k.Fill(dst, 0) }

// ReduceOpt modifies a reduction.
type ReduceOpt func(*ir.Reduce)

// Accumulate folds dst's old value into the reduction instead of
// overwriting it.
var Accumulate ReduceOpt = func(r *ir.Reduce) { r.Clear = false }

func (k *Block) reduce(kind ir.ReduceKind, src, dst *Tensor, dim int, opts []ReduceOpt) {
	if !k.ok("reduce_" + kind.String()) {
		return
	}
	pos := callerPos()
	if src == nil || dst == nil || src.b == nil || dst.b == nil {
		k.f.errorf("reduce_"+kind.String(), pos, "nil tile")
		return
	}
	r := &ir.Reduce{At: ir.At{P: pos}, Kind: kind, Src: src.b, Dst: dst.b, Dim: dim, Clear: true}
	for _, o := range opts {
		if o == nil {
			k.f.errorf("reduce_"+kind.String(), pos, "nil option")
			return
		}
		o(r)
	}
	k.f.emit("reduce_"+kind.String(), pos, r)
}

// ReduceSum, ReduceMax, ReduceMin and ReduceAbsMax fold src along dim into
// dst (src's shape without dim).
func (k *Block) ReduceSum(src, dst *Tensor, dim int, opts ...ReduceOpt) {
	k.reduce(ir.ReduceSum, src, dst, dim, opts)
}
func (k *Block) ReduceMax(src, dst *Tensor, dim int, opts ...ReduceOpt) {
	k.reduce(ir.ReduceMax, src, dst, dim, opts)
}
func (k *Block) ReduceMin(src, dst *Tensor, dim int, opts ...ReduceOpt) {
	k.reduce(ir.ReduceMin, src, dst, dim, opts)
}
func (k *Block) ReduceAbsMax(src, dst *Tensor, dim int, opts ...ReduceOpt) {
	k.reduce(ir.ReduceAbsMax, src, dst, dim, opts)
}

// WarpSpecialize asks for a producer warpgroup that issues the pipelined
// loop's loads while the kernel's threads compute (Hopper, where the loop
// loads by TMA; elsewhere the hint is ignored).
func (k *Block) WarpSpecialize() {
	if k.ok("warp_specialize") {
		k.k.WarpSpecialize = true
	}
}

// PingPong asks that, with a producer warpgroup (WarpSpecialize) and two
// consumer warpgroups that each own their rows, the consumers take turns
// issuing the pipelined loop's matrix multiplies: one's softmax then runs
// while the other's multiplies keep the tensor cores busy. A hint, ignored
// where it cannot apply (see docs/language.md).
func (k *Block) PingPong() {
	if k.ok("ping_pong") {
		k.k.PingPong = true
	}
}

// Draw asks that the blocks of a Spread loop draw its values from a
// counter as each is ready for the next, rather than be dealt them by
// block index: a walk over equal tiles whose blocks run at different
// speeds. A hint; the CUDA backend draws where a producer warpgroup loads
// the walk's tiles (Hopper).
func (k *Block) Draw() {
	if k.ok("draw") {
		k.k.Draw = true
	}
}

// LateStart asks that, in a Spread walk dealt by block index whose last
// round is partial, the blocks that walk one value fewer start the given
// number of clock cycles late. Every block then reaches its value
// boundaries (next tile's loads, last tile's stores) at the same moment
// no more: on an H100, 2.8% faster at FlashAttention d256 512 with 32 of
// 132 blocks 8000 cycles late (docs/perf.md). Under a value's time, the
// delay costs those blocks nothing. A hint; the CUDA backend applies it.
func (k *Block) LateStart(cycles int) {
	if k.ok("late_start") {
		k.k.LateStart = cycles
	}
}

// FirstTilesFirst asks that a persistent walk whose producer warpgroup
// loads a tile of its own each iteration (MLA's query rows) issue, in its
// first iteration, the pipelined loop's second fill only once that tile
// and the first fill have landed. Every block asks for its first tiles at
// once, so memory is the bound there, and the first multiply needs only
// those: 1.003-1.004× at MLA b64 kv8k on an H200 (docs/perf.md). A hint;
// the CUDA backend applies it where a producer walks such a tile around a
// single ring of two stages or more.
func (k *Block) FirstTilesFirst() {
	if k.ok("first_tiles_first") {
		k.k.FirstTilesFirst = true
	}
}

// NextEarly lets the kernel after this one on the stream, where that one
// starts early (StartEarly), launch as soon as every block of this one
// has started: its blocks then take the SMs this kernel's blocks free as
// they end. A hint; without it such a kernel starts when this one ends.
func (k *Block) NextEarly() {
	if k.ok("next_early") {
		k.k.NextEarly = true
	}
}

// StartEarly lets the kernel start while the kernel before it on the
// stream (a chain's earlier step that asks NextEarly) still runs, on the
// SMs that kernel's blocks free. Whatever it reads of that kernel's
// writes it must first wait for with WaitCount; it ends only after that
// kernel has, so what comes after both on the stream sees both. Where
// launches cannot overlap (no such driver call, TILEGO_PDL=0, the CPU
// interpreter) it starts after the kernel before it, and its waits find
// their counts reached.
func (k *Block) StartEarly() {
	if k.ok("start_early") {
		k.k.StartEarly = true
	}
}

// Cooperative has every block of the grid run at once (a cooperative
// launch; where the grid cannot all be resident the launch fails rather
// than run it in waves), so that a block may wait (WaitCount) for counts
// that other blocks of the same grid add (Signal, Ticket).
func (k *Block) Cooperative() {
	if k.ok("cooperative") {
		k.k.Cooperative = true
	}
}

// Cluster asks that blocks run in clusters of n (2) along the grid's x,
// and that the tiles a producer warpgroup (WarpSpecialize) loads alike for
// both blocks of a cluster (addresses independent of the x index, such as
// the K and V tiles the query tiles of one head share) be read from
// memory once: each block loads half and multicasts it to both. A hint,
// ignored where it cannot apply (see docs/language.md).
func (k *Block) Cluster(n int) {
	if k.ok("cluster") {
		k.k.Cluster = n
	}
}

// SplitN lets the warpgroups of a wgmma Gemm whose output has fewer 64-row
// tiles than there are warpgroups split its columns (64 rows over two
// warpgroups: each computes half the columns), unless the Gemm's policy is
// FullRow. A hint: elsewhere such a Gemm takes mma.sync.
func (k *Block) SplitN() {
	if k.ok("split_n") {
		k.k.SplitN = true
	}
}

// Rasterize sets the threadblock swizzle: blocks walk panels of panel
// blocks, row- or column-major, for L2 reuse.
func (k *Block) Rasterize(panel int, colMajor bool) {
	if !k.ok("rasterize") {
		return
	}
	k.k.Raster = &ir.Raster{Panel: panel, ColMajor: colMajor, Pos: callerPos()}
}
