package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// Fragment stores to global memory 16 bytes at a time. An mma or wgmma
// accumulator gives each lane of a quad (lane % 4) two adjacent columns of
// every 8: one 4-byte store per pair writes a row's 16 bytes in four
// pieces, from four lanes, and a warp's store touches eight rows. A
// d256 walk's output stored that way (Direct) spent 16% of its stall
// samples throttled on the store queue (ncu, H100, 2026-11-24). Where a
// thread holds a row's pairs for four 8-column groups, the quad exchanges
// them (tl::quad_transpose: two shuffles of two words) so that each lane
// holds one group's 16 bytes and stores them at once: a quarter of the
// stores.

// quadShift is how many columns past its own pair lane q stores after the
// exchange: group q of four starts 8q columns past the first, where its
// pair stood at 2q.
const quadShift = 6

// quadDigits finds the layout shape the quad store needs, for 16-bit
// elements: the first thread digit is lane % 4 along the columns in steps
// of 2, the first register digit is the pair, and some register digit
// steps 8 columns with a size that 4 divides. It returns that digit's
// place in the register index.
func quadDigits(l *layout.Fragment) (place int, ok bool) {
	last := len(l.Shape) - 1
	if len(l.Thread) == 0 || l.Thread[0] != (layout.Digit{Size: 4, Dim: last, Stride: 2}) ||
		len(l.Reg) == 0 || l.Reg[0] != (layout.Digit{Size: 2, Dim: last, Stride: 1}) || firstReplica(l) != "" {
		return 0, false
	}
	place = 1
	for _, d := range l.Reg {
		if d.Dim == last && d.Stride == 8 && d.Size%4 == 0 {
			return place, true
		}
		place *= d.Size
	}
	return 0, false
}

// storeQuadsFrom is storePairsFrom 16 bytes a lane (above), where the
// fragment's layout allows it and every group's 16 bytes are whole and
// aligned in dst: 16-bit elements, contiguous rows whose other strides
// and start column are multiples of 8 elements, and no column past the
// tensor's end. Rows may be bounded: a quad's lanes share their rows, so
// all four test the same bound after the exchange, which they all take.
func (e *emitter) storeQuadsFrom(frag, dst ir.Region, l *layout.Fragment, hinted bool) bool {
	place, ok := quadDigits(l)
	dt := dst.Buf.DType
	if !ok || dt != ir.BF16 && dt != ir.F16 || e.c.opts.Rounding != "rn" {
		return false
	}
	dims, shape := dst.Dims(), dst.Shape()
	strides := e.strides(dst.Buf)
	for i, d := range dims {
		st, ok := atoi(strides[d])
		if !ok || i < len(dims)-1 && st%8 != 0 || i == len(dims)-1 && st != 1 {
			return false
		}
	}
	col := dims[len(dims)-1]
	start, ok1 := ir.ConstInt(dst.Start[col])
	size, ok2 := ir.ConstInt(dst.Buf.Shape[col])
	if !ok1 || !ok2 || start%8 != 0 || start+int64(shape[len(shape)-1]) > size {
		return false
	}
	gp := e.fresh("gp")
	names := e.openStoreLoop(l, func(bases []string) {
		e.line("%s* const %s = &%s + %d * (tid %% 4);", ctype(dt), gp, e.refStr(dst.Buf, e.bufIndex(dst, bases)), quadShift)
	})
	e.line("if (r %% 2 || r / %d %% 4) continue;", place)
	addr, cond := e.fromPointer(dst, l, gp, names) // the columns, checked whole above, are not tested
	w := make([]string, 4)
	for k := range w {
		w[k] = e.fresh("w")
		lo := fmt.Sprintf("r + %d", k*place)
		e.line("uint32_t %s = %s(%s, %s);", w[k], packFunc(dt), load(frag.Buf.DType, fragGet(frag.Buf, lo)), load(frag.Buf.DType, fragGet(frag.Buf, lo+" + 1")))
	}
	e.line("tl::quad_transpose(%s);", strings.Join(w, ", "))
	st := fmt.Sprintf("*(uint4*)(%s) = make_uint4(%s);", addr, strings.Join(w, ", "))
	if hinted {
		st = fmt.Sprintf("tl::st_global_v4_hint(%s, %s, pol);", addr, strings.Join(w, ", "))
	}
	if cond != "" {
		st = fmt.Sprintf("if (%s) %s", cond, st)
	}
	e.line("%s", st)
	e.close()
	e.close()
	return true
}
