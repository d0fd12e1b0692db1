package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/ir"
)

// smemBuf is where a shared tile lives and how its elements are placed.
// A tile is viewed as rows × cols (cols = its last dim). Rows wider than
// 128 bytes are cut into 128-byte panels stored one after another, and the
// 16-byte chunks of each panel row are XOR-swizzled by the row, so that
// (1) the 8 rows an ldmatrix reads at one column fall in 8 different bank
// groups and (2) each panel is the canonical 128B-swizzled layout that
// wgmma's matrix descriptors and TMA describe (64- and 32-byte rows get
// the 64B and 32B patterns).
type smemBuf struct {
	off, stageBytes, stages int
	rows, cols, eb          int
	dt                      ir.DType // the element type: a bulk copy moves bits, it does not convert
	panelW                  int      // bytes of a row in one panel
	swzN, swzRep            int      // chunk ^= (row / swzRep) % swzN; swzN 1 = none
}

// swizzleMode is the matrix-descriptor swizzle of a panel (1 = 128B,
// 2 = 64B, 3 = 32B), or 0 when the tile is not in a canonical layout.
func (sb *smemBuf) swizzleMode() int {
	switch {
	case sb.panelW == 128 && sb.swzN == 8:
		return 1
	case sb.panelW == 64 && sb.swzN == 4:
		return 2
	case sb.panelW == 32 && sb.swzN == 2:
		return 3
	}
	return 0
}

// hardwareSwizzled reports whether the hardware's view of the tile's
// swizzle (TMA boxes, wgmma descriptors) is the threads' view (tl::swz).
// The hardware XORs a 16-byte chunk with address bits above the 128-byte
// unit, so its pattern restarts every 8 panel rows counted from a period
// boundary (1024 bytes for 128B); tl::swz restarts it at every panel. The
// two agree when each panel starts on a boundary: one panel, or rows a
// multiple of 8. A 4-row bf16 tile of 1024 columns does not: its odd
// panels start 512 bytes into a period, so a TMA store read them with
// the chunks of rows 4-7.
func (sb *smemBuf) hardwareSwizzled() bool {
	return sb.swizzleMode() != 0 && (sb.cols*sb.eb <= sb.panelW || sb.rows%8 == 0)
}

type smemPlan struct {
	bufs    map[*ir.Buffer]*smemBuf
	total   int
	scratch int                    // offset of the cross-warp reduction scratch
	hoisted map[*ir.For][]*ir.Copy // copies a pipelined loop issues ahead
	walk    *walkLoad              // a persistent walk's tile loads given buffers of their own (persistent_loads.go), or nil
}

// smemAlign is the period of the 128B swizzle: wgmma descriptors and TMA
// need it for the tiles they address; the rest, which only threads address
// (their swizzle computed from the row and column alone), get 128 bytes.
const smemAlign, smemAlignThreads = 1024, 128

// hardwareTiles lists the shared tiles that a wgmma descriptor or a bulk
// copy may address: the operands of wgmma Gemms, and the tiles loaded from
// or stored (or added) to global memory.
func hardwareTiles(c *compilation) map[*ir.Buffer]bool {
	hw := map[*ir.Buffer]bool{}
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Gemm:
			if c.wgmma[s] {
				hw[s.A.Buf], hw[s.B.Buf] = true, true
			}
		case *ir.Copy:
			switch {
			case s.Src.Buf.Scope == ir.Global && s.Dst.Buf.Scope == ir.Shared:
				hw[s.Dst.Buf] = true
			case s.Src.Buf.Scope == ir.Shared && s.Dst.Buf.Scope == ir.Global:
				hw[s.Src.Buf] = true
			}
		case *ir.AtomicAdd:
			if s.Src.Buf.Scope == ir.Shared && s.Dst.Buf.Scope == ir.Global {
				hw[s.Src.Buf] = true
			}
		}
	})
	return hw
}

// placeSharedTiles places every shared tile, gives the tiles filled by a
// pipelined loop's copies one buffer per stage, and reserves scratch for
// reductions across warps. A persistent walk's tile loads (persistent_loads.go) get
// two buffers where they fit beside the rest, else one, else are left to
// the consumers.
func placeSharedTiles(c *compilation) error {
	p, err := placeWalk(c, walkCandidates(c))
	if err != nil {
		return err
	}
	c.smem = p
	return nil
}

// placeWalk places the tiles with w's in two buffers each, else one, with
// room left for the barriers; else (or with w nil) without a walk.
func placeWalk(c *compilation, w *walkLoad) (*smemPlan, error) {
	for _, n := range []int{2, 1} {
		if w == nil {
			break
		}
		w.stages = n
		if p, err := placeShared(c, w); err == nil && p.total+w.barrierBytes(c) <= ir.DefaultLimits.MaxSharedBytes {
			p.walk = w
			return p, nil
		}
	}
	return placeShared(c, nil)
}

// placeShared is placeSharedTiles' placement, with walk's tiles (when not nil)
// given walk.stages buffers and kept apart from every other tile.
func placeShared(c *compilation, walk *walkLoad) (*smemPlan, error) {
	k := c.f.Kernel
	p := &smemPlan{bufs: map[*ir.Buffer]*smemBuf{}, hoisted: map[*ir.For][]*ir.Copy{}}
	stages := map[*ir.Buffer]int{}
	ir.Walk(k.Body, func(s ir.Stmt) {
		f, ok := s.(*ir.For)
		if !ok || f.Kind != ir.Pipelined || f.Stages < 2 {
			return
		}
		for _, cp := range c.hoistable(f) {
			p.hoisted[f] = append(p.hoisted[f], cp)
			stages[cp.Dst.Buf] = max(stages[cp.Dst.Buf], c.ringSize(f))
		}
	})
	// Tiles whose lifetimes do not overlap share bytes (first fit), e.g. an
	// epilogue's staging tile reuses the main loop's operand tiles.
	live := ir.LiveRanges(k.Body)
	for b := range asyncLastWrites(k.Body) {
		live[b] = ir.Span{First: -1, Last: 1 << 30}
	}
	if walk != nil { // the producer fills them while the consumers finish the tile before
		for b := range walk.bufs {
			stages[b] = walk.stages
			live[b] = ir.Span{First: -1, Last: 1 << 30}
		}
	}
	hw := hardwareTiles(c)
	off := 0
	var placed []*ir.Buffer
	for _, b := range k.Allocs {
		if b.Scope != ir.Shared {
			continue
		}
		sb := bufLayout(b)
		a := smemAlign
		if !hw[b] {
			a = smemAlignThreads
			sb.stageBytes = align(sb.rows*sb.cols*sb.eb, a)
		}
		sb.stages = max(1, stages[b])
		size := sb.stageBytes * sb.stages
		if _, ok := live[b]; !ok {
			live[b] = ir.Span{First: -1, Last: 1 << 30} // never used: keep it apart
		}
		for moved := true; moved; {
			moved = false
			for _, q := range placed {
				qs := p.bufs[q]
				qEnd := qs.off + qs.stageBytes*qs.stages
				if live[b].Overlaps(live[q]) && sb.off < qEnd && qs.off < sb.off+size {
					sb.off, moved = align(qEnd, a), true
				}
			}
		}
		p.bufs[b] = sb
		placed = append(placed, b)
		off = max(off, sb.off+size)
	}
	p.scratch = off
	scratch := 0
	ir.Walk(k.Body, func(s ir.Stmt) {
		if r, ok := s.(*ir.Reduce); ok {
			if l := c.layouts[r.Dst]; l != nil && crossWarp(c.layouts[r.Src], r.Dim) {
				scratch = max(scratch, k.Threads*l.NumRegs()*4)
			}
		}
	})
	p.total = off + scratch
	if amd(c.opts.Arch) && p.total > sharedLimit(c.opts.Arch) { // no device of the arch has more (NVIDIA's differ by model: Build's Limits say)
		return nil, errAt("kernel", k.P, "shared memory after pipelining is %d bytes, over %s's %d per block; use fewer stages or smaller tiles", p.total, c.opts.Arch, sharedLimit(c.opts.Arch))
	}
	if p.total > ir.DefaultLimits.MaxSharedBytes {
		return nil, errAt("kernel", k.P, "shared memory after pipelining is %d bytes, over the target's %d; use fewer stages or smaller tiles", p.total, ir.DefaultLimits.MaxSharedBytes)
	}
	return p, nil
}

func align(n, a int) int { return (n + a - 1) / a * a }

// asyncLastWrites lists the shared tiles whose last use is a load from
// global memory: nothing waits for that copy (a wait comes before a read),
// so it may land after a later tile's copy into the same bytes. Such a
// tile keeps its bytes to itself.
func asyncLastWrites(body []ir.Stmt) map[*ir.Buffer]bool {
	last := map[*ir.Buffer]ir.Stmt{}
	ir.Walk(body, func(s ir.Stmt) {
		for _, b := range ir.DirectUses(s) {
			last[b] = s
		}
	})
	out := map[*ir.Buffer]bool{}
	for b, s := range last {
		if cp, ok := s.(*ir.Copy); ok && b.Scope == ir.Shared && cp.Dst.Buf == b && cp.Src.Buf.Scope == ir.Global {
			out[b] = true
		}
	}
	return out
}

// hoistable lists the copies of a pipelined loop that can be issued
// iterations ahead: each loads a whole shared tile from global memory, is
// the first statement of the body to write that tile (later ones may
// change it in place, e.g. zero a page's slots past a length, since they
// act on this iteration's buffer of the ring after the copy lands), and
// its address depends only on the loop index, block indices, sizes,
// loads from global inputs, which no block writes (a paged cache's block
// table), and a walk's variables (persistent_vars.go: set before the loop).
func (c *compilation) hoistable(f *ir.For) []*ir.Copy {
	var out []*ir.Copy
	first := map[*ir.Buffer]ir.Stmt{} // the first statement writing each tile
	note := func(b *ir.Buffer, s ir.Stmt) {
		if _, ok := first[b]; !ok {
			first[b] = s
		}
	}
	items := ownStmts(f.Body, nil) // a Deferred copy loads its own iteration's tile too
	for _, top := range items {
		ir.Walk([]ir.Stmt{top}, func(s ir.Stmt) {
			switch s := s.(type) {
			case *ir.Copy:
				note(s.Dst.Buf, top)
			case *ir.Fill:
				note(s.Dst.Buf, top)
			case *ir.Ticket:
				note(s.Dst.Buf, top)
			case *ir.Store:
				note(s.Buf, top)
			}
		})
	}
	copies := map[*ir.Buffer]int{} // loads from global memory
	ir.Walk(f.Body, func(s ir.Stmt) {
		if cp, ok := s.(*ir.Copy); ok && cp.Src.Buf.Scope == ir.Global {
			copies[cp.Dst.Buf]++
		}
	})
	outside := usedOutside(c.f.Kernel.Body, f)
	for _, s := range items {
		cp, ok := s.(*ir.Copy)
		if !ok || cp.Src.Buf.Scope != ir.Global || cp.Dst.Buf.Scope != ir.Shared || first[cp.Dst.Buf] != s || copies[cp.Dst.Buf] != 1 || !cp.Dst.IsWhole() || outside[cp.Dst.Buf] {
			continue
		}
		if c.pureAll(cp.Src.Start) {
			out = append(out, cp)
		}
	}
	return out
}

// usedOutside lists the buffers that statements outside loop f use: a
// tile f loads ahead into a ring of stages has no one stage there, so it
// keeps one buffer, loaded in its iteration.
func usedOutside(body []ir.Stmt, f *ir.For) map[*ir.Buffer]bool {
	inside := map[ir.Stmt]bool{f: true}
	ir.Walk(f.Body, func(s ir.Stmt) { inside[s] = true })
	out := map[*ir.Buffer]bool{}
	ir.Walk(body, func(s ir.Stmt) {
		if !inside[s] {
			for _, b := range ir.DirectUses(s) {
				out[b] = true
			}
		}
	})
	return out
}

func dumpShared(c *compilation) string {
	var b strings.Builder
	for _, buf := range c.f.Kernel.Allocs {
		if s, ok := c.smem.bufs[buf]; ok {
			fmt.Fprintf(&b, "%s: offset %d, %d×%d %d-byte elems, %d stage(s) of %d bytes, %d-byte panels, swizzle %d/%d\n",
				buf.Name, s.off, s.rows, s.cols, s.eb, s.stages, s.stageBytes, s.panelW, s.swzN, s.swzRep)
		}
	}
	fmt.Fprintf(&b, "total %d bytes\n", c.smem.total)
	return b.String()
}

// bufLayout places a shared tile's elements (all but its offset and
// stages): rows wider than 128 bytes go in 128-byte panels, and the
// chunks of each panel row are swizzled.
func bufLayout(b *ir.Buffer) *smemBuf {
	shape, _ := b.StaticShape()
	sb := &smemBuf{eb: b.DType.Bytes(), dt: b.DType, stages: 1, cols: shape[len(shape)-1], rows: 1, swzN: 1, swzRep: 1}
	for _, d := range shape[:len(shape)-1] {
		sb.rows *= d
	}
	rowBytes := sb.cols * sb.eb
	sb.panelW = rowBytes
	if b.Swizzle != ir.SwizzleNone && rowBytes%16 == 0 {
		switch {
		case rowBytes%128 == 0:
			sb.panelW, sb.swzN, sb.swzRep = 128, 8, 1
		case rowBytes == 64:
			sb.swzN, sb.swzRep = 4, 2
		case rowBytes == 32:
			sb.swzN, sb.swzRep = 2, 4
		default: // e.g. 192-byte rows: one panel, swizzled within 2^k chunks
			chunks := rowBytes / 16
			for sb.swzN < 8 && chunks%(sb.swzN*2) == 0 {
				sb.swzN *= 2
			}
			sb.swzRep = 8 / sb.swzN
		}
	}
	sb.stageBytes = align(sb.rows*rowBytes, smemAlign)
	return sb
}
