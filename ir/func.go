package ir

// Raster is the threadblock rasterization swizzle: consecutive block ids
// walk a panel of Panel blocks along one grid axis before moving along the
// other, so blocks running together share operands in L2.
type Raster struct {
	Panel    int
	ColMajor bool
	Pos      Pos // where the program set it
}

// Kernel is the body launched over a grid of thread blocks.
type Kernel struct {
	At
	Grid    []Expr // 1 to 3 dims: x, y, z
	Threads int
	Idx     []*Var // the block index along each grid dim
	Allocs  []*Buffer
	Body    []Stmt
	Raster  *Raster
	// WarpSpecialize asks for warp specialization: a producer warpgroup issues
	// the pipelined loop's loads while the kernel's threads compute. A
	// hint: a backend that cannot (no TMA loop, not Hopper) ignores it.
	WarpSpecialize bool
	// PingPong asks the consumer warpgroups of a warp-specialized kernel to
	// take turns issuing the pipelined loop's matrix multiplies, so that one
	// warpgroup's element-wise work (a softmax) runs under the other's
	// tensor-core work. A hint, like Producer.
	PingPong bool
	// Draw asks that a Spread walk's blocks draw their values from a
	// counter, each when it is ready for the next (a persistent walk whose
	// producer loads its tiles, on Hopper), rather than be dealt them by
	// block index. A hint, like Producer.
	Draw bool
	// LateStart (clock cycles, 0 for none) has the blocks of a dealt Spread walk
	// whose last round is partial, those that walk one value fewer, start
	// this long late: the blocks' value boundaries, where each loads its
	// next tile and stores the last, then fall apart rather than all at
	// once, and under a value's time the delay costs those blocks nothing.
	// A hint.
	LateStart int
	// FirstTilesFirst asks that, in a persistent walk whose producer loads a tile
	// of its own, the first iteration's second ring fill wait until that
	// tile and the first fill have landed: at a kernel's start every block
	// asks at once, and the first multiply needs only those two. A hint.
	FirstTilesFirst bool
	// NextEarly lets the kernel after this one on the stream, where it
	// starts early (StartEarly), launch once every block of this one has
	// started, rather than when this one ends. A hint.
	NextEarly bool
	// StartEarly says the kernel may start while the kernel before it on the
	// stream (a chain's earlier step) still runs: it waits (WaitCount) for
	// what that kernel writes before it reads it, and it ends only after
	// that kernel has. A backend without such launches starts it after.
	StartEarly bool
	// Cooperative says every block of the grid runs at once (a
	// cooperative launch, which fails rather than run the grid in waves),
	// so a block may wait (WaitCount) for a counter that other blocks of
	// the same grid add to. Without it such a wait is refused: a waiting
	// block could hold the SM that the block it waits for needs.
	Cooperative bool
	// SplitN lets the warpgroups of a wgmma Gemm whose output has fewer
	// 64-row tiles than there are warpgroups split its columns too (MLA's
	// 64×512 accumulator over two), where the policy is not FullRow. A hint.
	SplitN bool
	// Cluster (0 or 1: none, 2) asks that blocks run in clusters of two
	// along the grid's x, and that a producer's loads both blocks of a
	// cluster make alike (addresses independent of x: FlashAttention's K
	// and V, shared by the query tiles of a head) be fetched once, half by
	// each, and multicast to both. A hint, ignored where it cannot apply.
	Cluster int
}

// Func is a whole program: its tensor parameters, its symbolic sizes and
// one kernel.
type Func struct {
	Pos    Pos // where the program was started (tl.NewFunc)
	Name   string
	Params []*Buffer
	Syms   []*Var
	SMs    *Var // the SM count (kind SMCount) when the program uses it
	Kernel *Kernel
}

// Outputs lists the parameters written by the program.
func (f *Func) Outputs() []*Buffer {
	var out []*Buffer
	for _, p := range f.Params {
		if p.Output {
			out = append(out, p)
		}
	}
	return out
}

// SharedBytes is the shared memory the kernel's allocations take.
func (k *Kernel) SharedBytes() int {
	n := 0
	for _, b := range k.Allocs {
		if b.Scope == Shared {
			n = satAdd(n, satMul(b.NumElems(), b.DType.Bytes()))
		}
	}
	return n
}
