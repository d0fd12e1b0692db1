package kernels

import (
	"fmt"
	"math"

	"github.com/tilego/tilego/tl"
)

// MLA decoding (DeepSeek's multi-head latent attention) over a paged KV
// cache; docs/mla.md describes the tensors, the split-KV path and the
// scheduler.

// The MLA sizes: keys are the 576 columns of a cache row (512 latent and
// 64 rope), values the first 512; the cache is paged in blocks of 64 rows.
const (
	MLADqk  = 576
	MLADv   = 512
	MLAPage = 64
)

// MLAShape is MLA decoding for any batch: the batch size, the number of
// cache blocks in the pool, the width of the block table and (split-KV)
// the number of splits are sizes bound at launch from the tensors.
type MLAShape struct {
	Hq, Sq int      // query heads (all share the one KV head); query tokens per request, causal among them
	DType  tl.DType // f16 or bf16: Q, the cache and O
	Scale  float64  // softmax scale, positive (Check); 0 means 1/sqrt(Dqk)
	// Dqk, Dv and Page are 576, 512 and 64 when 0 (smaller ones make fast
	// tests).
	Dqk, Dv, Page int
}

// MLAConfig is how the kernel tiles the problem.
type MLAConfig struct {
	M       int // query rows (token × head) per block: divides Sq·Hq, and divides Hq or is a multiple of it
	Stages  int
	Threads int
	// WS asks for a producer warpgroup that fetches the pages (Hopper, by
	// TMA; with two stages or more) while the Threads compute.
	WS bool
	// SplitN lets two warpgroups on 64 rows split the columns of both
	// products, so both take wgmma on Hopper (tl's SplitN); without it they
	// take mma.sync there.
	SplitN bool
	// Roles (with SplitN, 64 rows over two warpgroups) gives the
	// warpgroups FlashMLA's roles: warpgroup 0 computes all 64×64 scores
	// of a page (Q read from shared memory once, not by both) and their
	// softmax, and hands the probabilities and row factors to both through
	// shared memory; each then multiplies by its half of V.
	Roles bool
	// Handoff (with Roles) gives each warpgroup its half of the output in
	// a fragment of its own, so the page loop is two warpgroup blocks and
	// the compiler hands P and the row factors from warpgroup 0 to 1 by
	// named barriers (compiler/cudagen/handoff.go): warpgroup 0 scores page
	// j+1 while warpgroup 1 multiplies page j by its half of V.
	Handoff bool
	// V0 (with Handoff) is how many of V's columns, and O's,
	// warpgroup 0 multiplies and holds; warpgroup 1 takes the rest. 0 means
	// half, the fastest: warpgroup 0 also scores every page, but fewer
	// columns on it were slower (192: 0.92-0.94× on an H200, docs/mla.md),
	// since it writes the next P only after warpgroup 1's multiply.
	V0 int `config:"omitzero"`
	// Cluster (2; with WS) runs the two 64-row blocks of a request's 128
	// heads as a cluster that reads each page once, half by each, and
	// multicasts it to both (tl's Cluster; compiler/cudagen/cluster.go).
	Cluster int `config:"omitzero"`
	// Merge (split path; sm_90a's warpgroup hand-off, h_q a multiple of
	// M; the default where requests outnumber parts, GPUConfigFor): one
	// program, no combine. A cut request's first piece, which
	// ends its part (the request's other pieces start theirs, so they are
	// done by then), waits until they have written their partials and
	// folds them into its own rows in registers, writing O and LSE; the
	// others count themselves after their partials (Signal). Its blocks
	// wait for each other, so the kernel launches cooperatively (every
	// block at once).
	Merge bool `config:"omitzero"`
	// Early (split path, not Merge): the combine starts while the split
	// kernel's last parts still run, on the SMs the others free, and
	// merges each request once its pieces are written (each piece adds 1
	// to a counter of its request after its partials; the combine's blocks
	// wait for the request's count), where without it the combine starts
	// when the split kernel ends.
	Early bool `config:"omitzero"`
	// N is the keys a step takes: a cache block in Page/N parts, each a
	// step of the loop (0: the whole block). A GPU whose block cannot hold
	// a block of keys (gfx942's 64 KiB of LDS against 72 KiB) takes it in
	// parts.
	N int `config:"omitzero"`
}

// keys is how many keys a step of the page loop takes (N, or a page).
func (c MLAConfig) keys(s MLAShape) int {
	if c.N == 0 {
		return s.Page
	}
	return c.N
}

// Full fills in the default sizes.
func (s MLAShape) Full() MLAShape {
	if s.Dqk == 0 {
		s.Dqk = MLADqk
	}
	if s.Dv == 0 {
		s.Dv = MLADv
	}
	if s.Page == 0 {
		s.Page = MLAPage
	}
	return s
}

// SoftmaxScale is the scale applied to Q·Kᵀ.
func (s MLAShape) SoftmaxScale() float64 {
	if s.Scale != 0 {
		return s.Scale
	}
	return 1 / math.Sqrt(float64(s.Full().Dqk))
}

// Check reports whether the kernels can be built for s and c.
func (s MLAShape) Check(c MLAConfig) error {
	s = s.Full()
	switch {
	case s.Hq < 1 || s.Sq < 1:
		return fmt.Errorf("mla: %d heads and %d query tokens; want at least 1 of each", s.Hq, s.Sq)
	case s.Scale < 0:
		return fmt.Errorf("mla: softmax scale %v; want a positive one, or 0 for the default", s.Scale)
	case s.DType != tl.BF16 && s.DType != tl.F16:
		return fmt.Errorf("mla: dtype %s; want bf16 or f16", s.DType)
	case s.Dv < 1 || s.Dv > s.Dqk || s.Page < 1:
		return fmt.Errorf("mla: Dqk %d, Dv %d, page %d; want 1 <= Dv <= Dqk and a positive page", s.Dqk, s.Dv, s.Page)
	case c.M < 1 || (!s.padded(c) && (s.Sq*s.Hq%c.M != 0 || (s.Hq%c.M != 0 && c.M%s.Hq != 0))):
		return fmt.Errorf("mla: M = %d must divide s_q·h_q = %d and divide h_q = %d or be a multiple of it (or, with s_q 1, exceed h_q)", c.M, s.Sq*s.Hq, s.Hq)
	case c.Stages < 1 || c.Threads < 1:
		return fmt.Errorf("mla: bad config %+v", c)
	case c.Roles && (!c.SplitN || c.M != 64 || c.Threads != 256):
		return fmt.Errorf("mla: Roles needs SplitN, M = 64 and 256 threads (two warpgroups on 64 rows), got %+v", c)
	case c.Handoff && (!c.Roles || s.Dv%2 != 0):
		return fmt.Errorf("mla: Handoff needs Roles and an even Dv (a half of the output a warpgroup), got %+v, Dv %d", c, s.Dv)
	case c.Early && c.Merge:
		return fmt.Errorf("mla: Early is for the combine, which Merge does without: turn one off (got %+v)", c)
	case c.Merge && (!c.Handoff || s.Hq%c.M != 0):
		return fmt.Errorf("mla: Merge needs Handoff and M dividing h_q = %d (a block's rows one token's heads), got %+v", s.Hq, c)
	case c.N != 0 && (c.N < 0 || s.Page%c.N != 0 || c.WS || c.Roles || c.Cluster > 1):
		return fmt.Errorf("mla: N = %d must divide the page (%d) and goes without WS, Roles and clusters, got %+v", c.N, s.Page, c)
	case c.V0 != 0 && (!c.Handoff || c.V0 < 0 || c.V0 >= s.Dv || c.V0%64 != 0):
		return fmt.Errorf("mla: V0 = %d needs Handoff and a multiple of 64 (a swizzle panel of V) in 64..%d, got %+v", c.V0, s.Dv-1, c)
	}
	return nil
}

// mBlocks is how many M-row blocks a request's s_q·h_q rows take (one
// when a block holds them all).
func (s MLAShape) mBlocks(c MLAConfig) int { return max(1, s.Full().Sq*s.Hq/c.M) }

// padded: one token's h_q heads fill the first rows of a larger M-row
// block; the rest read zeros and store nothing (FlashMLA pads small h_q
// to its 64-row block the same way, so they take the wgmma path).
func (s MLAShape) padded(c MLAConfig) bool { return s.Sq == 1 && c.M > s.Hq }

// MLADecode computes O and the natural-log LSE of every query row: the
// s_q·h_q rows of a request (token-major: row r is token r/h_q, head
// r%h_q) are the M rows of the tiles, since every head reads the one KV
// head; a block streams the request's cache blocks through its block
// table with the online softmax of kernels/flash.go.
func MLADecode(s MLAShape, c MLAConfig) *tl.Func { return mlaDecode(s, c, false) }

// MLADecodeSplit is MLADecode over a schedule (ScheduleMLA, then
// MLAMetadata.Tensors): a block per part (per M-block of rows) walks the
// part's chunks (parts[p] = first chunk, end), and chunk (b, lo, hi, sp)
// covers cache blocks [lo, hi) of request b and writes split sp of its
// normalized output (in partialDType) and base-2 LSE to O_partial and
// LSE_partial; an empty chunk writes zeros and -inf. Splits past num_splits[b]
// are not written: MLACombine reads only those.
func MLADecodeSplit(s MLAShape, c MLAConfig) *tl.Func { return mlaDecode(s, c, true) }

func mlaDecode(s MLAShape, c MLAConfig, split bool) *tl.Func {
	s = s.Full()
	f := tl.NewFunc("mla_decode")
	B, NB, MB := f.Sym("batch"), f.Sym("num_blocks"), f.Sym("max_blocks")
	Q := f.In("Q", s.DType, B, s.Sq, s.Hq, s.Dqk)
	KV := f.In("KV", s.DType, NB, s.Page, s.Dqk) // K is a whole row, V its first Dv columns
	Table := f.In("block_table", tl.I32, B, MB)
	Lens := f.In("cache_seqlens", tl.I32, B)
	// O and LSE are [B, Sq, Hq, (Dv)] with a natural-log LSE, or per split
	// [B, splits, Sq, Hq, (Dv)] in partialDType (LSE f32) with a base-2 LSE.
	a := mlaArgs{Q: Q, KV: KV, Table: Table, Lens: Lens, odt: s.DType, lseScale: math.Ln2}
	lead, sfx := []any{B}, ""
	var Parts, Chunks *tl.Tensor
	nParts := tl.Int(1)
	if split {
		var nChunks tl.Expr
		nParts, nChunks = f.Sym("num_parts"), f.Sym("num_chunks")
		Parts = f.In("parts", tl.I32, nParts, 2)
		Chunks = f.In("chunks", tl.I32, nChunks, 4)
		lead, a.odt, a.lseScale, sfx = []any{B, f.Sym("splits")}, s.partialDType(), 1, "_partial"
		// The combine reads the partials back soon after: they should stay
		// in L2 while the pages stream through it.
		a.oHint = []tl.CacheHint{tl.EvictLast}
	}
	a.O = f.Out("O"+sfx, a.odt, append(lead, s.Sq, s.Hq, s.Dv)...)
	a.LSE = f.Out("LSE"+sfx, tl.F32, append(lead, s.Sq, s.Hq)...)
	if split {
		// The split kernel writes O and LSE too: a request the schedule
		// leaves whole (num_splits 1), or under Merge the merged rows.
		a.ns = f.In("num_splits", tl.I32, B)
		switch {
		case c.Merge:
			a.count = f.Scratch("merge_count", tl.I32, B, f.Sym("count_cols"))
		case c.Early: // [b, 0]: the request's pieces written (MLACombine's wait)
			a.count = f.Scratch("piece_count", tl.I32, B, f.Sym("count_cols"))
		}
		a.oFinal = f.Out("O", s.DType, B, s.Sq, s.Hq, s.Dv)
		a.lseFinal = f.Out("LSE", tl.F32, B, s.Sq, s.Hq)
	}
	nM := s.mBlocks(c) // adjacent in launch order, so they share the pages in L2
	if split {
		f.Kernel(tl.Grid(nM, nParts), c.Threads, func(k *tl.Block) {
			bx, p, _ := k.Idx()
			k.FirstTilesFirst() // Q and the first page at once, the second after
			if c.Early {
				k.NextEarly() // the combine's blocks take the SMs of the parts that end first
			}
			if c.Merge {
				k.Cooperative() // a request's first piece waits for its others
			}
			first := Parts.At(p, 0)
			k.Serial(Parts.At(p, 1).Sub(first), func(i tl.Expr) {
				ch := first.Add(i)
				b := Chunks.At(ch, 0)
				// The consumers' copies of the chunk's request and split, read
				// once: as loads in every address of the epilogue's 128 stores
				// they made its unrolled loop too big for nvcc.
				req := k.Var(tl.I32, b).Named("req").Val()
				sp := k.Var(tl.I32, Chunks.At(ch, 3)).Named("split").Val()
				n := k.Var(tl.I32, a.ns.At(req)).Named("req_splits").Val()
				solo := n.Eq(1) // the request's only piece: it writes O and LSE, not a partial (epilogue)
				var merger tl.Expr
				if c.Merge {
					merger = sp.Eq(0).And(solo.Not())
				}
				mlaPiece(k, s, c, a, bx, b, req, []any{req, sp}, solo, merger, Chunks.At(ch, 1), Chunks.At(ch, 2))
				switch {
				case c.Early: // a piece of a request the combine merges: count it, after its partials
					k.If(solo.Not(), func() { k.Signal(a.count.Sub(req, 0)) })
				case c.Merge: // a piece the request's first merges
					k.If(solo.Not().And(merger.Not()), func() { k.Signal(a.count.Sub(req, bx)) })
				}
			})
		})
		return f
	}
	f.Kernel(tl.Grid(nM, 1, B), c.Threads, func(k *tl.Block) {
		bx, _, b := k.Idx()
		mlaPiece(k, s, c, a, bx, b, b, []any{b}, tl.Expr{}, tl.Expr{}, tl.Int(0), tl.CeilDiv(Lens.At(b), s.Page))
	})
	return f
}

// mlaArgs are the kernel's tensors, and how it stores O and LSE: the
// shape's dtype and natural logs, or (split) partialDType and base 2.
type mlaArgs struct {
	Q, KV, Table, Lens, O, LSE *tl.Tensor
	odt                        tl.DType
	lseScale                   float64
	oHint                      []tl.CacheHint // O's stores (Copy's hint)
	// Split: the requests' split counts and the final O and LSE; under
	// Merge and Early the pieces' counters, too (Merge's a request's
	// M-blocks apart).
	ns, count, oFinal, lseFinal *tl.Tensor
}

// mlaPiece is one block's work on cache blocks [lo, hi) of request b (its
// M-block bx of query rows), written to O and LSE at at (request b, and
// in the split kernel its split). b, lo and hi come from inputs, which a
// producer warpgroup can read too; req is b as the consumers read it. A
// split kernel's piece writes O and LSE at req instead when solo holds,
// and merges the request's other pieces into them when merger holds (no
// expression: never).
func mlaPiece(k *tl.Block, s MLAShape, c MLAConfig, a mlaArgs, bx, b, req tl.Expr, at []any, solo, merger, lo, hi tl.Expr) {
	t := &mlaBlock{k: k, s: s, c: c, a: a, bx: bx, solo: solo, merger: merger}
	t.qs = k.Shared(s.DType, c.M, s.Dqk).Named("qs")
	n := c.keys(s)
	kvs := k.Shared(s.DType, n, s.Dqk).Named("kvs")
	ps := k.Shared(s.DType, c.M, n).Named("ps") // P for the other warpgroup
	t.S = k.Fragment(tl.F32, c.M, n).Named("S")
	if c.Handoff {
		w0 := c.v0(s)
		t.accs = []*tl.Tensor{k.Fragment(tl.F32, c.M, w0).Named("acc0"), k.Fragment(tl.F32, c.M, s.Dv-w0).Named("acc1")}
		t.P = k.Fragment(s.DType, c.M, n).Named("P")
	} else {
		t.accs = []*tl.Tensor{k.Fragment(tl.F32, c.M, s.Dv).Named("acc")}
	}
	t.m = k.Fragment(tl.F32, c.M).Named("m")
	t.mOld = k.Fragment(tl.F32, c.M).Named("m_old")
	t.l = k.Fragment(tl.F32, c.M).Named("l")
	t.lse = k.Fragment(tl.F32, c.M).Named("lse")
	t.rowS = k.Shared(tl.F32, c.M).Named("row_s") // row factors for acc, whose warps may split rows unlike S's
	L := k.Var(tl.I32, a.Lens.At(req)).Named("L")
	if c.WS {
		k.WarpSpecialize()
	}
	if c.Cluster > 1 {
		k.Cluster(c.Cluster)
	}
	if c.SplitN {
		k.SplitN()
	}
	t.loadQ(req)
	t.eachAcc(func(acc *tl.Tensor, _ int) { k.Clear(acc) })
	t.wg0(func() {
		k.Clear(t.l)
		k.Fill(t.m, tl.NegInf())
	})
	var hint []tl.CacheHint
	if s.Sq*s.Hq <= c.M {
		// This block alone reads the request's pages: they stream through
		// L2 once, and should not push out what is read again (the split
		// path's partials, read by the combine). H100, 2026-11-24: 1.02×
		// at b64 h_q 16 and 32, 0.99-1.01× at the other memory-bound
		// points (docs/perf.md).
		hint = append(hint, tl.EvictFirst)
	}
	parts := s.Page / n // steps a cache block
	if parts > 1 {
		lo, hi = lo.Mul(parts), hi.Mul(parts)
	}
	k.PipelinedRange(lo, hi, c.Stages, func(j tl.Expr) {
		if parts == 1 {
			k.Copy(a.KV.Sub(a.Table.At(b, j), tl.All, tl.All), kvs, hint...) // the request's j-th cache block
		} else { // part j % parts of the request's (j / parts)-th cache block
			k.Copy(a.KV.Sub(a.Table.At(b, j.Div(parts)), tl.Range(j.Mod(parts).Mul(n), n), tl.All), kvs, hint...)
		}
		key0 := j.Mul(n)
		// Token t sees keys <= L - Sq + t: an edge block hides a key from some
		// row.
		edge := key0.Add(n).Gt(L.Val().Sub(s.Sq - 1))
		zero := func() {
			k.If(edge, func() { // slots past the length may hold anything, NaN too: zero them
				// Only those: a Select rewriting every slot read and wrote
				// the whole 72 KB page on warpgroup 0's chain (1.14× at b64
				// kv1k, 1.035× at kv8k; H100, 2026-11-25, docs/perf.md).
				// And only V's columns: the rope columns feed scores that
				// the mask replaces (a Select, so NaN goes too).
				k.Parallel(func(r, d tl.Expr) {
					k.If(key0.Add(r).Ge(L), func() { kvs.Set(0, r, d) })
				}, n, s.Dv)
			})
		}
		if !c.Handoff { // else warpgroup 0 zeroes them, before both read the page
			zero()
		}
		t.page(kvs, ps, key0, edge, L.Val(), zero)
	})
	if merger.IR() == nil {
		t.epilogue(at)
		return
	}
	k.If(merger, func() { t.mergeEpilogue(at) }).Else(func() { t.epilogue(at) })
}

// mlaBlock is one block's tiles, and where its work runs: under Roles, S
// and the row statistics m, l and lse are warpgroup 0's (it computes them
// and writes the LSE; both warpgroups read the rows' factors and l through
// rowS); under Handoff, acc is two halves, one a warpgroup.
type mlaBlock struct {
	k                  *tl.Block
	s                  MLAShape
	c                  MLAConfig
	a                  mlaArgs
	bx                 tl.Expr
	qs, rowS           *tl.Tensor
	S, m, mOld, l, lse *tl.Tensor
	P                  *tl.Tensor   // under Handoff, warpgroup 0's P in registers
	accs               []*tl.Tensor // O's columns in equal parts
	solo, merger       tl.Expr      // see mlaPiece
}

// v0 is warpgroup 0's share of V's columns under Handoff (V0, or half).
func (c MLAConfig) v0(s MLAShape) int {
	if c.V0 != 0 {
		return c.V0
	}
	return s.Dv / 2
}

// accCols are the first column and the count of O's columns that part i
// of acc holds.
func (t *mlaBlock) accCols(i int) (col, n int) {
	if len(t.accs) == 1 {
		return 0, t.s.Dv
	}
	w0 := t.c.v0(t.s)
	if i == 1 {
		return w0, t.s.Dv - w0
	}
	return 0, w0
}

// eachAcc runs f on each part i of acc (accCols gives its columns of O):
// under Handoff part i on warpgroup i alone.
func (t *mlaBlock) eachAcc(f func(acc *tl.Tensor, i int)) {
	for i, acc := range t.accs {
		if t.c.Handoff {
			t.k.Warpgroup(i, func() { f(acc, i) })
		} else {
			f(acc, i)
		}
	}
}

// wg0 runs f on warpgroup 0 alone under Roles, else on every thread.
func (t *mlaBlock) wg0(f func()) {
	if t.c.Roles {
		t.k.Warpgroup(0, f)
	} else {
		f()
	}
}

// rows is how many heads of one token a block's piece holds; piece i is
// token tok, heads h0 .. h0+rows-1.
func (t *mlaBlock) rows() int { return min(t.c.M, t.s.Hq) }

func (t *mlaBlock) piece(i int) (tok, h0 tl.Expr) {
	r := t.bx.Mul(t.c.M).Add(i * t.rows())
	return r.Div(t.s.Hq), r.Mod(t.s.Hq)
}

// loadQ copies the block's query rows of request req, a piece at a time;
// padded, the h_q rows and then zeros (the tile runs past Q's heads).
func (t *mlaBlock) loadQ(req tl.Expr) {
	k, c, rows := t.k, t.c, t.rows()
	if t.s.padded(c) {
		k.Copy(t.a.Q.Sub(req, 0, tl.Tile(0, c.M), tl.All), t.qs)
		return
	}
	for i := range c.M / rows {
		tok, h0 := t.piece(i)
		k.Copy(t.a.Q.Sub(req, tok, tl.Range(h0, rows), tl.All), t.qs.Sub(tl.Range(i*rows, rows), tl.All))
	}
}

// page is one cache block's step: scores, online softmax, rescale, P·V;
// under Handoff warpgroup 0 first zeroes the page's slots past the length.
func (t *mlaBlock) page(kvs, ps *tl.Tensor, key0, edge, L tl.Expr, zero func()) {
	k, s, c := t.k, t.s, t.c
	S, mOld := t.S, t.mOld
	rescale := k.ScaleRows // the factors are mostly one (OnlineSoftmax keeps the maximum)
	scores := func() {
		k.Gemm(t.qs, kvs, S, tl.TransB, tl.ClearAccum)
		k.If(edge, func() {
			k.Parallel(func(i, jj tl.Expr) {
				tok := t.bx.Mul(c.M).Add(i).Div(s.Hq)
				hide := key0.Add(jj).Gt(L.Sub(s.Sq).Add(tok))
				S.Set(tl.Select(hide, tl.NegInf(), S.At(i, jj)), i, jj)
			}, c.M, c.keys(s))
		})
		OnlineSoftmax(k, S, t.m, mOld, t.l, s.SoftmaxScale()*math.Log2E, c.M, c.keys(s), true)
	}
	factor := mOld // SplitN: S and acc hold the same rows in the same threads (wgmma's layout)
	switch {
	case c.Handoff: // each warpgroup rescales and multiplies its own half
		w := c.v0(s)
		t.wg0(func() {
			zero()
			scores()
			rescale(t.accs[0], mOld)
			k.Copy(S, t.P) // its own P from registers: no barrier before its multiply
			k.Gemm(t.P, kvs.Sub(tl.All, tl.Range(0, w)), t.accs[0])
			// P and the factors for warpgroup 1, written while the tensor
			// cores run the multiply above.
			k.Copy(mOld, t.rowS)
			k.Copy(S, ps)
		})
		k.Warpgroup(1, func() {
			rescale(t.accs[1], t.rowS)
			k.Gemm(ps, kvs.Sub(tl.All, tl.Range(w, s.Dv-w)), t.accs[1])
		})
		return
	case c.Roles: // warpgroup 0 scores the page; both take P and the factors from shared memory
		t.wg0(func() {
			scores()
			k.Copy(mOld, t.rowS)
			k.Copy(S, ps)
		})
		factor = t.rowS
	case !c.SplitN: // mma.sync: acc's warps split the rows unlike S's
		scores()
		k.Copy(mOld, t.rowS)
		factor = t.rowS
	default:
		scores()
	}
	rescale(t.accs[0], factor)
	if !c.Roles {
		k.Copy(S, ps)
	}
	k.Gemm(ps, kvs.Sub(tl.All, tl.Range(0, s.Dv)), t.accs[0])
}

// epilogue normalizes the rows and writes O and LSE at at: a block of
// one token's heads straight from the fragments, of several tokens
// through shared tiles a token at a time, padded only the first h_q rows.
// A split kernel's piece that is its request's only one (not under Merge)
// writes the final O and natural-log LSE instead of a partial: the
// combine would only copy it (H100 bench shapes: 68 of 128 requests at
// b128 kv8k, 101 of 128 at s_q 2 kv4k).
func (t *mlaBlock) epilogue(at []any) {
	k, s, c, a := t.k, t.s, t.c, t.a
	lse, rowS, solo := t.lse, t.rowS, t.solo
	lseScale, hasSolo := tl.Float(a.lseScale), solo.IR() != nil
	if hasSolo {
		lseScale = tl.Select(solo, math.Ln2, a.lseScale)
	}
	t.wg0(func() {
		k.Parallel(func(i tl.Expr) { // -inf for a row with no keys
			v := t.m.At(i).Mul(s.SoftmaxScale() * math.Log2E).Add(tl.Log2(t.l.At(i))).Mul(lseScale)
			lse.Set(tl.Select(t.l.At(i).Eq(0), tl.NegInf(), v), i)
		}, c.M)
		// The rows' factors 1/l (0 for a row with no keys, whose acc is 0):
		// a multiply an element, where a division took a slow path that
		// spilled.
		k.Parallel(func(i tl.Expr) {
			t.l.Set(tl.Select(t.l.At(i).Eq(0), 0, tl.Float(1).Div(t.l.At(i))), i)
		}, c.M)
		k.Copy(t.l, rowS)
	})
	t.eachAcc(func(acc *tl.Tensor, part int) {
		_, w := t.accCols(part)
		k.Parallel(func(i, d tl.Expr) {
			acc.Set(acc.At(i, d).Mul(rowS.At(i)), i, d)
		}, c.M, w)
	})
	var oT *tl.Tensor // nil: straight from the fragments
	lT := lse
	if !s.padded(c) && c.M > s.Hq {
		oT, lT = k.Shared(a.odt, c.M, s.Dv).Named("os"), rowS
		t.eachAcc(func(acc *tl.Tensor, part int) { k.Copy(acc, oT.Sub(tl.All, t.cols(part))) })
		t.wg0(func() { k.Copy(lse, lT) })
	}
	if !hasSolo {
		t.store(a.O, a.LSE, at, a.oHint, oT, lT)
		return
	}
	k.If(solo, func() {
		t.store(a.oFinal, a.lseFinal, at[:1], nil, oT, lT)
	}).Else(func() {
		t.store(a.O, a.LSE, at, a.oHint, oT, lT)
	})
}

// cols are the columns of O that acc part i holds.
func (t *mlaBlock) cols(i int) any {
	if len(t.accs) == 1 {
		return tl.All
	}
	return tl.Range(t.accCols(i))
}

// store writes the block's normalized rows to O and its LSE to LSE at at,
// from the fragments or (oT) the shared tiles the epilogue staged.
func (t *mlaBlock) store(O, LSE *tl.Tensor, at []any, hint []tl.CacheHint, oT, lT *tl.Tensor) {
	k, s, c := t.k, t.s, t.c
	if s.padded(c) {
		t.eachAcc(func(acc *tl.Tensor, part int) {
			k.Copy(acc, O.Sub(append(at, 0, tl.Tile(0, c.M), t.cols(part))...), hint...)
		})
		t.wg0(func() { k.Copy(t.lse, LSE.Sub(append(at, 0, tl.Tile(0, c.M))...)) })
		return
	}
	rows := t.rows()
	for i := range c.M / rows {
		tok, h0 := t.piece(i)
		if oT != nil {
			k.Copy(oT.Sub(tl.Range(i*rows, rows), tl.All), O.Sub(append(at, tok, tl.Range(h0, rows), tl.All)...), hint...)
		} else {
			t.eachAcc(func(acc *tl.Tensor, part int) {
				k.Copy(acc.Sub(tl.Range(i*rows, rows), tl.All), O.Sub(append(at, tok, tl.Range(h0, rows), t.cols(part))...), hint...)
			})
		}
		lseOut := func() { k.Copy(lT.Sub(tl.Range(i*rows, rows)), LSE.Sub(append(at, tok, tl.Range(h0, rows))...)) }
		if lT == t.lse { // the fragment: warpgroup 0's under Roles
			t.wg0(lseOut)
		} else {
			lseOut()
		}
	}
}

// mergeEpilogue is the epilogue of a cut request's first piece under
// Merge: it waits until the request's other pieces of this M-block have
// written their partials (at[1] is this piece's split, 0; the others are
// 1 .. num_splits-1), zeroes their counter for the next launch, and folds
// each into its own rows as mergeSplits does, in registers. With M the
// largest LSE so far (base 2), for split j:
//
//	M' = max(M, lse_j),  α = 2^(M − M'),  β = 2^(lse_j − M')
//	sum = α·sum + β,     acc = α·f·acc + β·O_j
//
// where f is 1/l for the first split (acc starts unnormalized) and 1
// after it. It then writes acc/sum to O and (M + log2 sum)·ln 2 to LSE, as
// a request's only piece does. O_j is read element by element into the
// multiply-adds: held in registers beside acc, whole (64 a thread) or as
// pairs beside acc packed, it spilled values out of the page loop (H200,
// 2026-11-25: 0.96× and 0.99× the combine at b64 h_q 128 kv8k, this 0.99×
// there and 1.006× at b128).
func (t *mlaBlock) mergeEpilogue(at []any) {
	k, s, c, a := t.k, t.s, t.c, t.a
	req := at[0].(tl.Expr)
	n := a.ns.At(req)
	k.WaitCount(a.count.Sub(req, t.bx), n.Sub(1))
	k.Warpgroup(1, func() { a.count.Set(0, req, t.bx) })
	rowG := k.Shared(tl.F32, c.M).Named("row_g") // β for warpgroup 1 (α·f in rowS)
	// The merge's statistics in the rows' fragments the page loop is done
	// with: the maximum in m_old, α in l and β in lse, each split's.
	st := rowStats{m: t.mOld, a: t.l, w: t.lse, sum: k.Fragment(tl.F32, c.M).Named("merge_sum")}
	mm, sum, f := st.m, st.sum, k.Fragment(tl.F32, c.M).Named("merge_f")
	scale := s.SoftmaxScale() * math.Log2E
	t.wg0(func() {
		k.Parallel(func(i tl.Expr) {
			empty := t.l.At(i).Eq(0) // no key: zeros and -inf
			mm.Set(tl.Select(empty, tl.NegInf(), t.m.At(i).Mul(scale).Add(tl.Log2(t.l.At(i)))), i)
			sum.Set(tl.Select(empty, 0, 1), i)
			f.Set(tl.Select(empty, 0, tl.Float(1).Div(t.l.At(i))), i)
		}, c.M)
	})
	tok, h0 := t.piece(0)
	lse := k.Fragment(tl.F32, c.M).Named("merge_lse") // split j's
	k.Serial(n.Sub(1), func(j0 tl.Expr) {
		j := j0.Add(1)
		t.wg0(func() {
			k.Copy(a.LSE.Sub(req, j, tok, tl.Range(h0, c.M)), lse)
			st.fold(k, c.M, lse.At) // α in t.l, β in t.lse
			k.Parallel(func(i tl.Expr) {
				t.l.Set(t.l.At(i).Mul(f.At(i)), i) // acc's factor, this split
				f.Set(1, i)
			}, c.M)
			k.Copy(t.l, t.rowS)
			k.Copy(t.lse, rowG)
		})
		t.eachAcc(func(acc *tl.Tensor, part int) {
			col, w := t.accCols(part)
			k.Parallel(func(i, d tl.Expr) {
				old := acc.At(i, d).Mul(t.rowS.At(i))
				g := rowG.At(i)
				acc.Set(tl.Select(g.Eq(0), old, old.Add(g.Mul(a.O.At(req, j, tok, h0.Add(i), d.Add(col))))), i, d)
			}, c.M, w)
		})
	})
	t.wg0(func() {
		k.Parallel(func(i tl.Expr) {
			t.lse.Set(st.lse(i), i)
			t.l.Set(tl.Select(sum.At(i).Eq(0), 0, tl.Float(1).Div(sum.At(i))), i)
		}, c.M)
		k.Copy(t.l, t.rowS)
	})
	t.eachAcc(func(acc *tl.Tensor, part int) {
		_, w := t.accCols(part)
		k.Parallel(func(i, d tl.Expr) {
			acc.Set(acc.At(i, d).Mul(t.rowS.At(i)), i, d)
		}, c.M, w)
	})
	t.store(a.oFinal, a.lseFinal, at[:1], nil, nil, t.lse)
}

// partialDType is the element type of the split path's partial O: the
// shape's own (bf16 or f16). The rows are normalized, so the rounding costs
// about what rounding O does (bench error 0.0021-0.0022 of the largest
// output against 0.0018 in f32), and the partials are a share of the bytes
// moved: 128 KB a piece and 64-row block in f32, against about 4.5 MB of
// pages at h_q 64 and kv8k. H100, 2026-11-24: b64 h_q 64 1.03-1.04×,
// b128 h_q 32 and 64 1.02-1.03×, h_q 16 within noise;
// h_q 128 1.01-1.03× at kv8k-16k (fifteenth; docs/perf.md).
func (s MLAShape) partialDType() tl.DType { return s.DType }
