package cudagen

import (
	"fmt"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// MFMA (gfx942): a Gemm lowers to v_mfma_f32_16x16x16_{f16,bf16}, one
// instruction a 16×16 output tile and 16-deep step of K, issued by a wave
// of 64 lanes. The waves split C by the Gemm's policy (layout.Waves: wave
// w at (w % M, w / M)); each wave owns a wm×wn slice of 16×16 tiles, and
// its lanes hold the operands and accumulator as AMD's matrix-instruction
// tables place them (layout.MFMAAccumulator, MFMAOperandA). Each lane
// reads its four operand elements of a step straight from the shared
// tiles.

// mfmaPlan is a Gemm's instruction and wave split, and whether it
// computes Cᵀ = Bᵀ·Aᵀ (the operands swapped) so that C lies in an A
// operand's layout (layout.MFMAAccumulatorT; chainsGemms says when).
type mfmaPlan struct {
	inst       layout.MFMAInst
	waves      layout.Waves
	transposed bool
	scalar     bool // no MFMA fits: dot products a thread (scalarGemm)
}

// chainsGemms: some Gemm's accumulator reaches another Gemm's A operand
// through fragments (attention's S into P·V). Then every Gemm of the
// kernel computes its C transposed, so that the chained one gets an A
// operand's layout and all the accumulators keep their rows on the same
// lanes (lane % 16): the row statistics that scale S and the output (the
// softmax's max and sum) then have one layout for both.
func chainsGemms(k *ir.Kernel) bool {
	feeds := feedsA(k)
	found := false
	ir.Walk(k.Body, func(s ir.Stmt) {
		if g, ok := s.(*ir.Gemm); ok && feeds[g.C.Buf] {
			found = true
		}
	})
	return found
}

// feedsA lists the fragments that are a Gemm's A operand, or are copied
// (through fragments) into one.
func feedsA(k *ir.Kernel) map[*ir.Buffer]bool {
	out := map[*ir.Buffer]bool{}
	ir.Walk(k.Body, func(s ir.Stmt) {
		if g, ok := s.(*ir.Gemm); ok && g.A.Buf.Scope == ir.Fragment {
			out[g.A.Buf] = true
		}
	})
	for changed := true; changed; {
		changed = false
		ir.Walk(k.Body, func(s ir.Stmt) {
			if cp, ok := s.(*ir.Copy); ok && cp.Src.Buf.Scope == ir.Fragment && out[cp.Dst.Buf] && !out[cp.Src.Buf] {
				out[cp.Src.Buf] = true
				changed = true
			}
		})
	}
	return out
}

// chooseWaves splits a Gemm's waves by its policy, each wave's slice made
// of whole 16×16 tiles; an A operand in registers forces FullRow, as on
// NVIDIA.
func chooseWaves(p ir.Policy, m, n, waves int, aInRegs bool) (layout.Waves, error) {
	fits := func(w layout.Waves) bool { return m%(16*w.M) == 0 && n%(16*w.N) == 0 }
	if aInRegs {
		p = ir.FullRow
	}
	switch p {
	case ir.FullRow:
		if w := (layout.Waves{M: waves, N: 1}); fits(w) {
			return w, nil
		}
		return layout.Waves{}, fmt.Errorf("policy fullrow: %d waves cannot each own 16-row slices of %d×%d", waves, m, n)
	case ir.FullCol:
		if w := (layout.Waves{M: 1, N: waves}); fits(w) {
			return w, nil
		}
		return layout.Waves{}, fmt.Errorf("policy fullcol: %d waves cannot each own 16-column slices of %d×%d", waves, m, n)
	}
	best, found := layout.Waves{}, false
	for wm := 1; wm <= waves; wm++ {
		if waves%wm != 0 {
			continue
		}
		w := layout.Waves{M: wm, N: waves / wm}
		if fits(w) && (!found || m/w.M+n/w.N < m/best.M+n/best.N) {
			best, found = w, true
		}
	}
	if !found {
		return best, fmt.Errorf("%d waves cannot tile a %d×%d output in 16×16 pieces", waves, m, n)
	}
	return best, nil
}

// mfmaLayouts fixes an AMD Gemm's layouts (cudaLayouts.Gemm). Where MFMA
// cannot take it (operands not 16-bit, K not a multiple of 16, a block not
// of whole waves, tiles the waves cannot cut in 16×16 pieces) and A is a
// shared tile, it falls back to scalarGemm and leaves C's layout free.
func (c *compilation) mfmaLayouts(g *ir.Gemm, set func(*ir.Buffer, *layout.Fragment) error) error {
	err := c.mfmaFits(g, set)
	if err != nil && g.A.Buf.Scope == ir.Shared && g.B.Buf.Scope == ir.Shared && g.C.IsWhole() {
		c.mfma[g] = mfmaPlan{scalar: true}
		return nil
	}
	return err
}

// mfmaFits plans g on MFMA, or says why it cannot be.
func (c *compilation) mfmaFits(g *ir.Gemm, set func(*ir.Buffer, *layout.Fragment) error) error {
	dt := g.B.Buf.DType
	if g.A.Buf.DType != dt || (dt != ir.BF16 && dt != ir.F16) {
		return errAt("gemm", g.P, "MFMA multiplies f16 or bf16 operands of one type, not %s by %s", g.A.Buf.DType, dt)
	}
	if g.B.Buf.Scope != ir.Shared {
		return errAt("gemm", g.P, "B must be a shared tile")
	}
	inst := layout.MFMA16x16x16F16
	if dt == ir.BF16 {
		inst = layout.MFMA16x16x16BF16
	}
	sh := g.C.Shape()
	K := g.A.Shape()[1]
	if g.TransA {
		K = g.A.Shape()[0]
	}
	if K%16 != 0 {
		return errAt("gemm", g.P, "K = %d must be a multiple of 16 for MFMA 16x16x16", K)
	}
	threads := c.threadsOf(g.C.Buf)
	if threads%layout.WaveSize != 0 {
		return errAt("gemm", g.P, "%d threads are not whole waves of 64", threads)
	}
	aRegs := g.A.Buf.Scope == ir.Fragment
	w, err := chooseWaves(g.Policy, sh[0], sh[1], threads/layout.WaveSize, aRegs)
	if err != nil {
		return errAt("gemm", g.P, "%v", err)
	}
	transposed := chainsGemms(c.f.Kernel)
	acc, err := layout.MFMAAccumulator(sh[0], sh[1], inst, w)
	if transposed {
		acc, err = layout.MFMAAccumulatorT(sh[0], sh[1], inst, w)
	}
	if err != nil {
		return errAt("gemm", g.P, "%v", err)
	}
	c.mfma[g] = mfmaPlan{inst: inst, waves: w, transposed: transposed}
	if err := set(g.C.Buf, acc); err != nil {
		return err
	}
	if aRegs {
		if g.TransA {
			return errAt("gemm", g.P, "A from a fragment cannot be transposed")
		}
		a, err := layout.MFMAOperandA(sh[0], K, inst, w, 1)
		if err != nil {
			return errAt("gemm", g.P, "%v", err)
		}
		return set(g.A.Buf, a)
	}
	return nil
}

// mfmaGemm emits C += A·B for one Gemm: per 16-deep step of K, each wave
// loads its A tiles' and B tiles' four elements a lane, then issues an
// MFMA for every (A tile, B tile) pair of its slice.
func (e *emitter) mfmaGemm(g *ir.Gemm) {
	p := e.c.mfma[g]
	e.syncIfDirty(true)
	sh := g.C.Shape()
	M, N := sh[0], sh[1]
	K := g.A.Shape()[1]
	if g.TransA {
		K = g.A.Shape()[0]
	}
	wm, wn := M/p.waves.M, N/p.waves.N
	mT, nT := wm/16, wn/16
	mfma := "tl::mfma_f16_16x16x16"
	if p.inst == layout.MFMA16x16x16BF16 {
		mfma = "tl::mfma_bf16_16x16x16"
	}
	C := g.C.Buf.Name
	e.open("")
	e.line("const int wl = tid %% 64, wv = tid / 64;")
	e.line("const int mr = (wv %% %d) * %d + wl %% 16, nc = (wv / %d) * %d + wl %% 16, kq = 4 * (wl / 16);", p.waves.M, wm, p.waves.M, wn)
	e.line("(void)mr;")
	if g.Clear {
		e.line("#pragma unroll")
		e.line("for (int r = 0; r < %d; ++r) %s[r] = 0.0f;", mT*nT*4, C)
	}
	elem := func(r ir.Region, row, col string) string {
		return e.refStr(r.Buf, e.bufIndex(r, []string{row, col}))
	}
	// operand sets dst[0..3] to a lane's four elements of a step, K
	// running along dim kDim of region r from (row, col): one 8-byte LDS
	// read where K is the tile's rows' own dim and the four lie in one
	// aligned 8 bytes (a 16-byte chunk keeps its 8-byte halves however
	// the tile is swizzled), else four 2-byte reads.
	operand := func(dst string, r ir.Region, kDim int, row, col string) {
		at := func(i int) (string, string) {
			if kDim == 0 {
				return fmt.Sprintf("%s + %d", row, i), col
			}
			return row, fmt.Sprintf("%s + %d", col, i)
		}
		if kDim == 1 && fourAligned(r) {
			e.open("")
			e.line("const uint2 v = *(const uint2*)&%s;", elem(r, row, col))
			e.line("%s[0] = uint16_t(v.x); %s[1] = uint16_t(v.x >> 16); %s[2] = uint16_t(v.y); %s[3] = uint16_t(v.y >> 16);", dst, dst, dst, dst)
			e.close()
			return
		}
		for i := range 4 {
			rr, cc := at(i)
			e.line("%s[%d] = %s;", dst, i, elem(r, rr, cc))
		}
	}
	e.line("#pragma unroll")
	e.open("for (int ks = 0; ks < %d; ks += 16)", K)
	e.line("uint16_t a[%d][4], b[%d][4];", mT, nT)
	for mi := range mT {
		if g.A.Buf.Scope == ir.Fragment { // MFMAOperandA: register i + 4·(step + steps·tile)
			for i := range 4 {
				e.line("a[%d][%d] = %s;", mi, i, fragGet(g.A.Buf, fmt.Sprintf("%d + 4 * (ks / 16) + %d", i, 4*(K/16)*mi)))
			}
			continue
		}
		if g.TransA { // stored K×M
			operand(fmt.Sprintf("a[%d]", mi), g.A, 0, "ks + kq", fmt.Sprintf("mr + %d", 16*mi))
		} else {
			operand(fmt.Sprintf("a[%d]", mi), g.A, 1, fmt.Sprintf("mr + %d", 16*mi), "ks + kq")
		}
	}
	for ni := range nT {
		if g.TransB { // stored N×K
			operand(fmt.Sprintf("b[%d]", ni), g.B, 1, fmt.Sprintf("nc + %d", 16*ni), "ks + kq")
		} else {
			operand(fmt.Sprintf("b[%d]", ni), g.B, 0, "ks + kq", fmt.Sprintf("nc + %d", 16*ni))
		}
	}
	for mi := range mT {
		for ni := range nT {
			if p.transposed { // Cᵀ tile += Bᵀ·Aᵀ: B's lanes as the A operand
				e.line("%s(&%s[%d], b[%d], a[%d]);", mfma, C, 4*(ni+nT*mi), ni, mi)
			} else {
				e.line("%s(&%s[%d], a[%d], b[%d]);", mfma, C, 4*(ni+nT*mi), mi, ni)
			}
		}
	}
	e.close()
	e.close()
	e.read = true
}

// fourAligned: four 16-bit elements of a row of shared region r from a
// column that is a multiple of 4 are 8 aligned bytes: the region starts
// at such a column, and the tile's rows are whole 16-byte chunks.
func fourAligned(r ir.Region) bool {
	shape, ok := r.Buf.StaticShape()
	last := len(shape) - 1
	return ok && r.Buf.Scope == ir.Shared && r.Buf.DType.Bytes() == 2 && r.Keep[last] &&
		shape[last]*2%16 == 0 && multipleOf(r.Start[last])%4 == 0
}

// scalarGemm emits C += A·B where MFMA cannot take it: each thread
// computes the elements of C its registers hold (C's layout, whatever
// inference gave it) as dot products over K, in f32, from the shared
// tiles. Slow, but any shape, thread count and float type.
func (e *emitter) scalarGemm(g *ir.Gemm) {
	e.syncIfDirty(true)
	l := e.c.layouts[g.C.Buf]
	K := g.A.Shape()[1]
	if g.TransA {
		K = g.A.Shape()[0]
	}
	elem := func(r ir.Region, row, col string) string {
		return load(r.Buf.DType, e.refStr(r.Buf, e.bufIndex(r, []string{row, col})))
	}
	C := g.C.Buf.Name
	e.open("")
	i, j := e.fresh("gi"), e.fresh("gj")
	e.fragLoop(l, []string{i, j})
	start := C + "[r]"
	if g.Clear {
		start = "0.0f"
	}
	e.line("float dot = %s;", start)
	a, b := elem(g.A, i, "kk"), elem(g.B, "kk", j)
	if g.TransA {
		a = elem(g.A, "kk", i)
	}
	if g.TransB {
		b = elem(g.B, j, "kk")
	}
	e.line("for (int kk = 0; kk < %d; ++kk) dot += %s * %s;", K, a, b)
	e.line("%s[r] = dot;", C)
	e.close()
	e.close()
	e.read = true
}
