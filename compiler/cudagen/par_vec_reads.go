package cudagen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// Vector reads of shared tiles and global tensors in Parallel loops. A
// Parallel loop over a fragment visits each thread's registers in order,
// and where the layout gives a thread runs of adjacent elements along the
// innermost dim, a shared tile or global tensor indexed by that dim's
// variable is read at adjacent columns on consecutive registers. Element by element that is one shared load (and,
// for 16-bit tiles, a byte permute and a shift) per element: RMSNorm's
// weight read 8 times per 16 bytes. Instead, the loop reads 16 bytes at
// the start of each run of 16 bytes into a register vector and takes the
// elements from it. 16-byte chunks of a shared tile stay whole under its
// swizzle (tl::swz permutes chunks), so the vector is the 16 bytes at the
// first element's address.

// vecRead is a shared tile read by vector in the Parallel loop being
// emitted: the register vector's name and its elements per vector.
type vecRead struct {
	name string
	v    int
}

// planVecReads picks the shared loads of p's body that can be read by
// vector under the driving layout l: top-level statements' loads (not
// under an If, so reading ahead is safe) of a tile the body does not
// write, whose innermost index is the variable of the layout's first
// register run (a run a whole number of vectors, each thread's part and
// the later runs starting on vectors) and whose other indices are
// constants or other loop variables, each within the tile.
func (e *emitter) planVecReads(p *ir.Parallel, l *layout.Fragment) map[*ir.Load]vecRead {
	c := l.Canon()
	if len(c.Reg) == 0 || c.Reg[0].Stride != 1 || c.Reg[0].Dim < 0 {
		return nil
	}
	dim := c.Reg[0].Dim
	if dim >= len(p.Vars) || dim >= len(p.Extents) {
		return nil
	}
	written := sharedBufs(p.Body, false)
	ir.Walk(p.Body, func(s ir.Stmt) { // and global tensors
		if st, ok := s.(*ir.Store); ok {
			written[st.Buf] = true
		}
	})
	var out map[*ir.Load]vecRead
	for _, s := range p.Body {
		st, ok := s.(*ir.Store)
		if !ok {
			continue
		}
		ir.WalkExpr(st.Value, func(x ir.Expr) {
			ld, ok := x.(*ir.Load)
			if !ok || out[ld].v != 0 || !e.vecReadable(ld, p, c, dim, written) {
				return
			}
			if out == nil {
				out = map[*ir.Load]vecRead{}
			}
			out[ld] = vecRead{e.fresh(ld.Buf.Name + "_v"), 16 / ld.Buf.DType.Bytes()}
		})
	}
	return out
}

func (e *emitter) vecReadable(ld *ir.Load, p *ir.Parallel, c *layout.Fragment, dim int, written map[*ir.Buffer]bool) bool {
	b := ld.Buf
	switch b.Scope {
	case ir.Shared:
		if sb := e.c.smem.bufs[b]; written[b] || sb == nil || sb.stages > 1 || sb.panelW%16 != 0 {
			return false
		}
	case ir.Global:
		if written[b] || !rowMajorOrVectorStrides(b, 16/max(b.DType.Bytes(), 1)) {
			return false
		}
	default:
		return false
	}
	eb := b.DType.Bytes()
	if b.DType != ir.BF16 && b.DType != ir.F16 && b.DType != ir.F32 {
		return false
	}
	v := 16 / eb
	if c.Reg[0].Size%v != 0 {
		return false
	}
	for _, d := range append(append([]layout.Digit(nil), c.Thread...), c.Reg[1:]...) {
		if d.Dim == dim && d.Stride%v != 0 {
			return false
		}
	}
	shape, ok := b.StaticShape()
	if !ok || len(ld.Idx) != len(shape) || (shape[len(shape)-1]*eb)%16 != 0 {
		return false
	}
	for i, x := range ld.Idx {
		last := i == len(ld.Idx)-1
		switch x := x.(type) {
		case *ir.Var:
			k := varIndex(p, x)
			if k < 0 || last != (k == dim) || p.Extents[k] > shape[i] {
				return false
			}
		case *ir.Const:
			if last || x.I < 0 || x.I >= int64(shape[i]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// rowMajorOrVectorStrides: b's rows are contiguous and each starts a whole
// number of v-element vectors from the tensor's start (which Bind keeps on
// 16 bytes), so a vector at a column that is a multiple of v is aligned.
func rowMajorOrVectorStrides(b *ir.Buffer, v int) bool {
	for d, x := range b.Strides {
		if c, ok := ir.ConstInt(x); d == len(b.Strides)-1 && (!ok || c != 1) || d < len(b.Strides)-1 && multipleOf(x)%int64(v) != 0 {
			return false
		}
	}
	return true
}

// varIndex is v's position among p's variables, or -1.
func varIndex(p *ir.Parallel, v *ir.Var) int {
	for i, w := range p.Vars {
		if w == v {
			return i
		}
	}
	return -1
}

// declareVecReads declares the register vectors, before the loop.
func (e *emitter) declareVecReads(reads map[*ir.Load]vecRead) {
	for _, ld := range sortedLoads(reads) {
		e.line("uint4 %s;", reads[ld].name)
	}
}

// loadVecReads reads each vector at the start of its run, at the top of
// the loop's body (register r).
func (e *emitter) loadVecReads(reads map[*ir.Load]vecRead) {
	for _, ld := range sortedLoads(reads) {
		r := reads[ld]
		idx := make([]string, len(ld.Idx))
		for i, x := range ld.Idx {
			idx[i] = e.expr(x)
		}
		addr := "&" + e.refStr(ld.Buf, idx)
		if ld.Buf.Scope == ir.Shared {
			row, col := sharedRowCol(ld.Buf, idx)
			addr = e.sharedBase(ld.Buf) + " + " + e.sharedOffset(ld.Buf, row, col)
		}
		e.line("if (r %% %d == 0) %s = *(const uint4*)(%s);", r.v, r.name, addr)
	}
}

// vecElem is register r's element of the vector, converted to f32.
func vecElem(ld *ir.Load, r vecRead) string {
	switch ld.Buf.DType {
	case ir.BF16, ir.F16:
		w := fmt.Sprintf("((const uint32_t*)&%s)[r %% %d / 2]", r.name, r.v)
		return fmt.Sprintf("(r %% 2 == 0 ? tl::%s_lo(%s) : tl::%s_hi(%s))", ld.Buf.DType, w, ld.Buf.DType, w)
	}
	return fmt.Sprintf("((const float*)&%s)[r %% %d]", r.name, r.v)
}

// sortedLoads orders the loads by their vectors' names, so the emitted
// program does not depend on map order.
func sortedLoads(reads map[*ir.Load]vecRead) []*ir.Load {
	out := make([]*ir.Load, 0, len(reads))
	for ld := range reads {
		out = append(out, ld)
	}
	slices.SortFunc(out, func(a, b *ir.Load) int { return strings.Compare(reads[a].name, reads[b].name) })
	return out
}
