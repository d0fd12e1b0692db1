package tl

import (
	"github.com/tilego/tilego/ir"
)

// Parallel runs body once per point of the index space extents, each point
// an independent element-wise step: body is func(i Expr), func(i, j Expr),
// func(i, j, l Expr) or func(idx []Expr), one index per extent.
func (k *Block) Parallel(body any, extents ...int) {
	if !k.ok("parallel") {
		return
	}
	pos := callerPos()
	p := &ir.Parallel{At: ir.At{P: pos}, Extents: extents}
	idx := make([]Expr, len(extents))
	for i := range extents {
		v := &ir.Var{Name: k.f.name("i"), Kind: ir.LoopVar}
		p.Vars = append(p.Vars, v)
		idx[i] = Expr{e: v}
	}
	var run func()
	switch fn := body.(type) {
	case func(Expr):
		if fn != nil && len(idx) == 1 {
			run = func() { fn(idx[0]) }
		}
	case func(Expr, Expr):
		if fn != nil && len(idx) == 2 {
			run = func() { fn(idx[0], idx[1]) }
		}
	case func(Expr, Expr, Expr):
		if fn != nil && len(idx) == 3 {
			run = func() { fn(idx[0], idx[1], idx[2]) }
		}
	case func([]Expr):
		if fn != nil {
			run = func() { fn(idx) }
		}
	}
	if run == nil {
		k.f.errorf("parallel", pos, "body %T does not take %d index arguments", body, len(extents))
		return
	}
	k.f.nest(&p.Body, run)
	k.f.emit("parallel", pos, p)
}

// ScaleRows multiplies each row i of the rows×cols tile x by f[i], as a
// Parallel loop would, with a hint that the factors are mostly one (an
// online softmax that keeps its maximum, as FlashAttention's and MLA's
// do at wide head dims): a backend may skip the multiplies of threads
// whose factors are all one (ir.Parallel's SkipOnes).
func (k *Block) ScaleRows(x, f *Tensor) {
	if !k.ok("scale_rows") {
		return
	}
	pos := callerPos()
	if x == nil || f == nil || x.b == nil || f.b == nil {
		k.f.errorf("scale_rows", pos, "nil tile")
		return
	}
	xs, okX := x.b.StaticShape()
	fs, okF := f.b.StaticShape()
	if !okX || !okF || len(xs) != 2 || len(fs) != 1 || fs[0] != xs[0] {
		k.f.errorf("scale_rows", pos, "scale a rows×cols tile by a tile of its rows; got %s %v by %s %v", x.b.Name, xs, f.b.Name, fs)
		return
	}
	i := &ir.Var{Name: k.f.name("i"), Kind: ir.LoopVar}
	j := &ir.Var{Name: k.f.name("i"), Kind: ir.LoopVar}
	p := &ir.Parallel{At: ir.At{P: pos}, Vars: []*ir.Var{i, j}, Extents: xs}
	k.f.nest(&p.Body, func() {
		I, J := Expr{e: i}, Expr{e: j}
		x.Set(x.At(I, J).Mul(f.At(I)), I, J)
	})
	_, _, p.SkipOnes = p.Scale() // not where the product is converted to x's type: a plain scale then
	k.f.emit("scale_rows", pos, p)
}

func (k *Block) loop(kind ir.LoopKind, start, stop any, stages int, body func(i Expr)) {
	op := kind.String()
	if !k.ok(op) {
		return
	}
	pos := callerPos()
	if body == nil {
		k.f.errorf(op, pos, "nil body")
		return
	}
	lo, hi := lift(start), lift(stop)
	if !k.f.check(op, pos, lo, hi) {
		return
	}
	v := &ir.Var{Name: k.f.name("k"), Kind: ir.LoopVar}
	s := &ir.For{At: ir.At{P: pos}, Var: v, Start: lo.e, Stop: hi.e, Kind: kind, Stages: stages}
	k.f.nest(&s.Body, func() { body(Expr{e: v}) })
	k.f.emit(op, pos, s)
}

// Serial runs body for i = 0 .. n-1 in order.
func (k *Block) Serial(n any, body func(i Expr)) { k.loop(ir.Serial, 0, n, 0, body) }

// SerialRange runs body for i = start .. stop-1 in order.
func (k *Block) SerialRange(start, stop any, body func(i Expr)) {
	k.loop(ir.Serial, start, stop, 0, body)
}

// Spread runs body for t = 0 .. n-1 spread over the grid's blocks: each t
// runs in exactly one block, each block's in increasing order, and the
// backend chooses which block runs which (a persistent walk over tiles,
// whose blocks draw their next tile from a counter where the target does:
// a block on a slower SM then takes fewer). It must be a statement of the
// kernel's body, and n the same in every block.
func (k *Block) Spread(n any, body func(t Expr)) { k.loop(ir.Spread, 0, n, 0, body) }

// Unrolled is Serial with a hint to unroll fully (n should be constant).
func (k *Block) Unrolled(n any, body func(i Expr)) { k.loop(ir.Unrolled, 0, n, 0, body) }

// Pipelined runs body for i = 0 .. n-1 and lets the compiler overlap the
// copies of the next stages-1 iterations with this one's compute.
func (k *Block) Pipelined(n any, stages int, body func(i Expr)) {
	k.loop(ir.Pipelined, 0, n, stages, body)
}

// PipelinedRange is Pipelined over start .. stop-1.
func (k *Block) PipelinedRange(start, stop any, stages int, body func(i Expr)) {
	k.loop(ir.Pipelined, start, stop, stages, body)
}

// Defer, inside a Pipelined loop's body, builds the ops of body as stage 1
// of a two-stage software pipeline: those built in iteration i run one
// iteration later, at this place among iteration i+1's statements, still
// seeing the loop variable as i; the last iteration's run after the loop.
// They read tiles as they are at that moment, so the author orders the loop
// by hand, e.g. FlashAttention's P·V of tile j issued after the Q·Kᵀ of
// tile j+1, so that the softmax of tile j+1 overlaps it. Anywhere else (at
// kernel top level, in another loop kind, under If or While, inside another
// Defer) Build reports an error.
func (k *Block) Defer(body func()) {
	if !k.ok("defer") {
		return
	}
	pos := callerPos()
	if body == nil {
		k.f.errorf("defer", pos, "nil body")
		return
	}
	d := &ir.Deferred{At: ir.At{P: pos}}
	k.f.nest(&d.Body, body)
	k.f.emit("defer", pos, d)
}

// While runs body while cond holds; cond is re-evaluated each time, so it
// should read a variable the body assigns.
func (k *Block) While(cond any, body func()) {
	if !k.ok("while") {
		return
	}
	pos := callerPos()
	c := lift(cond)
	if !k.f.check("while", pos, c) {
		return
	}
	if body == nil {
		k.f.errorf("while", pos, "nil body")
		return
	}
	w := &ir.While{At: ir.At{P: pos}, Cond: c.e}
	k.f.nest(&w.Body, body)
	k.f.emit("while", pos, w)
}

// IfStmt lets an If take an Else.
type IfStmt struct {
	f *Func
	s *ir.If
}

// If runs then when cond holds.
func (k *Block) If(cond any, then func()) IfStmt {
	if !k.ok("if") {
		return IfStmt{}
	}
	pos := callerPos()
	c := lift(cond)
	s := &ir.If{At: ir.At{P: pos}}
	if then == nil {
		k.f.errorf("if", pos, "nil body")
		return IfStmt{f: k.f, s: s}
	}
	if k.f.check("if", pos, c) {
		s.Cond = c.e
		k.f.nest(&s.Then, then)
		k.f.emit("if", pos, s)
	}
	return IfStmt{f: k.f, s: s}
}

// Else runs body when the If's condition does not hold.
func (s IfStmt) Else(body func()) {
	switch {
	case s.f == nil || s.s == nil:
		orphan().errorf("else", callerPos(), "Else on a zero IfStmt: call it on the value If returns")
	case body == nil:
		s.f.errorf("else", callerPos(), "nil body")
	default:
		s.f.nest(&s.s.Else, body)
	}
}

// Warpgroup runs body on warpgroup i of the block's threads alone (threads
// 128·i to 128·i+127), as FlashMLA gives its warpgroups roles: e.g. one
// computes a tile's scores and softmax while the other waits, then both
// multiply by the probabilities through shared memory. The fragments body
// uses belong to warpgroup i: their layouts span its 128 threads (a Gemm's
// 64 rows, one warpgroup's wgmma), and they may be used only in blocks of
// the same warpgroup. Shared tiles carry results to the other warpgroups;
// the compiler puts barriers where they read them. No loops inside.
func (k *Block) Warpgroup(i int, body func()) {
	if !k.ok("warpgroup") {
		return
	}
	pos := callerPos()
	if body == nil {
		k.f.errorf("warpgroup", pos, "nil body")
		return
	}
	s := &ir.Warpgroup{At: ir.At{P: pos}, Index: i}
	k.f.nest(&s.Body, body)
	k.f.emit("warpgroup", pos, s)
}
