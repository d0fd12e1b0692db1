package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// vecRun is how many adjacent elements of the innermost dim each run of a
// thread's registers holds (the layout's first register digit), or 0 when
// its registers do not start with such a run.
func vecRun(l *layout.Fragment) int {
	c := l.Canon()
	last := len(c.Shape) - 1
	if len(c.Reg) == 0 || c.Reg[0].Dim != last || c.Reg[0].Stride != 1 {
		return 0
	}
	return c.Reg[0].Size
}

// copyVectors moves a whole fragment to or from a global or shared region
// 16 bytes at a time, where the fragment's layout gives each thread runs
// of adjacent elements along the region's contiguous innermost dim that
// start on 16-byte boundaries (a seeded layout, seedLayout): one vector
// load or store per 16 bytes of a run, converting between the element
// types. The innermost extent being a multiple of a vector, each vector
// lies wholly inside the tensor or wholly past its edge: loads there read
// zeros, stores skip it. A shared tile's 16-byte chunks stay whole under
// its swizzle (tl::swz permutes chunks) where its panels and rows are whole
// chunks. It returns false where that does not hold.
func (e *emitter) copyVectors(frag, g ir.Region, l *layout.Fragment, out bool) bool {
	gdt, fdt := g.Buf.DType, frag.Buf.DType
	gb := gdt.Bytes()
	if gb < 1 || gb > 4 {
		return false
	}
	v := 16 / gb
	n := len(g.Start)
	run := vecRun(l)
	if run == 0 || run%v != 0 || !g.Keep[n-1] || multipleOf(g.Start[n-1])%int64(v) != 0 || multipleOf(g.Buf.Shape[n-1])%int64(v) != 0 {
		return false
	}
	// Every run starts on a vector: the thread's part of the innermost dim
	// and the later register digits along it step in whole vectors.
	c := l.Canon()
	inner := len(c.Shape) - 1
	for _, d := range append(append([]layout.Digit(nil), c.Thread...), c.Reg[1:]...) {
		if d.Dim == inner && d.Stride%v != 0 {
			return false
		}
	}
	if g.Buf.Scope == ir.Shared {
		sb := e.c.smem.bufs[g.Buf]
		shape, ok := g.Buf.StaticShape()
		if sb == nil || sb.panelW%16 != 0 || !ok || shape[len(shape)-1]*gb%16 != 0 {
			return false
		}
	}
	if st := g.Buf.Strides; st != nil {
		for d, x := range st {
			if c, ok := ir.ConstInt(x); d == n-1 && (!ok || c != 1) || d < n-1 && multipleOf(x)%int64(v) != 0 {
				return false
			}
		}
	}
	names := e.openStoreLoopStep(l, nil, v)
	if out {
		if rep := firstReplica(l); rep != "" {
			e.line("if (!(%s)) continue;", rep)
		}
	}
	idx := e.bufIndex(g, names)
	addr, cond := "&"+e.refStr(g.Buf, idx), e.inBounds(g, idx)
	if g.Buf.Scope == ir.Shared {
		row, col := sharedRowCol(g.Buf, idx)
		addr = e.sharedBase(g.Buf) + " + " + e.sharedOffset(g.Buf, row, col)
	}
	gt := ctype(gdt)
	sameHalves := packed(frag.Buf) && fdt == gdt
	if out {
		e.line("uint4 vec;")
		switch {
		case sameHalves:
			for k := range 4 {
				e.line("((uint32_t*)&vec)[%d] = %s[r / 2 + %d];", k, frag.Buf.Name, k)
			}
		case gb == 2 && fdt == ir.F32 && e.c.opts.Rounding == "rn":
			for k := range 4 {
				e.line("((uint32_t*)&vec)[%d] = %s(%s[r + %d], %s[r + %d]);", k, packFunc(gdt), frag.Buf.Name, 2*k, frag.Buf.Name, 2*k+1)
			}
		default:
			for j := range v {
				e.line("((%s*)&vec)[%d] = %s;", gt, j, e.store(gdt, load(fdt, fragGet(frag.Buf, fmt.Sprintf("r + %d", j)))))
			}
		}
		st := fmt.Sprintf("*(uint4*)(%s) = vec;", addr)
		if cond != "" {
			st = fmt.Sprintf("if (%s) %s", cond, st)
		}
		e.line("%s", st)
	} else {
		e.line("uint4 vec = make_uint4(0, 0, 0, 0);")
		ld := fmt.Sprintf("vec = *(const uint4*)(%s);", addr)
		if cond != "" {
			ld = fmt.Sprintf("if (%s) %s", cond, ld)
		}
		e.line("%s", ld)
		switch {
		case sameHalves:
			for k := range 4 {
				e.line("%s[r / 2 + %d] = ((const uint32_t*)&vec)[%d];", frag.Buf.Name, k, k)
			}
		case (gdt == ir.BF16 || gdt == ir.F16) && fdt == ir.F32 && !packed(frag.Buf): // a 32-bit word a pair
			for k := range 4 {
				for h, half := range []string{"lo", "hi"} {
					e.line("%s[r + %d] = tl::%s_%s(((const uint32_t*)&vec)[%d]);", frag.Buf.Name, 2*k+h, gdt, half, k)
				}
			}
		default:
			for j := range v {
				e.line("%s", fragSet(frag.Buf, fmt.Sprintf("r + %d", j), e.store(fdt, load(gdt, fmt.Sprintf("((const %s*)&vec)[%d]", gt, j)))))
			}
		}
	}
	e.close()
	e.close()
	return true
}
