package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// The varlen backward: the backward's programs over packed sequences.
// Its tensors are packed as the varlen forward's ([T, heads, D], LSE [H,
// Tq]), which is the BSHD layout of one batch entry of T tokens: the
// Delta step and the dQ step run over that view whatever the sequences;
// a step between them copies LSE and Delta to offsets a multiple of 16
// bytes a sequence; the main step, a block per key tile of a sequence,
// visits that sequence's query tiles, reading the cumulative offsets CuQ
// and CuK (inputs after dV).

// packed is the view of v's packed tensors as one BSHD batch entry.
func (v VarlenShape) packed() AttnShape {
	s := v.AttnShape
	s.B, s.BSHD, s.Sq, s.Skv = 1, true, v.total(v.LensQ), v.total(v.LensK)
	return s
}

// AttnBwdVarlen is the varlen backward's main step (AttnBwd's, per
// sequence), reading LSE and Delta as attnBwdVarlenStats lays them out.
func AttnBwdVarlen(v VarlenShape, c AttnConfig) *tl.Func { return attnBwdMain(v.packed(), c, &v) }

// The varlen backward's tensors after AttnBwdInputs' list.
const (
	bwdCuQ = bwdArgs + iota
	bwdCuK
	bwdLSEPad   // f32 [1, H, statsLen]: LSE at each sequence's aligned offset
	bwdDeltaPad // the same of Delta
	bwdVarlenArgs
)

// statsLen is the length of the varlen backward's statistics rows: each
// sequence at statsOffset, 4 elements a sequence more than the tokens.
func (v VarlenShape) statsLen() int { return v.total(v.LensQ) + 4*(len(v.LensQ)+1) }

// statsOffset is where sequence b, whose queries start at packed row q0,
// starts in the statistics rows: q0 rounded up to 4 elements, plus 4 a
// sequence before it, so the sequences do not overlap and each starts on
// 16 bytes, as a TMA row load needs (tmaLine). An expression, not a Let,
// so the compiler sees the multiple.
func statsOffset(q0, b tl.Expr) tl.Expr { return q0.Add(3).Div(4).Mul(4).Add(b.Mul(4)) }

// attnBwdVarlenStats is the varlen backward's second step: each
// sequence's LSE and Delta rows copied to statsOffset in rows of
// statsLen, the gaps between sequences and after the last zero (a query
// tile's rows past its sequence read them, and the mask hides those rows
// only where their values are finite).
func attnBwdVarlenStats(v VarlenShape, c AttnConfig) *tl.Func {
	p := v.packed()
	nb, n := len(v.LensQ), v.statsLen()
	f := tl.NewFunc("flash_attention_varlen_bwd_stats")
	LSE, Delta := f.In("LSE", tl.F32, 1, p.H, p.Sq), f.In("Delta", tl.F32, 1, p.H, p.Sq)
	CuQ := f.In("CuQ", tl.I32, nb+1)
	LSEPad, DeltaPad := f.Out("LSEpad", tl.F32, 1, p.H, n), f.Out("DeltaPad", tl.F32, 1, p.H, n)
	// A sequence's span, up to the next one's start, is at most its
	// length + 7, the last one's up to the end length + 8.
	f.Kernel(tl.Grid(tl.CeilDiv(slices.Max(v.LensQ)+8, c.M), p.H, nb), c.Threads, func(k *tl.Block) {
		x, h, b := k.Idx()
		q0 := k.Let(CuQ.At(b))
		length := k.Let(CuQ.At(b.Add(1)).Sub(q0))
		start := k.Let(statsOffset(q0, b))
		end := k.Let(tl.Select(b.Lt(nb-1), statsOffset(CuQ.At(b.Add(1)), b.Add(1)), tl.Int(n)))
		k.Parallel(func(t tl.Expr) {
			row := x.Mul(c.M).Add(t)
			k.If(start.Add(row).Lt(end), func() {
				k.If(row.Lt(length), func() {
					LSEPad.Set(LSE.At(0, h, q0.Add(row)), 0, h, start.Add(row))
					DeltaPad.Set(Delta.At(0, h, q0.Add(row)), 0, h, start.Add(row))
				}).Else(func() {
					LSEPad.Set(tl.Float(0), 0, h, start.Add(row))
					DeltaPad.Set(tl.Float(0), 0, h, start.Add(row))
				})
			})
		}, c.M)
	})
	return f
}

// AttnBwdVarlenSteps are its four programs and their tensors' indices in
// AttnBwdVarlenInputs' list: Delta, the statistics at aligned offsets,
// the main loop, dQ.
func AttnBwdVarlenSteps(v VarlenShape, c AttnConfig) []Step {
	p := v.packed()
	return []Step{
		{AttnBwdPrep(p, c), []int{bwdO, bwdDO, bwdDelta, bwdDQAcc}},
		{attnBwdVarlenStats(v, c), []int{bwdLSE, bwdDelta, bwdCuQ, bwdLSEPad, bwdDeltaPad}},
		{AttnBwdVarlen(v, c), []int{bwdQ, bwdK, bwdV, bwdDO, bwdLSEPad, bwdDeltaPad, bwdDQAcc, bwdDK, bwdDV, bwdCuQ, bwdCuK}},
		{AttnBwdPost(p, c), []int{bwdDQAcc, bwdDQ}},
	}
}

// AttnBwdVarlenInputs are the varlen backward's tensors: AttnBwdInputs'
// list over the packed view (O and LSE from the float64 forward of each
// sequence), then CuQ and CuK.
func AttnBwdVarlenInputs(v VarlenShape, seed uint64) []*tensor.Tensor {
	p := v.packed()
	fwd := AttentionInputs(p, seed)
	q, k, vv, o, lse := fwd[0], fwd[1], fwd[2], fwd[3], fwd[4]
	ra := v.refAttn()
	rows := v.queryRows()
	parallelFor(len(rows), func(n int) {
		r := rows[n]
		out, l := ra.AttentionRow(seqView(q, r.q0, v.LensQ[r.b]), seqView(k, r.k0, v.LensK[r.b]), seqView(vv, r.k0, v.LensK[r.b]), 0, r.h, r.i)
		for x, ox := range out {
			o.Set(ox, 0, r.h, r.q0+r.i, x)
		}
		lse.Set(l, 0, r.h, r.q0+r.i)
	})
	return varlenBwdArgs(v, q, k, vv, o, lse, seed)
}

// varlenBwdArgs completes the varlen backward's list from the packed Q,
// K, V, O and LSE: the padded backward's over the packed view, then the
// cumulative offsets.
func varlenBwdArgs(v VarlenShape, q, k, vv, o, lse *tensor.Tensor, seed uint64) []*tensor.Tensor {
	p := v.packed()
	p.Mods = nil // varlen takes none (refused at Build)
	args := attnBwdArgs(p, []*tensor.Tensor{q, k, vv, o, lse}, seed)
	stats := func() *tensor.Tensor { return tensor.New(ir.F32, 1, p.H, v.statsLen()).Fill(nan) }
	return append(args, cumulative(v.LensQ), cumulative(v.LensK), stats(), stats())
}

// ---- flash-attention-varlen-bwd ----

var attentionVarlenBwdEntry = &Entry{
	Name: "flash-attention-varlen-bwd",
	Doc: "varlen FlashAttention backward: dQ, dK and dV over packed sequences (cumulative offsets), " +
		"from the forward's O and LSE; four programs (Delta, the statistics at aligned offsets, the main loop, dQ), run and timed together",
	Flags: attentionVarlenEntry.Flags,
	parse: func(v values) (Problem, error) {
		p, err := parseVarlen(v)
		if err != nil {
			return nil, err
		}
		return &varlenBwdProblem{s: p.(*varlenProblem).s}, nil
	},
}

type varlenBwdProblem struct{ s VarlenShape }

func (p *varlenBwdProblem) Kernel() string { return attentionVarlenBwdEntry.Name }
func (p *varlenBwdProblem) Shape() Fields  { return (&varlenProblem{s: p.s}).Shape() }

// DefaultConfig, GPUConfig and GPUConfigFor are the padded backward's at
// the longest sequences.
func (p *varlenBwdProblem) DefaultConfig() Config {
	return (&attnBwdProblem{s: p.s.AttnShape}).DefaultConfig()
}
func (p *varlenBwdProblem) GPUConfig() Config { return (&attnBwdProblem{s: p.s.AttnShape}).GPUConfig() }
func (p *varlenBwdProblem) GPUConfigFor(arch string) Config {
	return (&attnBwdProblem{s: p.s.AttnShape}).GPUConfigFor(arch)
}

func (p *varlenBwdProblem) Program(Config) (*tl.Func, error) {
	return nil, fmt.Errorf("%s runs as four programs (Delta, the statistics at aligned offsets, the main loop, dQ), and tune takes one: "+
		"use emit --step 1 to 4, or kernels.Chain's Steps from Go (tilego run runs all four)", p.Kernel())
}

func (p *varlenBwdProblem) Steps(c Config) ([]Step, error) {
	if _, err := (&attnBwdProblem{s: p.s.AttnShape}).Steps(c); err != nil {
		return nil, err
	}
	return AttnBwdVarlenSteps(p.s, c.(AttnConfig)), nil
}

// Inputs run each sequence's float64 forward for O and LSE.
func (p *varlenBwdProblem) Inputs(seed uint64) []*tensor.Tensor {
	return AttnBwdVarlenInputs(p.s, seed)
}

// Source is the varlen forward over the same sequences (Derived).
func (p *varlenBwdProblem) Source() Problem { return &varlenProblem{s: p.s} }

// Finish makes the backward's inputs from the varlen forward's arguments
// after it ran: its packed [T, H, D] tensors are the backward's packed
// [1, H, T, D] views of the same memory, its LSE [H, T] the backward's
// [1, H, T].
func (p *varlenBwdProblem) Finish(src []*tensor.Tensor, seed uint64) []*tensor.Tensor {
	pk := p.s.packed()
	rows := func(t *tensor.Tensor, heads, seq, d int) *tensor.Tensor { // [T, heads, d] as BSHD [1, heads, T, d]
		shape := []int{1, heads, seq, d}
		return &tensor.Tensor{DType: t.DType, Shape: shape, Strides: tensor.StridesFor(shape, []int{0, 2, 1, 3}), Data: t.Data}
	}
	lse := &tensor.Tensor{DType: src[6].DType, Shape: []int{1, pk.H, pk.Sq}, Strides: tensor.RowMajor([]int{1, pk.H, pk.Sq}), Data: src[6].Data}
	return varlenBwdArgs(p.s, rows(src[0], pk.H, pk.Sq, pk.Dqk), rows(src[1], pk.HKV, pk.Skv, pk.Dqk), rows(src[2], pk.HKV, pk.Skv, pk.Dv),
		rows(src[5], pk.H, pk.Sq, pk.Dv), lse, seed)
}

// Check compares rows of dQ (ref.GradQRow) and of dK and dV
// (ref.GradKVRow) of every sequence with float64: all of them, or a
// seeded sample costing about sampleMACs each.
func (p *varlenBwdProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	ra := s.refAttn()
	width := float64(s.Dqk + s.Dv)
	qRows, kRows := s.queryRows(), s.keyRows() // a key row's h is its KV head, i the key
	r := rand.New(rand.NewPCG(seed, 78))
	sample := func(rows []seqRow, n int) []seqRow {
		if n >= len(rows) {
			return rows
		}
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		return rows[:n]
	}
	nAll := len(qRows) + len(kRows)
	qRows = sample(qRows, int(min(max(sampleMACs/(2*float64(slices.Max(s.LensK))*width), 16), 1024)))
	kRows = sample(kRows, int(min(max(sampleMACs/(2*float64(s.H/s.HKV*slices.Max(s.LensQ))*width), 16), 1024)))
	dq, dk, dv := args[bwdDQ], args[bwdDK], args[bwdDV]
	views := func(x seqRow) (q, k, v, do *tensor.Tensor) {
		nq, nk := s.LensQ[x.b], s.LensK[x.b]
		return seqView(args[bwdQ], x.q0, nq), seqView(args[bwdK], x.k0, nk), seqView(args[bwdV], x.k0, nk), seqView(args[bwdDO], x.q0, nq)
	}
	wantQ := make([][]float64, len(qRows))
	parallelFor(len(qRows), func(n int) {
		x := qRows[n]
		qv, kv, vv, dov := views(x)
		wantQ[n] = ra.GradQRow(qv, kv, vv, dov, 0, x.h, x.i)
	})
	wantK, wantV := make([][]float64, len(kRows)), make([][]float64, len(kRows))
	parallelFor(len(kRows), func(n int) {
		x := kRows[n]
		qv, kv, vv, dov := views(x)
		ov := seqView(args[bwdO], x.q0, s.LensQ[x.b])
		lse := func(_, h, i int) float64 { return args[bwdLSE].At(0, h, x.q0+i) }
		delta := func(_, h, i int) float64 {
			doi, oi := ref.Vec(dov, 0, h, i), ref.Vec(ov, 0, h, i)
			var d float64
			for c := range s.Dv {
				d += doi[c] * oi[c]
			}
			return d
		}
		wantK[n], wantV[n] = ra.GradKVRow(qv, kv, vv, dov, lse, delta, 0, x.h, x.i)
	})
	ms := (&attnBwdProblem{s: s.AttnShape}).measures()
	for n, x := range qRows {
		for c, w := range wantQ[n] {
			ms[0].Diff.Add(dq.At(0, x.h, x.q0+x.i, c), w)
		}
	}
	for n, x := range kRows {
		for c, w := range wantK[n] {
			ms[1].Diff.Add(dk.At(0, x.h, x.k0+x.i, c), w)
		}
		for c, w := range wantV[n] {
			ms[2].Diff.Add(dv.At(0, x.h, x.k0+x.i, c), w)
		}
	}
	checked := "all rows"
	if len(qRows)+len(kRows) < nAll {
		checked = fmt.Sprintf("sampled %d rows of dQ, %d of dK and dV", len(qRows), len(kRows))
	}
	return Report{Measures: ms, Checked: checked}
}

// FLOPs counts each sequence's five matrix multiplies, halved when causal.
func (p *varlenBwdProblem) FLOPs() float64 {
	s := p.s
	f := 0.0
	for b := range s.LensQ {
		f += 2 * float64(s.H) * float64(s.LensQ[b]) * float64(s.LensK[b]) * float64(3*s.Dqk+2*s.Dv)
	}
	if s.Causal {
		f /= 2
	}
	return f
}

var _ Chain = (*varlenBwdProblem)(nil)
