// Package fuzz is a differential fuzzer for tile programs: it generates
// random valid programs from a seed, runs each on the interpreter, emits
// CUDA for both targets (and, with a GPU, runs it there and compares), and
// shrinks a failing program to a minimal Go reproducer.
//
// A program is generated as a Prog, a small serializable description (a
// list of ops over a list of buffers); build.go turns it into a tl program
// and gosrc.go into Go source, so that the shrinker edits the description
// and the reproducer reads like a kernel someone wrote.
package fuzz

import (
	"github.com/tilego/tilego/ir"
)

// Prog describes one program. Every block of the grid owns BM rows of
// every row-indexed global tensor (rows bx·BM ..), and walks its columns in
// tiles of BN.
type Prog struct {
	Seed    uint64
	Threads int
	Blocks  int  // grid x when rows are constant (CeilDiv(Rows, BM) otherwise)
	BM, BN  int  // the block's tile: rows, columns
	Rows    int  // rows of the row-indexed tensors (a partial last tile when not a multiple of BM)
	SymRows bool // Rows is a Sym bound at launch
	SplitN  bool // the SplitN hint
	WS      bool // the WarpSpecialize hint (Hopper: a producer warpgroup issues a pipelined loop's loads)
	// Spread > 0: a persistent kernel of Spread blocks whose body runs in a
	// Spread loop over the row tiles; the tile index stands for bx.
	Spread int
	// UnboundSym: the body runs under an If on a Sym no parameter binds
	// (Switches.UnboundSym).
	UnboundSym bool
	// RowVar: the block's row tile is a variable the kernel sets before
	// the body, bx plus a read of the first input that is always zero,
	// which the compiler cannot see through (as a packed sequence's offset
	// read from its offsets tensor). Repeat > 0: the body runs Repeat
	// times in a serial loop (its index unused), so a pipelined loop in
	// it sits in a serial loop, after the variable.
	RowVar bool
	Repeat int
	Bufs   []Buf
	Body   []Op
}

// Scope of a Buf: a parameter or an on-chip tile.
type Scope uint8

const (
	In Scope = iota
	Out
	Shared
	Frag
	Local
)

func (s Scope) global() bool { return s == In || s == Out }

// Buf is a parameter or an on-chip tile.
type Buf struct {
	Name  string
	Scope Scope
	DT    ir.DType
	// Shape of an on-chip tile; of a parameter, the sizes of its dims, where
	// RowsDim stands for the program's Rows (a Sym when SymRows).
	Shape []int
	// Perm, for a parameter, is the order of its dims in memory from the
	// outermost (BSHD-like layouts); nil is row major.
	Perm     []int
	Plain    bool // a shared tile without swizzle
	Family   int  // fragments: those with the same family share one layout
	Role     int  // fragments used only in Warpgroup blocks: 1 + the warpgroup (0: none)
	Accum    bool // an output accumulated into (atomics): starts from random values, not poison
	Operand  bool // a fragment that is a Gemm's A operand (its layout is the operand's)
	Pipeline bool // a shared tile loaded inside a Pipelined loop, used only there
}

// RowsDim in a parameter's Shape is the program's row count.
const RowsDim = -1

// Kind of an Op.
type Kind uint8

const (
	OpCopy Kind = iota
	OpFill
	OpReduce
	OpGemm
	OpParallel
	OpAtomic
	OpLoop
	OpDefer
	OpIf
	OpWhile
	OpPrefetch  // a hint: fetch the global tile Src into L2
	OpWarpgroup // Body runs on warpgroup N alone
)

// LoopKind of an OpLoop.
type LoopKind uint8

const (
	Serial LoopKind = iota
	Unrolled
	Pipelined
)

// Op is one statement. Src, Dst (and A, B, C for Gemm) name buffers with a
// region.
type Op struct {
	Kind     Kind
	Src, Dst Ref
	// OpFill: the value. OpLoop: trip count N, stages. OpIf: the condition
	// compares the innermost loop index (or bx) with Const.
	Value  float64
	Cache  int // OpCopy from or to global: 0 normal, 1 EvictFirst, 2 EvictLast
	N      int
	Stages int
	Loop   LoopKind
	// OpReduce
	Reduce ir.ReduceKind
	Dim    int
	Accum  bool
	// OpGemm: A = Src, B = Dst, C = C
	C              Ref
	TransA, TransB bool
	Clear          bool
	Policy         ir.Policy
	// OpParallel: Dst[vars] = Expr over the loop of Dst's shape, where
	// Mask (if set: "le", "gt") holds for i + Off against the last loop
	// variable (a causal mask; for a 1-D loop against Off alone)
	Expr *Expr
	Mask string
	Off  int
	Ext  []int // the loop's extents when not Dst's shape (Switches.ParallelPastFrag)
	// OpIf: compare var Var (0 = bx, d = loop at depth d) with Const
	Var   int
	Const int
	Cmp   string // "lt", "eq", "ge"
	Body  []Op
	Else  []Op
}

// Ref names a buffer and its region: one Spec per dim (nil: the whole
// buffer).
type Ref struct {
	Buf  int
	Spec []Spec
}

// Spec is one dim of a global region: a tile of N indexed by a variable
// (Var: 1 = bx, 1+d = the loop at depth d), N elements from Const (Var 0),
// or a single index (Drop: the dim is dropped), the variable's value or
// Const.
type Spec struct {
	Var   int
	Const int
	N     int
	Drop  bool
}

// Expr is a Parallel loop's value: a tree of arithmetic over loads.
type Expr struct {
	Op   string   // see exprOps in build.go
	Buf  int      // "load": the buffer
	Map  []int    // "load": which loop variable indexes each dim
	Off  []int    // "load" of a shared or local tile: added to each index (mod the dim)
	Val  float64  // "const"
	Mul  [2]int   // "index": Cast((i·Mul[0] + j·Mul[1] + bx) mod Mod)
	Mod  int      // "index"
	Args []*Expr  // operands
	DT   ir.DType // "cast": the type
}
