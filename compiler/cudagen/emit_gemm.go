package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// mmaErr refuses a Gemm that mma.sync cannot lower; on sm_90a, which
// tries wgmma first, it says why wgmma did not take it either.
func (c *compilation) mmaErr(g *ir.Gemm, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.opts.Arch == "sm_90a" {
		msg += "; nor can wgmma: " + wgmmaFits(c, g)
	}
	return errAt("gemm", g.P, "%s", msg)
}

// gemm lowers C += A·B to mma.sync m16n8k16. Each warp owns a WM×WN slice
// of C; per 16-wide step of K it loads its A tiles (ldmatrix from shared,
// or takes them from a packed register fragment) and then, two n tiles at
// a time, loads B (ldmatrix, .trans when B is stored K-major) and issues
// the mmas that use it, so only 4 registers of B are live. The steps are
// unrolled here, so every shared address is a per-thread base plus a
// constant (see addr.go).
func (e *emitter) gemm(g *ir.Gemm) {
	dt := g.B.Buf.DType
	if dt != ir.BF16 && dt != ir.F16 {
		e.fail(e.c.mmaErr(g, "mma.sync multiplies f16 or bf16, not %s", dt))
		return
	}
	e.syncIfDirty(true)
	w := e.c.warps[g]
	c := g.C.Shape()
	M, N := c[0], c[1]
	K := g.B.Shape()[0]
	if g.TransB {
		K = g.B.Shape()[1]
	}
	if K%16 != 0 {
		e.fail(e.c.mmaErr(g, "K = %d must be a multiple of 16 for mma m16n8k16", K))
		return
	}
	WM, WN := M/w.M, N/w.N
	mT, nT := WM/16, WN/8
	mma := "tl::mma_bf16_16816"
	if dt == ir.F16 {
		mma = "tl::mma_f16_16816"
	}
	T := e.c.f.Kernel.Threads
	wm0 := func(tid int) int { return (tid / 32 % w.M) * WM }
	wn0 := func(tid int) int { return (tid / 32 / w.M % w.N) * WN }
	q := func(tid int) int { return tid % 32 / 8 }
	rr := func(tid int) int { return tid % 8 }
	e.open("")
	e.line("const int wm0 = (warp %% %d) * %d, wn0 = (warp / %d %% %d) * %d;", w.M, WM, w.M, w.N, WN)
	e.line("const int q = lane / 8, rr = lane %% 8;")
	e.line("(void)wm0; (void)wn0; (void)q; (void)rr;")
	if g.Clear {
		e.line("#pragma unroll")
		e.line("for (int r = 0; r < %d; ++r) %s[r] = 0.0f;", mT*nT*4, g.C.Buf.Name)
	}
	var aOp, bOp *operand
	if g.A.Buf.Scope == ir.Shared {
		if !g.TransA { // A stored M×K: rows are m
			aOp = e.newOperand(g.A, "ga", T,
				func(t int) int { return wm0(t) + rr(t) + 8*(q(t)%2) }, "wm0 + rr + 8 * (q % 2)",
				func(t int) int { return 8 * (q(t) / 2) }, "8 * (q / 2)",
				seq(mT, 16), seq(K/16, 16), false)
		} else { // A stored K×M: rows are k
			aOp = e.newOperand(g.A, "ga", T,
				func(t int) int { return 8*(q(t)/2) + rr(t) }, "8 * (q / 2) + rr",
				func(t int) int { return wm0(t) + 8*(q(t)%2) }, "wm0 + 8 * (q % 2)",
				seq(K/16, 16), seq(mT, 16), true)
		}
	}
	if g.TransB { // B stored N×K: rows are n
		bOp = e.newOperand(g.B, "gb", T,
			func(t int) int { return wn0(t) + rr(t) + 8*(q(t)/2) }, "wn0 + rr + 8 * (q / 2)",
			func(t int) int { return 8 * (q(t) % 2) }, "8 * (q % 2)",
			seq(nT, 8), seq(K/16, 16), false)
	} else { // B stored K×N: rows are k
		bOp = e.newOperand(g.B, "gb", T,
			func(t int) int { return 8*(q(t)%2) + rr(t) }, "8 * (q % 2) + rr",
			func(t int) int { return wn0(t) + 8*(q(t)/2) }, "wn0 + 8 * (q / 2)",
			seq(K/16, 16), seq(nT, 8), true)
	}
	if e.err != nil {
		return
	}
	for kk := range K / 16 {
		e.open("")
		e.line("uint32_t a[%d][4];", mT)
		for mi := range mT {
			if aOp == nil { // A in registers: the packed fragment is the operand
				for j := range 4 {
					e.line("a[%d][%d] = %s[%d];", mi, j, g.A.Buf.Name, (2*j+8*kk+8*(K/16)*mi)/2)
				}
				continue
			}
			rc, cc := mi*16, kk*16
			if g.TransA {
				rc, cc = kk*16, mi*16
			}
			e.line("%s(a[%d], %s);", aOp.ld(true), mi, aOp.addr(rc, cc))
		}
		for ni := 0; ni < nT; ni += 2 {
			x4 := ni+1 < nT
			rc, cc := ni*8, kk*16
			if !g.TransB {
				rc, cc = kk*16, ni*8
			}
			e.open("")
			e.line("uint32_t t[4];")
			e.line("%s(t, %s);", bOp.ld(x4), bOp.addr(rc, cc))
			for mi := range mT {
				e.line("%s(&%s[%d], a[%d], &t[0]);", mma, g.C.Buf.Name, (mi*nT+ni)*4, mi)
				if x4 {
					e.line("%s(&%s[%d], a[%d], &t[2]);", mma, g.C.Buf.Name, (mi*nT+ni+1)*4, mi)
				}
			}
			e.close()
		}
		e.close()
	}
	e.close()
	e.read = true
}

func seq(n, step int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i * step
	}
	return out
}

// operand is one shared-memory operand of a Gemm being emitted.
type operand struct {
	e     *emitter
	name  string
	trans bool
	split *laneSplit // nil: addresses computed in full each time
	r     ir.Region
	rowC  string
	colC  string
}

func (o *operand) ld(x4 bool) string {
	op := "tl::ldmatrix_x2"
	if x4 {
		op = "tl::ldmatrix_x4"
	}
	if o.trans {
		op += "_trans"
	}
	return op
}

// newOperand declares the per-thread address of a shared operand region
// whose lane's row and column are given in Go and C; rcs and ccs are the
// constant offsets the unrolled loop adds.
func (e *emitter) newOperand(r ir.Region, name string, threads int, row func(int) int, rowC string, col func(int) int, colC string, rcs, ccs []int, trans bool) *operand {
	dims := r.Dims()
	if len(dims) != 2 {
		e.failHere("operand %s must be a 2-D region", r.Buf.Name)
		return nil
	}
	o := &operand{e: e, name: name, trans: trans, r: r, rowC: rowC, colC: colC}
	r0, ok0 := ir.ConstInt(r.Start[dims[0]])
	c0, ok1 := ir.ConstInt(r.Start[dims[1]])
	whole := ok0 && ok1 && len(r.Start) == 2
	sb := e.c.smem.bufs[r.Buf]
	e.line("const uint32_t %s_base = tl::smem_addr(%s);", name, e.sharedBase(r.Buf))
	if whole {
		l := laneSplit{sb: sb,
			rowLane: func(t int) int { return int(r0) + row(t) }, colLane: func(t int) int { return int(c0) + col(t) },
			rowC: fmt.Sprintf("%d + %s", r0, rowC), colC: fmt.Sprintf("%d + %s", c0, colC)}
		if l.holds(threads, rcs, ccs) {
			e.declareSplit(l, name)
			o.split = &l
		}
	}
	return o
}

// addr is the shared address of the lane's row of the 8×8 matrix at
// constant offset (rc, cc).
func (o *operand) addr(rc, cc int) string {
	if o.split != nil {
		return fmt.Sprintf("%s_base + %s", o.name, o.split.at(o.name, rc, cc))
	}
	e, r := o.e, o.r
	dims := r.Dims()
	idx := make([]string, len(r.Start))
	for d, st := range r.Start {
		idx[d] = e.expr(st)
	}
	idx[dims[0]] = fmt.Sprintf("(%s + %s + %d)", idx[dims[0]], o.rowC, rc)
	idx[dims[1]] = fmt.Sprintf("(%s + %s + %d)", idx[dims[1]], o.colC, cc)
	row, col := sharedRowCol(r.Buf, idx)
	return fmt.Sprintf("%s_base + %s", o.name, e.sharedOffset(r.Buf, row, col))
}
