package kernels

import (
	"math"
	"slices"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// FlashAttention's backward, in FlashAttention-2's order, as three
// programs over one list of tensors (AttnBwdInputs'):
//
//  1. prep: Delta = rowsum(dO∘O) for each query row, and dQacc cleared;
//  2. main: a block per N keys of a KV head keeps K and V in shared
//     memory while the query tiles of the head's query heads stream past
//     (a Pipelined loop: the next tile's Q, dO, LSE and Delta load under
//     this one's GEMMs),
//     recomputes P from the forward's LSE, accumulates dK and dV in
//     registers (no atomics: a GQA group's heads run in one block), and
//     adds each tile's share of dQ into dQacc (f32) atomically;
//  3. post: dQ = scale·dQacc in the inputs' type.
//
// With S = Q·Kᵀ and P = exp(scale·S − LSE): dV = Pᵀ·dO, dP = dO·Vᵀ,
// dS = P∘(dP − Delta), dK = scale·dSᵀ·Q, dQ = scale·dS·K. The main loop
// works on the transposes (Sᵀ = K·Qᵀ, N × M), so that P and dS are
// already the A operands of dV's and dK's GEMMs.

// The tensors of the backward, in AttnBwdInputs' order.
const (
	bwdQ = iota
	bwdK
	bwdV
	bwdO
	bwdDO
	bwdLSE
	bwdDelta // f32 [B, H, Sq]: rowsum(dO∘O)
	bwdDQAcc // f32 [B, H, Sq, Dqk]: dQ / scale, summed over the key tiles
	bwdDQ
	bwdDK
	bwdDV
	bwdArgs
)

// AttnBwdPrep is step 1: Delta and a cleared dQacc, a block per M query rows.
func AttnBwdPrep(s AttnShape, c AttnConfig) *tl.Func {
	f := tl.NewFunc("flash_attention_bwd_prep")
	O := s.rows(f.In, "O", s.H, s.Sq, s.Dv)
	dO := s.rows(f.In, "dO", s.H, s.Sq, s.Dv)
	Delta := f.Out("Delta", tl.F32, s.B, s.H, s.Sq)
	dQAcc := f.Out("dQacc", tl.F32, s.B, s.H, s.Sq, s.Dqk)
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		os := k.Shared(s.DType, c.M, s.Dv).Named("os")
		dos := k.Shared(s.DType, c.M, s.Dv).Named("dos")
		prod := k.Fragment(tl.F32, c.M, s.Dv).Named("prod")
		delta := k.Fragment(tl.F32, c.M).Named("delta")
		zero := k.Fragment(tl.F32, c.M, s.Dqk).Named("zero")
		k.Copy(O.Sub(b, h, tl.Tile(bx, c.M), tl.All), os)
		k.Copy(dO.Sub(b, h, tl.Tile(bx, c.M), tl.All), dos)
		k.Parallel(func(i, d tl.Expr) {
			prod.Set(os.At(i, d).Mul(dos.At(i, d)), i, d)
		}, c.M, s.Dv)
		k.ReduceSum(prod, delta, 1)
		k.Copy(delta, Delta.Sub(b, h, tl.Tile(bx, c.M)))
		k.Clear(zero)
		k.Copy(zero, dQAcc.Sub(b, h, tl.Tile(bx, c.M), tl.All))
	})
	return f
}

// AttnBwd is step 2: dK, dV and dQacc, a block per N keys of a KV head.
func AttnBwd(s AttnShape, c AttnConfig) *tl.Func { return attnBwdMain(s, c, nil) }

// bwdSeq is where a block's sequence lies in the tensors: batch entry b
// of [B, H, S, D] tensors, or (varlen) sequence b's rows from q0 and k0,
// sq and skv long, of packed tensors viewed as one batch entry.
type bwdSeq struct {
	b, q0, k0, sq, skv tl.Expr
	packed             bool
}

// rows is the tile of n rows from row t·n of a sequence that starts at
// row start, l rows long; packed, a tile past the end (which stores
// nothing) reads the sequence's last rows.
func (q bwdSeq) rows(start, t tl.Expr, n int, l tl.Expr) any {
	if q.packed {
		return tl.Range(start.Add(tl.Min(t.Mul(n), l.Sub(1))), n)
	}
	return tl.Tile(t, n)
}

// attnBwdMain is AttnBwd, or (v set) its varlen twin over s, the packed
// tensors viewed as one BSHD batch entry of v's total lengths, with the
// cumulative offsets CuQ and CuK as inputs after dV.
func attnBwdMain(s AttnShape, c AttnConfig, v *VarlenShape) *tl.Func {
	name := "flash_attention_bwd"
	if v != nil {
		name = "flash_attention_varlen_bwd"
	}
	f := tl.NewFunc(name)
	mods := s.Mods
	if m := s.Mods; m != nil && m.Score != nil && m.ScoreGrad == nil {
		f.Refuse("the score modifier (%s) has no derivative (AttnMods.ScoreGrad), which the backward needs", m.Name)
		mods = nil // the program is refused; build it without them
	}
	Q, K, V := s.qkv(f)
	dO := s.rows(f.In, "dO", s.H, s.Sq, s.Dv)
	statsLen := s.Sq
	if v != nil { // at each sequence's aligned offset (attnBwdVarlenStats)
		statsLen = v.statsLen()
	}
	LSE := f.In("LSE", tl.F32, s.B, s.H, statsLen)
	Delta := f.In("Delta", tl.F32, s.B, s.H, statsLen)
	dQAcc := f.Out("dQacc", tl.F32, s.B, s.H, s.Sq, s.Dqk)
	dK := s.rows(f.Out, "dK", s.HKV, s.Skv, s.Dqk)
	dV := s.rows(f.Out, "dV", s.HKV, s.Skv, s.Dv)
	mods = mods.declared(f) // the tensors the modifiers read, after dV
	var CuQ, CuK *tl.Tensor
	grid := tl.Grid(tl.CeilDiv(s.Skv, c.N), s.HKV, s.B)
	if v != nil {
		CuQ, CuK = f.In("CuQ", tl.I32, len(v.LensQ)+1), f.In("CuK", tl.I32, len(v.LensQ)+1)
		grid = tl.Grid(tl.CeilDiv(slices.Max(v.LensK), c.N), s.HKV, len(v.LensQ))
	}
	scale := s.SoftmaxScale()
	nM, group := (s.Sq+c.M-1)/c.M, s.H/s.HKV
	// A warp owns whole rows of Sᵀ and dPᵀ, so that P and dS, made from
	// them element by element, copy into the A operands of dV's and dK's
	// GEMMs register for register on NVIDIA (as the forward's S into P).
	// With SharedP they go through shared memory and any layout serves.
	rows := tl.WithPolicy(tl.FullRow)
	if c.SharedP {
		rows = tl.WithPolicy(ir.Square)
	}
	f.Kernel(grid, c.Threads, func(k *tl.Block) {
		j, hk, b := k.Idx()
		sq := bwdSeq{b: b, q0: tl.Int(0), k0: tl.Int(0), sq: tl.Int(s.Sq), skv: tl.Int(s.Skv)}
		last := tl.Int(nM)
		if v != nil {
			q0, k0 := k.Let(CuQ.At(b)), k.Let(CuK.At(b))
			sq = bwdSeq{b: tl.Int(0), q0: q0, k0: k0, packed: true,
				sq: k.Let(CuQ.At(b.Add(1)).Sub(q0)), skv: k.Let(CuK.At(b.Add(1)).Sub(k0))}
			// A key tile past its sequence's end visits no query tile.
			last = tl.Select(j.Mul(c.N).Lt(sq.skv), tl.CeilDiv(sq.sq, c.M), tl.Int(0))
		}
		kRows := sq.rows(sq.k0, j, c.N, sq.skv)
		k.SplitN() // dQ's 64 rows over two warpgroups: wgmma, half the columns each
		if c.WS {
			k.WarpSpecialize()
		}
		ks := k.Shared(s.DType, c.N, s.Dqk).Named("ks")
		vs := k.Shared(s.DType, c.N, s.Dv).Named("vs")
		qs := k.Shared(s.DType, c.M, s.Dqk).Named("qs")
		dos := k.Shared(s.DType, c.M, s.Dv).Named("dos")
		lse := k.Shared(tl.F32, c.M).Named("lse")
		delta := k.Shared(tl.F32, c.M).Named("delta")
		dSs := k.Shared(s.DType, c.N, c.M).Named("dSs") // dSᵀ, dQ's A operand (transposed)
		St := k.Fragment(tl.F32, c.N, c.M).Named("St")
		dPt := k.Fragment(tl.F32, c.N, c.M).Named("dPt")
		var Pt, dSt, Ps *tl.Tensor
		if c.SharedP {
			Ps = k.Shared(s.DType, c.N, c.M).Named("Ps")
		} else {
			Pt = k.Fragment(s.DType, c.N, c.M).Named("Pt")
			dSt = k.Fragment(s.DType, c.N, c.M).Named("dSt")
		}
		dk := k.Fragment(tl.F32, c.N, s.Dqk).Named("dk")
		dv := k.Fragment(tl.F32, c.N, s.Dv).Named("dv")
		dq := k.Fragment(tl.F32, c.M, s.Dqk).Named("dq")
		var dqs *tl.Tensor
		if c.BulkDQ {
			dqs = k.Shared(tl.F32, c.M, s.Dqk).Named("dqs")
		}

		k.Copy(K.Sub(sq.b, hk, kRows, tl.All), ks)
		k.Copy(V.Sub(sq.b, hk, kRows, tl.All), vs)
		k.Clear(dk)
		k.Clear(dv)
		// Causal: key t is visible to query i when t <= i + Skv - Sq, so
		// the tile's first key is first seen by query j·N - (Skv - Sq).
		first := tl.Int(0)
		if s.Causal {
			first = tl.Max(0, j.Mul(c.N).Sub(sq.skv.Sub(sq.sq))).Div(c.M)
		}
		if mods != nil && mods.Queries != nil { // only the query tiles the mask shows this key tile to
			qlo, qhi := mods.Queries(b, j.Mul(c.N), j.Add(1).Mul(c.N))
			first = tl.Max(first, tl.Max(qlo, 0).Div(c.M))
			last = tl.Max(first, tl.Min(last, tl.CeilDiv(tl.Max(qhi, 0), c.M)))
		}
		k.Serial(group, func(g tl.Expr) {
			h := hk.Mul(group).Add(g)
			k.PipelinedRange(first, last, c.Stages, func(i tl.Expr) {
				qRows := sq.rows(sq.q0, i, c.M, sq.sq)
				k.Copy(Q.Sub(sq.b, h, qRows, tl.All), qs)
				k.Copy(dO.Sub(sq.b, h, qRows, tl.All), dos)
				statRows := qRows
				if sq.packed { // i·M < the sequence's length, so no clamp
					statRows = tl.Range(statsOffset(sq.q0, b).Add(i.Mul(c.M)), c.M)
				}
				k.Copy(LSE.Sub(sq.b, h, statRows), lse)
				k.Copy(Delta.Sub(sq.b, h, statRows), delta)
				k.Gemm(ks, qs, St, tl.TransB, tl.ClearAccum, rows)   // Sᵀ = K·Qᵀ
				k.Gemm(vs, dos, dPt, tl.TransB, tl.ClearAccum, rows) // dPᵀ = V·dOᵀ
				// P and dS, masked element by element or (mask false) not.
				pds := func(mask bool) {
					k.Parallel(func(t, r tl.Expr) {
						key, row := j.Mul(c.N).Add(t), i.Mul(c.M).Add(r)
						hide := key.Ge(sq.skv).Or(row.Ge(sq.sq))
						if s.Causal {
							hide = hide.Or(key.Gt(row.Add(sq.skv.Sub(sq.sq))))
						}
						// exp(scale·S − LSE) in base 2; a row that sees no key
						// has LSE −inf and every key hidden. With a score
						// modifier f, exp(f(scale·S) − LSE), and dS takes f's
						// derivative (the chain rule; scale comes at the end).
						x := St.At(t, r).Mul(scale * math.Log2E)
						var grad tl.Expr
						if mods != nil {
							if mods.Mask != nil {
								hide = hide.Or(mods.Mask(b, h, row, key).Not())
							}
							if mods.Score != nil {
								x0 := St.At(t, r).Mul(scale)
								x = mods.Score(x0, b, h, row, key).Mul(math.Log2E)
								grad = mods.ScoreGrad(x0, b, h, row, key)
							}
						}
						// P and dS overwrite Sᵀ and dPᵀ (dS first: its
						// derivative reads Sᵀ), then are copied into dV's and
						// dK's A operands: a Parallel writing those directly
						// would tie them to the accumulators' layout, which
						// gfx942's MFMA operands cannot take. P is computed
						// once, for both.
						e := tl.Exp2(x.Sub(lse.At(r).Mul(math.Log2E)))
						if mask {
							e = tl.Select(hide, 0, e)
						}
						p := k.Let(e)
						ds := p.Mul(dPt.At(t, r).Sub(delta.At(r)))
						if grad.IR() != nil {
							ds = ds.Mul(grad)
						}
						dPt.Set(ds, t, r)
						St.Set(p, t, r)
					}, c.N, c.M)
				}
				masks := s.Causal || mods != nil && mods.Mask != nil
				if !c.WholeTiles || !masks || mods != nil && mods.Mask != nil && mods.Whole == nil {
					pds(true)
				} else { // unmasked where every query of the tile sees every key
					k0, k1, q0, q1 := j.Mul(c.N), j.Add(1).Mul(c.N), i.Mul(c.M), i.Add(1).Mul(c.M)
					whole := k1.Le(sq.skv).And(q1.Le(sq.sq))
					if s.Causal {
						whole = whole.And(k1.Sub(1).Le(q0.Add(sq.skv.Sub(sq.sq))))
					}
					if mods != nil && mods.Mask != nil {
						whole = whole.And(mods.Whole(b, q0, q1, k0, k1))
					}
					k.If(whole, func() { pds(false) }).Else(func() { pds(true) })
				}
				// dS reaches shared memory first, so that dQ's GEMM is issued
				// first and its atomic adds run under dV's and dK's GEMMs
				// (the compiler waits for each GEMM where its result is used).
				if c.SharedP {
					k.Copy(St, Ps)
					k.Copy(dPt, dSs)
				} else {
					k.Copy(St, Pt)
					k.Copy(dPt, dSt)
					k.Copy(dSt, dSs) // dQ's GEMM reads dSᵀ transposed
				}
				k.Gemm(dSs, ks, dq, tl.TransA, tl.ClearAccum) // dQ_i = dS·K
				if c.SharedP {
					k.Gemm(Ps, dos, dv) // dV += Pᵀ·dO
					k.Gemm(dSs, qs, dk) // dK += dSᵀ·Q (scaled at the end)
				} else {
					k.Gemm(Pt, dos, dv, rows) // dV += Pᵀ·dO
					k.Gemm(dSt, qs, dk, rows) // dK += dSᵀ·Q (scaled at the end)
				}
				// Packed, a tile's rows past its sequence's end are the next
				// sequence's: they see no key here, so their dS rows, and
				// what they add, are zero.
				if c.BulkDQ {
					k.Copy(dq, dqs)
					k.AtomicAdd(dqs, dQAcc.Sub(sq.b, h, qRows, tl.All))
				} else {
					k.AtomicAdd(dq, dQAcc.Sub(sq.b, h, qRows, tl.All))
				}
			})
		})
		k.Parallel(func(t, d tl.Expr) { dk.Set(dk.At(t, d).Mul(scale), t, d) }, c.N, s.Dqk)
		if !sq.packed {
			k.Copy(dk, dK.Sub(b, hk, tl.Tile(j, c.N), tl.All))
			k.Copy(dv, dV.Sub(b, hk, tl.Tile(j, c.N), tl.All))
			return
		}
		// A key tile within its sequence stores as the padded one does;
		// the last row by row, since its keys past the sequence's end are
		// the next sequence's, which another block writes.
		k.If(j.Add(1).Mul(c.N).Le(sq.skv), func() {
			keys := tl.Range(sq.k0.Add(j.Mul(c.N)), c.N)
			k.Copy(dk, dK.Sub(0, hk, keys, tl.All))
			k.Copy(dv, dV.Sub(0, hk, keys, tl.All))
		}).Else(func() {
			for _, x := range []struct {
				acc, out *tl.Tensor
				d        int
			}{{dk, dK, s.Dqk}, {dv, dV, s.Dv}} {
				k.Parallel(func(t, d tl.Expr) {
					key := j.Mul(c.N).Add(t)
					k.If(key.Lt(sq.skv), func() { x.out.Set(x.acc.At(t, d), 0, hk, sq.k0.Add(key), d) })
				}, c.N, x.d)
			}
		})
	})
	return f
}

// AttnBwdPost is step 3: dQ = scale·dQacc in the inputs' type.
func AttnBwdPost(s AttnShape, c AttnConfig) *tl.Func {
	f := tl.NewFunc("flash_attention_bwd_post")
	dQAcc := f.In("dQacc", tl.F32, s.B, s.H, s.Sq, s.Dqk)
	dQ := s.rows(f.Out, "dQ", s.H, s.Sq, s.Dqk)
	scale := s.SoftmaxScale()
	f.Kernel(tl.Grid(tl.CeilDiv(s.Sq, c.M), s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		acc := k.Fragment(tl.F32, c.M, s.Dqk).Named("acc")
		k.Copy(dQAcc.Sub(b, h, tl.Tile(bx, c.M), tl.All), acc)
		k.Parallel(func(i, d tl.Expr) { acc.Set(acc.At(i, d).Mul(scale), i, d) }, c.M, s.Dqk)
		k.Copy(acc, dQ.Sub(b, h, tl.Tile(bx, c.M), tl.All))
	})
	return f
}

// AttnBwdSteps are the three programs and the indices of their tensors in
// AttnBwdInputs' list.
func AttnBwdSteps(s AttnShape, c AttnConfig) []Step {
	mainFn := AttnBwd(s, c)
	main := []int{bwdQ, bwdK, bwdV, bwdDO, bwdLSE, bwdDelta, bwdDQAcc, bwdDK, bwdDV}
	for i := range mainFn.NumParams() - len(main) { // the modifiers' tensors, last in the list
		main = append(main, bwdArgs+i)
	}
	return []Step{
		{AttnBwdPrep(s, c), []int{bwdO, bwdDO, bwdDelta, bwdDQAcc}},
		{mainFn, main},
		{AttnBwdPost(s, c), []int{bwdDQAcc, bwdDQ}},
	}
}

// AttnBwdInputs are the backward's tensors in its order: seeded random Q,
// K, V and dO (laid out as the shape says); O and LSE from the float64
// forward (O rounded to the inputs' type), as the forward kernel leaves
// them; Delta, dQacc, dQ, dK and dV poisoned with NaN; then the
// modifiers' tensors (AttnMods.Inputs).
func AttnBwdInputs(s AttnShape, seed uint64) []*tensor.Tensor {
	fwd := AttentionInputs(s, seed)
	q, k, v, o, lse := fwd[0], fwd[1], fwd[2], fwd[3], fwd[4]
	p := s.refAttn()
	rows := AllRows(s)
	parallelFor(len(rows), func(n int) {
		r := rows[n]
		out, l := p.AttentionRow(q, k, v, r.B, r.H, r.I)
		for x, ox := range out {
			o.Set(ox, r.B, r.H, r.I, x)
		}
		lse.Set(l, r.B, r.H, r.I)
	})
	return attnBwdArgs(s, fwd, seed)
}

// attnBwdArgs are the backward's tensors made from the forward's
// arguments after it ran (Q, K, V, O and LSE, in AttentionInputs' order).
func attnBwdArgs(s AttnShape, fwd []*tensor.Tensor, seed uint64) []*tensor.Tensor {
	q, k, v, o, lse := fwd[0], fwd[1], fwd[2], fwd[3], fwd[4]
	like := func(t *tensor.Tensor) *tensor.Tensor {
		return tensor.NewStrided(t.DType, t.Shape, t.Strides).Fill(nan)
	}
	do := like(o).Rand(seed+3, 1)
	args := make([]*tensor.Tensor, bwdArgs)
	args[bwdQ], args[bwdK], args[bwdV], args[bwdO], args[bwdDO], args[bwdLSE] = q, k, v, o, do, lse
	args[bwdDelta] = tensor.New(ir.F32, s.B, s.H, s.Sq).Fill(nan)
	args[bwdDQAcc] = tensor.New(ir.F32, s.B, s.H, s.Sq, s.Dqk).Fill(nan)
	args[bwdDQ] = like(q)
	args[bwdDK] = like(k)
	args[bwdDV] = like(v)
	if m := s.Mods; m != nil && m.Inputs != nil {
		args = append(args, m.Inputs()...)
	}
	return args
}

// AttnBwdTensors picks, from AttnBwdInputs' list, the tensors a caller
// reads: the inputs a reference needs and the three gradients.
func AttnBwdTensors(args []*tensor.Tensor) (q, k, v, do, dq, dk, dv *tensor.Tensor) {
	return args[bwdQ], args[bwdK], args[bwdV], args[bwdDO], args[bwdDQ], args[bwdDK], args[bwdDV]
}
