package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// wgmmaFits says why a Gemm cannot use Hopper's warpgroup MMA ("" when it
// can): wgmma needs sm_90a, whole warpgroups splitting M in 64-row tiles
// (and, where M has fewer tiles than there are warpgroups, N: wgSplit),
// columns a warpgroup in groups of 8 (past 256, one instruction each 256:
// wgmmaChunks), operands in shared memory in a canonical
// swizzled layout (whole tiles, or their first columns in whole panels; or
// A in registers) and 16-bit inputs, or 8-bit floats (e4m3, e5m2) with A
// and B both K-major in shared memory (A stored M×K, B stored N×K: wgmma
// transposes only 16-bit operands) and K a multiple of 32.
func wgmmaFits(c *compilation, g *ir.Gemm) string {
	T := c.threadsOf(g.C.Buf) // one warpgroup's in a Warpgroup block
	sh := g.C.Shape()
	m, n := sh[0], sh[1]
	k := g.B.Shape()[0]
	if g.TransB {
		k = g.B.Shape()[1]
	}
	dt := g.B.Buf.DType
	w := wgSplit(T/128, m, g.Policy, splitNWanted(c))
	f8 := wgmmaType(dt) != "" && dt.Bytes() == 1
	switch {
	case c.opts.Arch != "sm_90a":
		return "not sm_90a"
	case wgmmaType(dt) == "" || wgmmaType(g.A.Buf.DType) == "" || g.A.Buf.DType.Bytes() != dt.Bytes():
		return fmt.Sprintf("its inputs are %s and %s, not both f16 or bf16 or both 8-bit floats", g.A.Buf.DType, dt)
	case f8 && (g.TransA || !g.TransB || g.A.Buf.Scope == ir.Fragment):
		return "8-bit operands must both be K-major in shared memory (A stored M×K, B stored N×K)"
	case f8 && k%32 != 0:
		return fmt.Sprintf("K = %d is not a multiple of 32 (8-bit operands)", k)
	case T%128 != 0 || m%(64*w.M) != 0:
		return fmt.Sprintf("%d threads' warpgroups cannot split M = %d in 64-row tiles", T, m)
	case n%(8*w.N) != 0 && w.N == 1:
		return fmt.Sprintf("N = %d is not a multiple of 8", n)
	case n%(8*w.N) != 0:
		return fmt.Sprintf("N = %d does not split in %d warpgroups' multiples of 8 columns", n, w.N)
	case k%16 != 0:
		return fmt.Sprintf("K = %d is not a multiple of 16", k)
	case g.A.Buf.Scope == ir.Fragment && g.TransA:
		return "A in registers cannot be transposed"
	case g.A.Buf.Scope == ir.Fragment && w.N > 1:
		return "A in registers with warpgroups splitting N"
	case w.N > 1 && !g.TransB && n/w.N*dt.Bytes()%bufLayout(g.B.Buf).panelW != 0:
		return "warpgroups would split B's columns inside a panel"
	}
	for i, r := range []ir.Region{g.A, g.B} {
		if r.Buf.Scope == ir.Fragment {
			continue
		}
		sb := bufLayout(r.Buf)
		// A column offset is N's for an MN-major B, K's for a K-major operand.
		if !panelRegion(r, sb, i == 1 || !g.TransA) || sb.swizzleMode() == 0 || sb.rows%8 != 0 {
			return r.Buf.Name + " is not a whole tile in a canonical swizzled layout"
		}
	}
	return ""
}

// wgSplit is how wg warpgroups tile an M-row wgmma output: along M when M
// has a 64-row tile for each, else M's tiles times an even split of N
// (two warpgroups on 64 rows take half the columns each, as MLA's 64×512
// accumulator needs), where the kernel asks (splitN) and the policy does
// not keep whole rows to a warp. Fewer than 128 threads (wg = 0) have no
// warpgroup to split: wgmmaFits refuses them.
func wgSplit(wg, m int, p ir.Policy, splitN bool) layout.WGs {
	if t := m / 64; splitN && wg > 0 && p != ir.FullRow && m%64 == 0 && m%(64*wg) != 0 && t > 0 && wg%t == 0 {
		return layout.WGs{M: t, N: wg / t}
	}
	return layout.WGs{M: wg, N: 1}
}

// splitNWanted: the program asks (tl's SplitN, ir.Kernel.SplitN), unless
// SwitchWGSplit forces it on or off.
func splitNWanted(c *compilation) bool {
	return c.opts.Switches.Choose(SwitchWGSplit, c.f.Kernel.SplitN)
}

// panelRegion: r is its whole shared tile, or the tile's first columns
// (all its rows, a whole number of swizzle panels), which the tile's
// descriptors address as they do the whole tile; with cols, any whole
// panels of its columns (B's N, which the descriptors step along panels:
// MLA's warpgroups each take their half of V).
func panelRegion(r ir.Region, sb *smemBuf, cols bool) bool {
	if r.IsWhole() {
		return true
	}
	shape, ok := r.Buf.StaticShape()
	if !ok || len(shape) != 2 || len(r.Start) != 2 || !r.Keep[0] || !r.Keep[1] {
		return false
	}
	if v, ok := ir.ConstInt(r.Start[0]); !ok || v != 0 {
		return false
	}
	c0, ok := ir.ConstInt(r.Start[1])
	if !ok || (c0 != 0 && (!cols || int(c0)*sb.eb%sb.panelW != 0)) {
		return false
	}
	return r.Extent[0] == shape[0] && r.Extent[1]*sb.eb%sb.panelW == 0
}

// panelCol is the first column of a panelRegion.
func panelCol(r ir.Region) int {
	if len(r.Start) != 2 {
		return 0
	}
	c, _ := ir.ConstInt(r.Start[1])
	return int(c)
}

// wgmma lowers a Gemm to wgmma.mma_async: each warpgroup computes its
// share of M, 64 rows at a time, the whole N per instruction, stepping K
// by 16 through matrix descriptors (or register fragments for A); then it
// waits for the group, so the accumulator is ready for the next op, or,
// in a loop whose waits are lazy (deferred.go), notes the group to be
// waited for where its results are used.
func (e *emitter) wgmma(g *ir.Gemm) {
	e.syncIfDirty(true)
	T := e.c.threadsOf(g.C.Buf)
	WG := T / 128
	c := g.C.Shape()
	M, N := c[0], c[1]
	K := g.B.Shape()[0]
	if g.TransB {
		K = g.B.Shape()[1]
	}
	w := wgSplit(WG, M, g.Policy, splitNWanted(e.c))
	rows, cols := M/w.M, N/w.N
	MT := rows / 64
	kStep := wgmmaK(g.B.Buf.DType) // 32 bytes of K an instruction
	aRegs := g.A.Buf.Scope == ir.Fragment
	e.open("")
	if e.role != nil { // the block's one warpgroup computes it all
		e.line("const int wg = 0;")
	} else {
		e.line("const int wg = tid / 128;")
	}
	var da, db *descOperand
	if !aRegs {
		da = e.newDesc(g.A, "da", !g.TransA)
	}
	db = e.newDesc(g.B, "db", g.TransB)
	col0 := "0" // B's first column of N: with TransB, N runs down B's rows (from 0: panelRegion) and its first column is K's (newDesc)
	if !g.TransB {
		col0 = fmt.Sprint(panelCol(g.B)) // N runs along B's columns (only where it steps along panels)
	}
	e.turnBegin(g)
	e.line("tl::wgmma_fence();")
	bCol := col0 // B's first column of this warpgroup's share
	if w.N > 1 { // warpgroup wg takes row block wg % w.M, column block wg / w.M
		bCol = cSum(col0, fmt.Sprintf("wg / %d * %d", w.M, cols))
	}
	for mt := range MT {
		mOff := fmt.Sprintf("wg * %d + %d", rows, 64*mt)
		if w.N > 1 {
			mOff = fmt.Sprintf("wg %% %d * %d + %d", w.M, rows, 64*mt)
		}
		for _, ch := range wgmmaChunks(cols) {
			fn := e.wgmmaFunc(ch.n, g.A.Buf.DType, g.B.Buf.DType, aRegs)
			at := cSum(bCol, fmt.Sprint(ch.c0)) // B's first column of this instruction
			for kk := range K / kStep {
				scale := "1"
				if g.Clear && kk == 0 {
					scale = "0"
				}
				bDesc := db.at(at, kk)
				acc := fmt.Sprintf("&%s[%d]", g.C.Buf.Name, mt*cols/2+ch.c0/2)
				if aRegs {
					base := (8*kk + 8*(K/kStep)*mt) / 2
					e.line("%s<%d>(%s, %s[%d], %s[%d], %s[%d], %s[%d], %s, %s);", fn, db.trans, acc,
						g.A.Buf.Name, base, g.A.Buf.Name, base+1, g.A.Buf.Name, base+2, g.A.Buf.Name, base+3, bDesc, scale)
				} else {
					e.line("%s<%d, %d>(%s, %s, %s, %s);", fn, da.trans, db.trans, acc, da.at(mOff, kk), bDesc, scale)
				}
			}
		}
	}
	e.line("tl::wgmma_commit();")
	e.turnEnd(g)
	if e.waits != nil { // waited for where its results are used (deferred.go)
		e.lazyNote(g)
	} else {
		e.line("tl::wgmma_wait<0>();")
	}
	e.close()
	e.read = true
}

// cSum is the C expression a + b, leaving out a term that is "0".
func cSum(a, b string) string {
	switch {
	case a == "0":
		return b
	case b == "0":
		return a
	}
	return a + " + " + b
}

// wgmmaChunk is one instruction's columns of a warpgroup's share of N.
type wgmmaChunk struct{ c0, n int }

// wgmmaChunks cuts a warpgroup's n columns into instructions of at most
// 256 (wgmma's widest), the first ones 256 wide: a chunk then starts on a
// whole swizzle panel of an MN-major B (512 bytes of 16-bit elements), and
// its registers follow the last chunk's, as WGAccumulator's column groups
// run (MLA's warpgroup 1 with 320 of V's 512 columns takes 256 and 64).
func wgmmaChunks(n int) []wgmmaChunk {
	var cs []wgmmaChunk
	for c0 := 0; c0 < n; c0 += 256 {
		cs = append(cs, wgmmaChunk{c0, min(256, n-c0)})
	}
	return cs
}

// descOperand builds the matrix descriptors of one shared operand.
type descOperand struct {
	e        *emitter
	name     string
	sb       *smemBuf
	kMajor   bool
	k0       int // K-major: the region's first column (K), at a panel's start
	trans    int // the instruction's transpose flag: 1 for MN-major
	lbo, sbo int
	kStep    int // K an instruction takes
}

func (e *emitter) newDesc(r ir.Region, name string, kMajor bool) *descOperand {
	sb := e.c.smem.bufs[r.Buf]
	d := &descOperand{e: e, name: name, sb: sb, kMajor: kMajor, sbo: 8 * sb.panelW, lbo: 16, kStep: wgmmaK(r.Buf.DType)}
	if kMajor {
		d.k0 = panelCol(r)
	} else {
		d.trans, d.lbo = 1, sb.rows*sb.panelW
	}
	e.line("const uint32_t %s_base = tl::smem_addr(%s);", name, e.sharedBase(r.Buf))
	return d
}

// at is the descriptor of K step kk (16 or 32 wide), for rows starting at mn
// (a C expression; "0" for B, which always starts at its first row).
func (d *descOperand) at(mn any, kk int) string {
	sb := d.sb
	var off string
	if d.kMajor { // rows are M (or N); K runs along the panels
		kb := (d.k0 + kk*d.kStep) * sb.eb
		off = fmt.Sprintf("%d", kb/sb.panelW*sb.rows*sb.panelW+kb%sb.panelW)
		if s := fmt.Sprint(mn); s != "0" {
			off = fmt.Sprintf("(%s) * %d + %s", s, sb.panelW, off)
		}
	} else { // rows are K; M (or N) runs along the panels
		off = fmt.Sprintf("%d", kk*d.kStep*sb.panelW)
		if s := fmt.Sprint(mn); s != "0" {
			off = fmt.Sprintf("(%s) * %d / %d * %d + %s", s, sb.eb, sb.panelW, sb.rows*sb.panelW, off)
		}
	}
	return fmt.Sprintf("tl::desc(%s_base + %s, %d, %d, %d)", d.name, off, d.lbo, d.sbo, sb.swizzleMode())
}

// wgmmaType is dt's name in wgmma's shape suffix, "" for a type it does
// not multiply.
func wgmmaType(dt ir.DType) string {
	return map[ir.DType]string{ir.BF16: "bf16", ir.F16: "f16", ir.F8E4M3: "e4m3", ir.F8E5M2: "e5m2"}[dt]
}

// wgmmaK is the K an instruction takes: 32 bytes of it.
func wgmmaK(dt ir.DType) int { return 32 / dt.Bytes() }

// wgmmaFunc returns the name of a device function issuing one wgmma of
// width N, writing its definition into the kernel's preamble once. The
// accumulator registers must be listed one by one in the asm. 8-bit
// operands take no transpose flags (the template's TA and TB are 0).
func (e *emitter) wgmmaFunc(n int, adt, bdt ir.DType, aRegs bool) string {
	ta, ty := wgmmaType(adt), wgmmaType(bdt)
	kind := "ss"
	if aRegs {
		kind = "rs"
	}
	k := wgmmaK(bdt)
	name := fmt.Sprintf("wgmma_m64n%dk%d_%s_%s", n, k, kind, ty)
	if ta != ty {
		name = fmt.Sprintf("wgmma_m64n%dk%d_%s_%s_%s", n, k, kind, ta, ty)
	}
	if e.funcs[name] {
		return name
	}
	e.funcs[name] = true
	regs := n / 2
	var outs, list []string
	for i := range regs {
		outs = append(outs, fmt.Sprintf(`"+f"(d[%d])`, i))
		list = append(list, fmt.Sprintf("%%%d", i))
	}
	var b strings.Builder
	if aRegs {
		fmt.Fprintf(&b, "template <int TB>\n__device__ __forceinline__ void %s(float* d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint64_t db, int scale_d) {\n", name)
		fmt.Fprintf(&b, "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", regs+5)
		fmt.Fprintf(&b, "    \"wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {%s}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, %%%d;\\n}\\n\"\n",
			n, k, ta, ty, strings.Join(list, ", "), regs, regs+1, regs+2, regs+3, regs+4, regs+6)
		fmt.Fprintf(&b, "    : %s\n    : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(db), \"r\"(scale_d), \"n\"(TB));\n}\n", strings.Join(outs, ", "))
	} else {
		fmt.Fprintf(&b, "template <int TA, int TB>\n__device__ __forceinline__ void %s(float* d, uint64_t da, uint64_t db, int scale_d) {\n", name)
		fmt.Fprintf(&b, "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", regs+2)
		trans := fmt.Sprintf(", %%%d, %%%d", regs+3, regs+4)
		if bdt.Bytes() == 1 {
			trans = ""
		}
		fmt.Fprintf(&b, "    \"wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {%s}, %%%d, %%%d, p, 1, 1%s;\\n}\\n\"\n",
			n, k, ta, ty, strings.Join(list, ", "), regs, regs+1, trans)
		fmt.Fprintf(&b, "    : %s\n    : \"l\"(da), \"l\"(db), \"r\"(scale_d), \"n\"(TA), \"n\"(TB));\n}\n", strings.Join(outs, ", "))
	}
	e.preamble = append(e.preamble, b.String())
	return name
}
