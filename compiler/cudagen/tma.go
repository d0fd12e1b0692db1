package cudagen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
)

// TMA loads for pipelined loops (sm_90a; Options.NoTMA or SwitchTMA off
// turn them off). When every copy a pipelined loop prefetches is a whole box of a
// global tensor, into a 128B-swizzled shared tile, one thread issues the
// copies of an iteration as TMA loads, one per 128-byte panel, and they
// complete on that ring slot's mbarrier; the iteration waits on the
// barrier's phase instead of on cp.async groups. The tensor maps are
// encoded when a launch is bound to its tensors and passed by value.

// TMASpec is one tensor map a program takes, after its other parameters.
type TMASpec struct {
	Param int      // the global parameter it describes
	Box   []uint32 // elements per dim, innermost first
	// Line: a box of one row that lands unswizzled (tmaLine), of any
	// element type; otherwise the 128B swizzle of the shared tiles.
	Line bool
}

// tmaCopy is one prefetched copy lowered to TMA.
type tmaCopy struct {
	spec   int // index into the program's TMA specs
	rank   int
	panels int // 128-byte panels of the tile's rows
	bytes  int // the whole tile
	row    int // the box dim (innermost first) of the tile's rows; -1 for a line
}

// tmaLoop is a pipelined loop whose prefetches are all TMA loads.
type tmaLoop struct {
	bar     int // shared offset of its stages' mbarriers (8 bytes each)
	lateBar int // with split rings (split_rings.go), the late ring's
	copies  map[*ir.Copy]*tmaCopy
	// outer, when not nil, is the serial loop (a statement of the kernel
	// body) whose iterations each run this loop once, as a persistent
	// kernel's walk over its tiles: the barriers are set up once, before
	// it, and the ring's positions run on across its iterations (ringPos).
	outer *ir.For
}

// tmaEnabled: unless Options.NoTMA, or the TMA switch is off.
func tmaEnabled(o Options) bool { return o.Switches.Choose(SwitchTMA, !o.NoTMA) }

// planTMA picks the pipelined loops whose prefetches TMA can do and gives
// each loop's barriers shared memory after everything else.
func planTMA(c *compilation) {
	if c.opts.Arch != "sm_90a" || !tmaEnabled(c.opts) {
		return
	}
	c.tma = map[*ir.For]*tmaLoop{}
	outer, alone := loopNesting(c.f.Kernel.Body)
	ir.Walk(c.f.Kernel.Body, func(st ir.Stmt) { // in program order, so the source is deterministic
		f, ok := st.(*ir.For)
		cps := c.smem.hoisted[f]
		if !ok || len(cps) == 0 || align(c.smem.total, 8)+8*c.rings(f)*c.ringSize(f) > ir.DefaultLimits.MaxSharedBytes {
			return
		}
		if !alone[f] && outer[f] == nil { // deeper in loops: cp.async, whose ring drains each run
			return
		}
		l := &tmaLoop{copies: map[*ir.Copy]*tmaCopy{}, outer: outer[f]}
		var specs []TMASpec
		for _, cp := range cps {
			tc, spec, ok := c.tmaCopy(cp)
			if !ok {
				return
			}
			tc.spec = len(c.tmaSpecs) + len(specs)
			specs = append(specs, spec)
			l.copies[cp] = tc
		}
		c.tmaSpecs = append(c.tmaSpecs, specs...)
		c.smem.total = align(c.smem.total, 8)
		l.bar = c.smem.total
		c.smem.total += 8 * c.ringSize(f)
		if c.rings(f) == 2 {
			l.lateBar = c.smem.total
			c.smem.total += 8 * c.ringSize(f)
		}
		c.tma[f] = l
	})
}

// tmaCopy says how cp (global to shared) goes by TMA, if it can: as
// swizzled boxes (tmaBox) or as one line (tmaLine).
func (c *compilation) tmaCopy(cp *ir.Copy) (*tmaCopy, TMASpec, bool) {
	sb := c.smem.bufs[cp.Dst.Buf]
	if tc, spec, ok := c.tmaBox(cp.Src, sb); ok {
		return tc, spec, true
	}
	return c.tmaLine(cp.Src, sb)
}

// tmaLine says how the global region g, which keeps only its last dim,
// loads into the one-row shared tile sb by a single unswizzled box, if it
// can: a row of 16-byte multiples up to 256 elements of any type TMA
// knows (a row of per-query statistics in f32, say), from a tensor of
// rank 1-4 whose last dim is contiguous and whose other strides are
// multiples of 16 bytes, the row's start provably a multiple of 16 bytes
// too. A one-row tile's layout is linear (its swizzle
// XORs with row 0), so the box lands as the threads read it. Elements
// past the tensor's end arrive as zeros, as cp.async's do.
func (c *compilation) tmaLine(g ir.Region, sb *smemBuf) (*tmaCopy, TMASpec, bool) {
	p := g.Buf
	n := len(p.Shape)
	if p.Scope != ir.Global || n < 1 || n > 4 || sb == nil || sb.dt != p.DType || sb.rows != 1 || !tmaLineType(p.DType) {
		return nil, TMASpec{}, false
	}
	if !g.Keep[n-1] || slices.Contains(g.Keep[:n-1], true) || g.Extent[n-1] != sb.cols {
		return nil, TMASpec{}, false
	}
	// The row must start on 16 bytes: boxes of a packed sequence's
	// statistics from odd offsets faulted on an H200 (illegal
	// instruction), where the same loads from multiples of 64 ran.
	if sb.cols > 256 || sb.cols*sb.eb%16 != 0 || multipleOf(g.Start[n-1])*int64(sb.eb)%16 != 0 {
		return nil, TMASpec{}, false
	}
	if !tmaStrides(p) {
		return nil, TMASpec{}, false
	}
	box := make([]uint32, n)
	for d := range box {
		box[d] = 1
	}
	box[0] = uint32(sb.cols)
	return &tmaCopy{rank: n, panels: 1, bytes: sb.cols * sb.eb, row: -1},
		TMASpec{Param: c.paramIndex(p), Box: box, Line: true}, true
}

// tmaStrides: global tensor p's last dim is contiguous and its other
// strides are multiples of 16 bytes, as a tensor map needs. A tensor whose
// rows are not (77 bf16 columns, say) stays on cp.async.
func tmaStrides(p *ir.Buffer) bool {
	n := len(p.Shape)
	if n == 1 {
		return p.Strides == nil || isConst(p.Strides[0], 1)
	}
	rowSteps := []ir.Expr{p.Shape[n-1]} // row-major: every outer stride is a multiple of the row's length
	if p.Strides != nil {
		if !isConst(p.Strides[n-1], 1) {
			return false
		}
		rowSteps = p.Strides[:n-1]
	}
	for _, st := range rowSteps {
		if multipleOf(st)%int64(16/p.DType.Bytes()) != 0 {
			return false
		}
	}
	return true
}

// isConst: e is the constant v.
func isConst(e ir.Expr, v int64) bool {
	x, ok := ir.ConstInt(e)
	return ok && x == v
}

// tmaLineType: the element types a line moves (those tensor maps name).
func tmaLineType(dt ir.DType) bool {
	return tmaMoves(dt) || dt == ir.F32 || dt == ir.I32
}

// tmaBox says how the global region g and the shared tile sb move as TMA
// boxes, if they can: a 16-bit or 8-bit float tensor of the tile's type
// (a box moves bits, it does not convert) whose last dim is contiguous and
// whose rows step in multiples of 16 bytes, a region keeping its last dim
// and one other (the rows: the one before it, or one further out, as a
// sequence's rows in a packed [tokens, heads, dim] tensor, the dims
// between them a box of 1), rank 2-4, and a whole tile of ≤ 256 rows in
// 128-byte panels (64 or 128 elements) with the 128B swizzle (TMA's own
// layout for such a box), each panel on a period of the pattern
// (hardwareSwizzled).
func (c *compilation) tmaBox(g ir.Region, sb *smemBuf) (*tmaCopy, TMASpec, bool) {
	return c.tmaBoxOf(g, sb, tmaMoves)
}

// tmaBoxOf is tmaBox for the element types moves accepts.
func (c *compilation) tmaBoxOf(g ir.Region, sb *smemBuf, moves func(ir.DType) bool) (*tmaCopy, TMASpec, bool) {
	p := g.Buf
	n := len(p.Shape)
	if p.Scope != ir.Global || !moves(p.DType) || n < 2 || n > 4 || sb == nil || sb.dt != p.DType {
		return nil, TMASpec{}, false
	}
	r := tmaRowDim(g)
	if r < 0 || !tmaStrides(p) {
		return nil, TMASpec{}, false
	}
	if sb.swizzleMode() != 1 || !sb.hardwareSwizzled() || sb.rows > 256 || sb.cols*sb.eb%128 != 0 {
		return nil, TMASpec{}, false
	}
	if g.Extent[r] != sb.rows || g.Extent[n-1] != sb.cols {
		return nil, TMASpec{}, false
	}
	box := make([]uint32, n) // innermost first: one 128-byte panel of columns, the tile's rows, 1s
	for d := range box {
		box[d] = 1
	}
	box[0], box[n-1-r] = uint32(128/sb.eb), uint32(sb.rows)
	return &tmaCopy{rank: n, panels: sb.cols * sb.eb / 128, bytes: sb.rows * sb.cols * sb.eb, row: n - 1 - r},
		TMASpec{Param: c.paramIndex(p), Box: box}, true
}

// tmaRowDim is the dim of g's rows: the last dim and one other must be
// kept, and that other is the rows; -1 if g keeps others.
func tmaRowDim(g ir.Region) int {
	n, r := len(g.Keep), -1
	if n < 2 || !g.Keep[n-1] {
		return -1
	}
	for d := range n - 1 {
		if g.Keep[d] {
			if r >= 0 {
				return -1
			}
			r = d
		}
	}
	return r
}

// tmaCoords are panel p's box coordinates in region g, innermost first.
func (e *emitter) tmaCoords(g ir.Region, p int) string { return e.tmaCoordsAt(g, p, "") }

// tmaCoordsAt is tmaCoords with rowOff (C++, "" for none) added to the row.
func (e *emitter) tmaCoordsAt(g ir.Region, p int, rowOff string) string {
	n, r := len(g.Start), tmaRowDim(g)
	coords := []string{fmt.Sprintf("%s + %d", e.expr(g.Start[n-1]), 128/g.Buf.DType.Bytes()*p)}
	for d := n - 2; d >= 0; d-- {
		if d == r {
			coords = append(coords, e.expr(g.Start[d])+rowOff)
		} else {
			coords = append(coords, e.expr(g.Start[d]))
		}
	}
	return strings.Join(coords, ", ")
}

func (c *compilation) paramIndex(b *ir.Buffer) int {
	for i, p := range c.f.Params {
		if p == b {
			return i
		}
	}
	return -1
}

// tmaParams are the kernel's tensor-map parameters.
func (e *emitter) tmaParams() []string {
	var out []string
	for i := range e.c.tmaSpecs {
		out = append(out, fmt.Sprintf("const __grid_constant__ tl::TensorMap tm%d", i))
	}
	return out
}

// barRing is a ring of n mbarriers at shared offset off, each expecting
// arrivals arrivals a phase.
type barRing struct{ off, n, arrivals int }

// initBars initializes rings of mbarriers from one thread and publishes
// them to the block (all its threads must get here).
func (e *emitter) initBars(rings ...barRing) {
	e.open("if (tid == 0)")
	for _, r := range rings {
		e.line("for (int s = 0; s < %d; ++s) tl::mbar_init(tl::smem_addr(smem + %d) + 8 * s, %d);", r.n, r.off, r.arrivals)
	}
	e.line("tl::fence_mbar_init();")
	e.close()
	if e.c.cluster { // the partner's arrivals and multicasts reach these too (cluster.go)
		e.line("tl::cluster_sync();")
	} else {
		e.line("__syncthreads();")
	}
}

// tmaInit initializes loop l's barriers (one arrival each: the issuing
// thread's expect_tx) before its prologue.
func (e *emitter) tmaInit(l *tmaLoop, stages int) { e.initBars(barRing{l.bar, stages, 1}) }

// tmaIssue issues copies (their TMA forms in tc, loop variables bound by
// the caller) into ring slot `slot`, completing on the barrier of that
// slot in the ring at shared offset bars, from the thread guard names (""
// when the caller is already one thread).
func (e *emitter) tmaIssue(bars int, tc map[*ir.Copy]*tmaCopy, copies []*ir.Copy, slot, guard string) {
	total := 0
	for _, cp := range copies {
		total += tc[cp].bytes
	}
	bar := fmt.Sprintf("tl::smem_addr(smem + %d) + 8 * (%s)", bars, slot)
	if guard != "" {
		e.open("if (%s)", guard)
	} else {
		e.open("")
	}
	e.line("tl::mbar_arrive_expect_tx(%s, %d);", bar, total)
	for _, cp := range copies {
		e.tmaPanels(tc[cp], cp, bar)
	}
	e.close()
}

// tmaPanels issues copy cp's TMA boxes, one a 128-byte panel,
// completing on barrier bar.
func (e *emitter) tmaPanels(tc *tmaCopy, cp *ir.Copy, bar string) {
	sb := e.c.smem.bufs[cp.Dst.Buf]
	for p := range tc.panels {
		dst := fmt.Sprintf("tl::smem_addr(%s) + %d", e.sharedBase(cp.Dst.Buf), p*sb.rows*128)
		if e.multicast {
			e.clusterLoad(tc, sb, cp, p, dst, bar)
			continue
		}
		if cp.Cache != ir.CacheNormal {
			e.line("tl::tma_load_%dd_hint(%s, &tm%d, %s, %s, tl::l2_%s());", tc.rank, dst, tc.spec, e.tmaCoords(cp.Src, p), bar, cp.Cache)
			continue
		}
		e.line("tl::tma_load_%dd(%s, &tm%d, %s, %s);", tc.rank, dst, tc.spec, e.tmaCoords(cp.Src, p), bar)
	}
}

// loopNesting sorts the Pipelined loops of a kernel body: alone, those in
// no loop; outer, those that are a statement of the body of a serial loop
// that is itself a statement of the kernel body (only when there is one
// such loop, so that one ring count serves), mapped to that loop.
func loopNesting(body []ir.Stmt) (outer map[*ir.For]*ir.For, alone map[*ir.For]bool) {
	outer, alone = map[*ir.For]*ir.For{}, map[*ir.For]bool{}
	var inLoop func(body []ir.Stmt, depth int)
	inLoop = func(body []ir.Stmt, depth int) {
		for _, st := range body {
			switch s := st.(type) {
			case *ir.For:
				if s.Kind == ir.Pipelined && depth == 0 {
					alone[s] = true
				}
				inLoop(s.Body, depth+1)
			case *ir.While:
				inLoop(s.Body, depth+1)
			case *ir.If:
				inLoop(s.Then, depth)
				inLoop(s.Else, depth)
			case *ir.Warpgroup:
				inLoop(s.Body, depth)
			}
		}
	}
	inLoop(body, 0)
	for _, st := range body {
		if f, ok := st.(*ir.For); ok && (f.Kind == ir.Serial || f.Kind == ir.Spread) {
			for _, st := range f.Body {
				if g, ok := st.(*ir.For); ok && g.Kind == ir.Pipelined {
					outer[g] = f
				}
			}
		}
	}
	if len(outer) > 1 {
		clear(outer)
	}
	return outer, alone
}

// ringBase declares where the ring of a loop run once per iteration of
// an outer loop (tmaLoop.outer) stands at this run's first iteration
// (after lo and hi).
func (e *emitter) ringBase(l *tmaLoop) {
	if l != nil && l.outer != nil {
		e.line("const int rb = lo - ring;")
	}
}

// ringAdvance counts this run's iterations into ring.
func (e *emitter) ringAdvance(l *tmaLoop) {
	if l != nil && l.outer != nil {
		e.line("ring += max(0, hi - lo);")
	}
}

// ringPos is iteration v's position in its loop's ring of buffers: v - lo,
// or, for a loop run once per iteration of an outer loop, counted on from
// its earlier runs (v - rb, rb = lo - ring, ring the iterations so far).
// The barriers' phases follow the position, so they need no reset.
func (e *emitter) ringPos(l *tmaLoop, v string) string {
	if l != nil && l.outer != nil {
		return fmt.Sprintf("(%s - rb)", v)
	}
	return fmt.Sprintf("(%s - lo)", v)
}

// tmaWait waits until the copies of iteration v (ring slot i % stages,
// the (i / stages)-th use of that slot, i = v - lo) have landed.
func (e *emitter) tmaWait(l *tmaLoop, v string, stages int) {
	pos := e.ringPos(l, v)
	e.line("tl::mbar_wait(tl::smem_addr(smem + %d) + 8 * (%s %% %d), (%s / %d) & 1);", l.bar, pos, stages, pos, stages)
}

// tmaMoves: the compiler moves dt by TMA (16-bit floats, and 8-bit ones
// as bytes).
func tmaMoves(dt ir.DType) bool {
	switch dt {
	case ir.BF16, ir.F16, ir.F8E4M3, ir.F8E5M2:
		return true
	}
	return false
}
