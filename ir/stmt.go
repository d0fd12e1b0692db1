package ir

import (
	"fmt"
	"slices"
)

// Stmt is a statement: a tile op or control flow. Every statement records
// the position where the program built it, so errors can point there.
type Stmt interface {
	Position() Pos
}

// At is embedded in statements to carry their position.
type At struct{ P Pos }

// Position returns where the statement was built.
func (a At) Position() Pos { return a.P }

// Copy moves a tile between any two scopes, converting the element type.
// Parts of a global region past the tensor's edge read as zero and are not
// written.
type Copy struct {
	At
	Src, Dst Region
	Cache    CacheHint // how long the global side's lines should stay in L2
}

// CacheHint tells the L2 cache how a copy's global lines will be used. A
// hint: it changes no result, and a lowering that cannot pass it on drops
// it (CUDA passes it on TMA loads and a fragment's paired f32 stores).
type CacheHint uint8

const (
	CacheNormal CacheHint = iota
	// EvictFirst: read once; its lines are the first to go, so that a
	// stream does not push out what is read again (split-KV's partials,
	// written during the stream and read by the combine after it).
	EvictFirst
	// EvictLast: read again soon; its lines are the last to go.
	EvictLast
)

func (h CacheHint) String() string {
	if h > EvictLast {
		return fmt.Sprintf("cache_hint(%d)", uint8(h))
	}
	return [...]string{"", "evict_first", "evict_last"}[h]
}

// Policy says how a Gemm's warps split the output tile.
type Policy uint8

const (
	Square  Policy = iota // warps tile M and N as evenly as possible
	FullRow               // every warp owns whole rows: warps split M only
	FullCol               // every warp owns whole columns: warps split N only
)

func (p Policy) String() string {
	if p > FullCol {
		return fmt.Sprintf("policy(%d)", uint8(p))
	}
	return [...]string{"square", "fullrow", "fullcol"}[p]
}

// Gemm computes C += op(A)·op(B) where op transposes when asked: A is M×K
// (K×M with TransA), B is K×N (N×K with TransB), C is an M×N f32 fragment.
// A may be shared or fragment; B must be shared. Clear zeroes C first.
type Gemm struct {
	At
	A, B, C        Region
	TransA, TransB bool
	Policy         Policy
	Clear          bool
}

// Fill sets every element of a region to Value.
type Fill struct {
	At
	Dst   Region
	Value Expr
}

// ReduceKind selects the reduction.
type ReduceKind uint8

const (
	ReduceSum ReduceKind = iota
	ReduceMax
	ReduceMin
	ReduceAbsMax
)

func (k ReduceKind) String() string { return [...]string{"sum", "max", "min", "absmax"}[k] }

// Reduce folds Src along Dim into Dst, whose shape is Src's without Dim.
// With Clear, Dst is overwritten; otherwise its old value joins the fold.
type Reduce struct {
	At
	Kind  ReduceKind
	Src   *Buffer
	Dst   *Buffer
	Dim   int
	Clear bool
}

// Parallel runs Body once per point of the index space Extents, in any
// order; each point may only write elements indexed by its own Vars.
type Parallel struct {
	At
	Vars    []*Var
	Extents []int
	Body    []Stmt
	// SkipOnes (a hint; the body must be a Scale) says the factors are
	// often all one: a backend may skip the points of a group of threads
	// whose factors are all one, since x·1 is x.
	SkipOnes bool
}

// Scale reports whether p's body is one store x[v] = x[v] · f[...] (in
// either order) over p's own index variables v, with f a load of another
// buffer: a scale of x by factors f. It returns x and f's load.
func (p *Parallel) Scale() (x *Buffer, f *Load, ok bool) {
	if len(p.Body) != 1 {
		return nil, nil, false
	}
	st, isStore := p.Body[0].(*Store)
	if !isStore || len(st.Idx) != len(p.Vars) {
		return nil, nil, false
	}
	for i, e := range st.Idx {
		if e != Expr(p.Vars[i]) {
			return nil, nil, false
		}
	}
	mul, isMul := st.Value.(*Binary)
	if !isMul || mul.Op != Mul {
		return nil, nil, false
	}
	for _, xy := range [][2]Expr{{mul.X, mul.Y}, {mul.Y, mul.X}} {
		self, ok1 := xy[0].(*Load)
		fl, ok2 := xy[1].(*Load)
		if ok1 && ok2 && self.Buf == st.Buf && fl.Buf != st.Buf && slices.Equal(self.Idx, st.Idx) { // the same expressions, pointer for pointer
			return st.Buf, fl, true
		}
	}
	return nil, nil, false
}

// Store writes one element.
type Store struct {
	At
	Buf   *Buffer
	Idx   []Expr
	Value Expr
}

// AtomicAdd adds a tile into a region atomically, element by element, so
// that several blocks may accumulate into the same global tensor.
type AtomicAdd struct {
	At
	Src, Dst Region
}

// Ticket draws a ticket from a counter shared by blocks: the block adds 1
// to Counter, one element of a global i32 tensor, atomically and once, and
// every thread finds the count before its add in Dst, one element of a
// shared i32 tile. What the block wrote to global memory before it is seen
// by a block that draws a later ticket from the same counter, after that
// block's Ticket: of n blocks that each write a piece and then draw, the one
// that finds n-1 may read all n pieces (split-KV's last piece merging the
// others).
type Ticket struct {
	At
	Counter, Dst Region
}

// Signal adds 1 to Counter, one element of a global i32 tensor, once for
// the block, after every global write the block made before it: a kernel
// that waits for the count (WaitCount) then sees those writes. Unlike a
// Ticket the block neither learns the count nor waits for the add.
type Signal struct {
	At
	Counter Region
}

// WaitCount holds the block until Counter, one element of a global i32
// tensor that an earlier kernel on the stream adds to with Tickets (a
// chain's earlier step, running beside this kernel when this one starts
// early: Kernel.StartEarly), reaches Min; what that kernel wrote before its
// Ticket is then seen by every thread of the block. The program must not
// be the one that adds to the counter: a block waiting on another block of
// its own grid could wait for one that never runs.
type WaitCount struct {
	At
	Counter Region
	Min     Expr
}

// Prefetch asks that a global region be fetched into L2 because a block
// will soon read it. A hint with no effect on results: parts past the
// tensor's edge are skipped, and a backend may ignore it.
type Prefetch struct {
	At
	Src Region
}

// LoopKind says how a For may be scheduled.
type LoopKind uint8

const (
	Serial    LoopKind = iota
	Pipelined          // copies of later iterations overlap compute of this one
	Unrolled
	// Spread deals the values of [Start, Stop) out to the grid's blocks:
	// each value runs in exactly one block, and each block runs its own in
	// increasing order. Which block gets which is the backend's to choose:
	// the block's linear index and then every grid-th (the interpreter,
	// and a plain lowering), or the next value drawn from a counter when
	// the block is ready for it (a persistent walk whose tiles take
	// different times on different SMs). A Spread loop is a statement of
	// the kernel body itself, and its Start and Stop are the same in every
	// block.
	Spread
)

func (k LoopKind) String() string {
	return [...]string{"serial", "pipelined", "unrolled", "spread"}[k]
}

// For runs Body for Var = Start, Start+1, ..., Stop-1 (Spread: the values
// of those dealt to this block).
type For struct {
	At
	Var         *Var
	Start, Stop Expr
	Kind        LoopKind
	Stages      int // Pipelined: the number of buffers in flight (a hint)
	Body        []Stmt
}

// Deferred is a statement of a Pipelined loop's body that runs one
// iteration late: the Body built in iteration j runs in iteration j+1, at
// the Deferred's place among that iteration's statements, with the loop
// variable still j; the last iteration's runs after the loop. It lets a
// program order its loop as a software pipeline of two stages (TileLang's
// order and stage), e.g. FlashAttention-3's P·V of tile j issued after the
// Q·Kᵀ of tile j+1, so that the softmax of tile j+1 runs under it.
type Deferred struct {
	At
	Body []Stmt
}

// While runs Body as long as Cond holds.
type While struct {
	At
	Cond Expr
	Body []Stmt
}

// If runs Then when Cond holds, else Else.
type If struct {
	At
	Cond       Expr
	Then, Else []Stmt
}

// Warpgroup runs Body on one warpgroup of the block's threads (threads
// 128·Index to 128·Index+127) while the others skip it: FlashMLA's roles,
// where one warpgroup computes all of a tile's scores and hands them to the
// others through shared memory. The fragments Body uses belong to that
// warpgroup (they are laid out over its 128 threads) and may not be used
// outside such blocks of the same warpgroup. A backend that cannot give
// warpgroups roles runs Body as a plain block: the results are the same.
type Warpgroup struct {
	At
	Index int
	Body  []Stmt
}

// Walk calls fn on every statement in body, parents before children.
func Walk(body []Stmt, fn func(Stmt)) {
	for _, s := range body {
		fn(s)
		switch s := s.(type) {
		case *Parallel:
			Walk(s.Body, fn)
		case *For:
			Walk(s.Body, fn)
		case *Deferred:
			Walk(s.Body, fn)
		case *Warpgroup:
			Walk(s.Body, fn)
		case *While:
			Walk(s.Body, fn)
		case *If:
			Walk(s.Then, fn)
			Walk(s.Else, fn)
		}
	}
}
