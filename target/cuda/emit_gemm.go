package cuda

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// gemm lowers C += A·B to mma.sync m16n8k16. Each warp owns a WM×WN slice
// of C; per 16-wide step of K it loads its A tiles (ldmatrix from shared,
// or packs them from a register fragment) and its B tiles (ldmatrix, .trans
// when B is stored K-major), then issues one mma per 16×8 piece of C.
func (e *emitter) gemm(g *ir.Gemm) {
	dt := g.B.Buf.DType
	if dt != ir.BF16 && dt != ir.F16 {
		e.fail(errAt("gemm", g.P, "the sm_80 path multiplies f16 or bf16, not %s", dt))
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
		e.fail(errAt("gemm", g.P, "K = %d must be a multiple of 16 for mma m16n8k16", K))
		return
	}
	wm, wn := M/w.M, N/w.N
	mT, nT := wm/16, wn/8
	mma := "tl::mma_bf16_16816"
	if dt == ir.F16 {
		mma = "tl::mma_f16_16816"
	}
	e.open("")
	e.line("const int wm0 = (warp %% %d) * %d, wn0 = (warp / %d %% %d) * %d;", w.M, wm, w.M, w.N, wn)
	if g.Clear {
		e.line("#pragma unroll")
		e.line("for (int r = 0; r < %d; ++r) %s[r] = 0.0f;", mT*nT*4, g.C.Buf.Name) // C is f32
	}
	e.line("#pragma unroll")
	e.open("for (int kk = 0; kk < %d; ++kk)", K/16)
	e.line("uint32_t a[%d][4];", mT)
	// A operand.
	if g.A.Buf.Scope == ir.Fragment {
		e.line("#pragma unroll")
		e.open("for (int mi = 0; mi < %d; ++mi)", mT)
		e.line("#pragma unroll")
		e.open("for (int j = 0; j < 4; ++j)")
		e.line("const int r = 2 * j + 8 * kk + %d * mi;", 8*(K/16))
		e.line("a[mi][j] = %s[r / 2];", g.A.Buf.Name)
		e.close()
		e.close()
	} else {
		e.line("#pragma unroll")
		e.open("for (int mi = 0; mi < %d; ++mi)", mT)
		e.line("const int q = lane / 8, rr = lane %% 8;")
		if !g.TransA { // A stored M×K: rows are m
			e.sharedLd(g.A, "wm0 + mi * 16 + rr + 8 * (q % 2)", "kk * 16 + 8 * (q / 2)", "a[mi]", false, true)
		} else { // A stored K×M: rows are k
			e.sharedLd(g.A, "kk * 16 + 8 * (q / 2) + rr", "wm0 + mi * 16 + 8 * (q % 2)", "a[mi]", true, true)
		}
		e.close()
	}
	// B operand, two n tiles per ldmatrix.x4, each used by its mmas at once
	// so that only 4 registers of B are live.
	e.line("#pragma unroll")
	e.open("for (int ni = 0; ni < %d; ni += 2)", nT)
	e.line("const int q = lane / 8, rr = lane %% 8;")
	e.line("uint32_t t[4];")
	for _, x4 := range []bool{true, false} {
		if x4 {
			e.open("if (ni + 1 < %d)", nT)
		} else {
			e.open("else")
		}
		if g.TransB { // B stored N×K: rows are n
			e.sharedLd(g.B, "wn0 + ni * 8 + rr + 8 * (q / 2)", "kk * 16 + 8 * (q % 2)", "t", false, x4)
		} else { // B stored K×N: rows are k
			e.sharedLd(g.B, "kk * 16 + 8 * (q % 2) + rr", "wn0 + ni * 8 + 8 * (q / 2)", "t", true, x4)
		}
		e.line("#pragma unroll")
		e.open("for (int mi = 0; mi < %d; ++mi)", mT)
		e.line("%s(&%s[(mi * %d + ni) * 4], a[mi], &t[0]);", mma, g.C.Buf.Name, nT)
		if x4 {
			e.line("%s(&%s[(mi * %d + ni + 1) * 4], a[mi], &t[2]);", mma, g.C.Buf.Name, nT)
		}
		e.close()
		e.close()
	}
	e.close()
	e.close()
	e.close()
	e.read = true
}

// sharedLd issues ldmatrix.x4 for lane's row address of a shared operand
// region at tile coordinates (row, col), offset by the region's start.
// An odd last B tile takes ldmatrix.x2, which reads lanes 0-15's rows.
func (e *emitter) sharedLd(r ir.Region, row, col, dst string, trans, x4 bool) {
	dims := r.Dims()
	if len(dims) != 2 {
		e.fail(fmt.Errorf("cuda: gemm operand %s must be a 2-D region", r.Buf.Name))
		return
	}
	idx := make([]string, len(r.Start))
	for d, st := range r.Start {
		idx[d] = e.expr(st)
	}
	add := func(base, off string) string {
		if base == "0" {
			return "(" + off + ")"
		}
		return "(" + base + " + " + off + ")"
	}
	idx[dims[0]] = add(idx[dims[0]], row)
	idx[dims[1]] = add(idx[dims[1]], col)
	rr, cc := sharedRowCol(r.Buf, idx)
	op := "tl::ldmatrix_x2"
	if x4 {
		op = "tl::ldmatrix_x4"
	}
	if trans {
		op += "_trans"
	}
	e.line("%s(%s, tl::smem_addr(%s + %s));", op, dst, e.sharedBase(r.Buf), e.sharedOffset(r.Buf, rr, cc))
}
