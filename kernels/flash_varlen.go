package kernels

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// Varlen FlashAttention (FlashAttention's flash_attn_varlen_func): a batch
// of sequences of different lengths packed one after another, Q as
// [Tq, H, Dqk] and K, V as [Tk, HKV, D], sequence b's rows starting at
// CuQ[b] and CuK[b] (cumulative lengths, B+1 of them). O is packed as Q,
// LSE as [H, Tq]. A block takes one query tile of one head of one
// sequence; tiles past a sequence's end do nothing, and the rows of a
// sequence's last tile past its end are not stored (they are the next
// sequence's).

// VarlenShape is a varlen batch: the query and key lengths of each
// sequence, the rest as AttnShape (B, Sq and Skv unused; BSHD implied).
type VarlenShape struct {
	AttnShape
	LensQ, LensK []int
}

func (v VarlenShape) total(lens []int) int {
	n := 0
	for _, l := range lens {
		n += l
	}
	return n
}

// FlashAttentionVarlen is the varlen forward. The config's tiling is
// FlashAttention's (M, N, Stages, Threads), with a producer warpgroup
// (WS), the consumers' ping-pong and the deferred P·V (Overlap) on
// Hopper; the walks (Persistent, Draw), Prefetch, Cluster and Direct are
// not taken.
func FlashAttentionVarlen(v VarlenShape, c AttnConfig) *tl.Func {
	s := v.AttnShape
	f := tl.NewFunc("flash_attention_varlen")
	tq, tk := v.total(v.LensQ), v.total(v.LensK)
	B := len(v.LensQ)
	Q := f.In("Q", s.DType, tq, s.H, s.Dqk)
	K := f.In("K", s.DType, tk, s.HKV, s.Dqk)
	V := f.In("V", s.DType, tk, s.HKV, s.Dv)
	CuQ := f.In("CuQ", tl.I32, B+1)
	CuK := f.In("CuK", tl.I32, B+1)
	O := f.Out("O", s.DType, tq, s.H, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.H, tq)
	if v := VarlenConfig(c); v != c {
		f.Refuse("varlen FlashAttention takes M, N, stages, threads, ws, pingpong and overlap (config %s)", ConfigFields(c))
		c = v
	}
	if s.Mods != nil {
		f.Refuse("varlen FlashAttention does not take modifiers (%s) yet", s.Mods.Name)
		s.Mods = nil
	}
	maxQ := slices.Max(v.LensQ)
	nM := (maxQ + c.M - 1) / c.M
	f.Kernel(tl.Grid(nM, s.H, B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		// Causal: longest first, as the padded kernel's blocks over the
		// longest sequence (tile bx sees as many keys in every sequence
		// whose query and key lengths match): at 4 × 4096 0.95× the time
		// of the sequences' own order, with 6269 to 1 tokens 0.96×.
		if s.Causal {
			padded := s
			padded.B, padded.Sq, padded.Skv, padded.BSHD = B, maxQ, slices.Max(v.LensK), true
			b, h, bx = longestFirst(b.Mul(s.H).Add(h).Mul(nM).Add(bx), padded, c)
		}
		q0, k0 := k.Let(CuQ.At(b)), k.Let(CuK.At(b))
		sq, skv := k.Let(CuQ.At(b.Add(1)).Sub(q0)), k.Let(CuK.At(b.Add(1)).Sub(k0))
		// A query tile past its sequence's end visits no key tile and
		// stores nothing; the key loop stays a statement of the kernel's
		// body, where a producer warpgroup can take it.
		live := bx.Mul(c.M).Lt(sq)
		src := attnSrc{Q: Q, K: K, V: V, packed: true, q0: q0, k0: k0, sq: sq, skv: skv}
		r := attnLoopFrom(k, src, s, c, b, h, bx, nil, func(nKV tl.Expr) (lo, hi tl.Expr) {
			return tl.Int(0), tl.Select(live, nKV, tl.Int(0))
		})
		k.Parallel(func(i tl.Expr) {
			lse := r.m.At(i).Mul(r.scale).Add(tl.Log2(r.l.At(i))).Mul(math.Ln2)
			r.lse.Set(tl.Select(r.l.At(i).Eq(0), tl.NegInf(), lse), i)
		}, c.M)
		NormalizeRows(k, r.acc, r.l, c.M, s.Dv)
		// Through shared memory: a tile within its sequence leaves as one
		// copy (16-byte rows or TMA, as the padded kernel's), the last
		// tile row by row, since its rows past the sequence's end are the
		// next sequence's, which another block writes. Row by row from
		// the fragment, O's stores were 4 bytes a thread and four times
		// its bytes reached the L2.
		os := k.Shared(s.DType, c.M, s.Dv).Named("os")
		k.Copy(r.acc, os)
		k.If(bx.Add(1).Mul(c.M).Le(sq), func() {
			k.Copy(os, O.Sub(tl.Range(q0.Add(bx.Mul(c.M)), c.M), h, tl.All))
		}).Else(func() {
			k.Parallel(func(i, d tl.Expr) {
				row := bx.Mul(c.M).Add(i)
				k.If(row.Lt(sq), func() { O.Set(os.At(i, d), q0.Add(row), h, d) })
			}, c.M, s.Dv)
		})
		k.Parallel(func(i tl.Expr) {
			row := bx.Mul(c.M).Add(i)
			k.If(row.Lt(sq), func() { LSE.Set(r.lse.At(i), h, q0.Add(row)) })
		}, c.M)
	})
	return f
}

// ---- flash-attention-varlen ----

var attentionVarlenEntry = &Entry{
	Name: "flash-attention-varlen",
	Doc:  "FlashAttention forward over packed sequences of different lengths (cumulative offsets, as flash_attn_varlen_func)",
	Flags: []Flag{
		{Name: "lens", Default: "1,17,100,257", Arg: "LENS", Help: "the sequences' query lengths, comma-separated"},
		{Name: "lens-kv", Default: "", Arg: "LENS", Help: "their key lengths (default: --lens)"},
		{Name: "heads", Default: "4", Help: "query heads"},
		{Name: "heads-kv", Help: "key/value heads; must divide --heads (default: --heads)"},
		{Name: "dim", Default: "64", Help: "head dimension of Q and K"},
		{Name: "dim-v", Help: "head dimension of V and O (default: --dim)"},
		{Name: "causal", Default: "false", Help: "causal within each sequence, bottom-right aligned", Bool: true},
		{Name: "dtype", Default: "bf16", Help: "element type of Q, K, V and O: bf16 or f16"},
		{Name: "scale", Default: "0", Arg: "X", Help: "softmax scale; 0 means 1/sqrt(dim)"},
	},
	parse: parseVarlen,
}

// varlenFlag is flash-attention's and flash-attention-bwd's --varlen:
// the same kernels over packed sequences (flash-attention-varlen's and
// its backward's, --lens).
var varlenFlag = Flag{Name: "varlen", Default: "", Arg: "LENS", Help: "packed sequences of these lengths, comma-separated " +
	"(as flash_attn_varlen_func; the kernel flash-attention-varlen runs with --lens); not with --batch, --seq-q, --seq-kv, --layout, the modifiers or --splits"}

// parseVarlenFlag reads --varlen: nil when it is not given, else the
// packed sequences' shape from it and the head flags; a flag that sizes
// or masks a padded batch is refused beside it.
func parseVarlenFlag(v values) (*VarlenShape, error) {
	lens := v.str("varlen")
	if lens == "" {
		return nil, nil
	}
	if _, err := parseLens("varlen", lens); err != nil {
		return nil, err
	}
	for _, f := range v.entry.Flags {
		switch f.Name {
		case "batch", "seq-q", "seq-kv", "layout", "window", "softcap", "alibi", "prefix", "doc-lens", "splits", "sms":
			if v.str(f.Name) != f.Default {
				return nil, fmt.Errorf("--varlen packs sequences of the lengths it lists and takes no --%s", f.Name)
			}
		}
	}
	w := values{entry: attentionVarlenEntry, m: map[string]string{}}
	for _, f := range attentionVarlenEntry.Flags {
		w.m[f.Name] = f.Default
		if x, ok := v.m[f.Name]; ok {
			w.m[f.Name] = x
		}
	}
	w.m["lens"] = lens
	return parseVarlenShape(w)
}

func parseLens(flag, s string) ([]int, error) {
	var out []int
	for _, x := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || n < 1 || n > maxDim {
			return nil, fmt.Errorf("--%s %q: want lengths from 1 to %d, comma-separated", flag, s, maxDim)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseVarlen(v values) (Problem, error) {
	s, err := parseVarlenShape(v)
	if err != nil {
		return nil, err
	}
	return &varlenProblem{s: *s}, nil
}

// parseVarlenShape reads flash-attention-varlen's flags.
func parseVarlenShape(v values) (*VarlenShape, error) {
	var s VarlenShape
	var err error
	if s.LensQ, err = parseLens("lens", v.str("lens")); err != nil {
		return nil, err
	}
	s.LensK = s.LensQ
	if x := v.str("lens-kv"); x != "" {
		if s.LensK, err = parseLens("lens-kv", x); err != nil {
			return nil, err
		}
		if len(s.LensK) != len(s.LensQ) {
			return nil, fmt.Errorf("--lens-kv has %d lengths for --lens's %d sequences", len(s.LensK), len(s.LensQ))
		}
	}
	get := func(dst *int, name string, def int) {
		if err == nil {
			*dst, err = v.int(name, def)
		}
	}
	get(&s.H, "heads", 0)
	get(&s.HKV, "heads-kv", s.H)
	get(&s.Dqk, "dim", 0)
	get(&s.Dv, "dim-v", s.Dqk)
	if err != nil {
		return nil, err
	}
	if s.H%s.HKV != 0 {
		return nil, fmt.Errorf("--heads %d is not a multiple of --heads-kv %d", s.H, s.HKV)
	}
	if s.Causal, err = v.bool("causal"); err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	if s.Scale, err = v.scale(); err != nil {
		return nil, err
	}
	s.B, s.BSHD = len(s.LensQ), true
	s.Sq, s.Skv = slices.Max(s.LensQ), slices.Max(s.LensK)
	for _, t := range [][]int{{s.total(s.LensQ), s.H, max(s.Dqk, s.Dv)}, {s.total(s.LensK), s.HKV, max(s.Dqk, s.Dv)}} {
		if _, err := elems("a tensor", t...); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

type varlenProblem struct{ s VarlenShape }

func (p *varlenProblem) Kernel() string { return attentionVarlenEntry.Name }

func (p *varlenProblem) Shape() Fields {
	s := p.s
	join := func(ls []int) string {
		parts := make([]string, len(ls))
		for i, l := range ls {
			parts[i] = strconv.Itoa(l)
		}
		return strings.Join(parts, ",")
	}
	return Fields{{"lens", join(s.LensQ)}, {"lens_kv", join(s.LensK)}, {"heads", s.H}, {"heads_kv", s.HKV},
		{"dim", s.Dqk}, {"dim_v", s.Dv}, {"causal", s.Causal}, {"dtype", s.DType.String()}, {"scale", s.SoftmaxScale()}}
}

// DefaultConfig: as flash-attention's at the longest sequences.
func (p *varlenProblem) DefaultConfig() Config {
	return (&attnProblem{s: p.s.AttnShape}).DefaultConfig()
}

// GPUConfig: flash-attention's GPU config at the longest sequences, less
// what varlen does not take.
func (p *varlenProblem) GPUConfig() Config {
	c := (&attnProblem{s: p.s.AttnShape}).GPUConfig()
	if a, ok := c.(AttnConfig); ok {
		return VarlenConfig(a)
	}
	return c
}

// VarlenConfig is c less what varlen does not take (a cluster of one is
// none).
func VarlenConfig(c AttnConfig) AttnConfig {
	return AttnConfig{M: c.M, N: c.N, Stages: c.Stages, Threads: c.Threads, WS: c.WS, PingPong: c.PingPong, Overlap: c.Overlap,
		Cluster: min(c.Cluster, 1)}
}

// GPUConfigFor: flash-attention's config for arch at the longest
// sequences, less what varlen does not take.
func (p *varlenProblem) GPUConfigFor(arch string) Config {
	c := (&attnProblem{s: p.s.AttnShape}).GPUConfigFor(arch)
	if a, ok := c.(AttnConfig); ok {
		return VarlenConfig(a)
	}
	return c
}

func (p *varlenProblem) Program(c Config) (*tl.Func, error) {
	cfg, err := attnConfigOf(p, c)
	if err != nil {
		return nil, err
	}
	return FlashAttentionVarlen(p.s, cfg), nil
}

// Inputs are packed Q, K, V (normal, std 1), the cumulative offsets, and O
// and LSE poisoned.
func (p *varlenProblem) Inputs(seed uint64) []*tensor.Tensor {
	s := p.s
	tq, tk := s.total(s.LensQ), s.total(s.LensK)
	return []*tensor.Tensor{
		tensor.New(s.DType, tq, s.H, s.Dqk).Rand(seed, 1),
		tensor.New(s.DType, tk, s.HKV, s.Dqk).Rand(seed+1, 1),
		tensor.New(s.DType, tk, s.HKV, s.Dv).Rand(seed+2, 1),
		cumulative(s.LensQ), cumulative(s.LensK),
		tensor.New(s.DType, tq, s.H, s.Dv).Fill(nan),
		tensor.New(ir.F32, s.H, tq).Fill(nan),
	}
}

// cumulative is the offsets of sequences of lens, packed: 0, then each
// one's end (i32, one more than lens).
func cumulative(lens []int) *tensor.Tensor {
	t := tensor.New(ir.I32, len(lens)+1)
	for i, l := range lens {
		t.Data[i+1] = t.Data[i] + float64(l)
	}
	return t
}

// seqRow is row i of head h in sequence b, whose queries start at packed
// row q0 and keys at k0.
type seqRow struct{ b, h, i, q0, k0 int }

// queryRows lists every query row of every sequence; keyRows (by KV head)
// every key row.
func (v VarlenShape) queryRows() []seqRow { return v.seqRows(v.LensQ, v.H) }
func (v VarlenShape) keyRows() []seqRow   { return v.seqRows(v.LensK, v.HKV) }

func (v VarlenShape) seqRows(lens []int, heads int) []seqRow {
	var rows []seqRow
	q0, k0 := 0, 0
	for b := range v.LensQ {
		for h := range heads {
			for i := range lens[b] {
				rows = append(rows, seqRow{b, h, i, q0, k0})
			}
		}
		q0, k0 = q0+v.LensQ[b], k0+v.LensK[b]
	}
	return rows
}

// seqView is rows [start, start+n) of a packed tensor ([T, heads, D], or
// its view [1, heads, T, D] in BSHD layout) as a [1, heads, n, D] view of
// its own (ref's layout for one sequence).
func seqView(t *tensor.Tensor, start, n int) *tensor.Tensor {
	heads, d := t.Shape[1], t.Shape[len(t.Shape)-1]
	return &tensor.Tensor{DType: t.DType, Shape: []int{1, heads, n, d}, Strides: []int{n * heads * d, d, heads * d, 1},
		Data: t.Data[start*heads*d : (start+n)*heads*d]}
}

// Check compares every row of every sequence (or a sample of rows when the
// batch is large) with float64.
func (p *varlenProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	ra := s.refAttn()
	o := Measure{Name: "o", Tol: Tolerance(s.DType)}
	lse := Measure{Name: "lse", Tol: LSETolerance}
	rows := s.queryRows()
	checked := "all"
	if n := int(min(max(sampleMACs/float64(s.Skv*(s.Dqk+s.Dv)), 64), 4096)); n < len(rows) {
		step := len(rows) / n
		var sample []seqRow
		for i := int(seed % uint64(step)); i < len(rows); i += step {
			sample = append(sample, rows[i])
		}
		rows, checked = sample, fmt.Sprintf("sampled %d rows", len(sample))
	}
	wantO, wantL := make([][]float64, len(rows)), make([]float64, len(rows))
	parallelFor(len(rows), func(x int) {
		r := rows[x]
		q := seqView(args[0], r.q0, s.LensQ[r.b])
		k := seqView(args[1], r.k0, s.LensK[r.b])
		v := seqView(args[2], r.k0, s.LensK[r.b])
		wantO[x], wantL[x] = ra.AttentionRow(q, k, v, 0, r.h, r.i)
	})
	for x, r := range rows {
		for d, w := range wantO[x] {
			o.Diff.Add(args[5].At(r.q0+r.i, r.h, d), w)
		}
		lse.Diff.Add(args[6].At(r.h, r.q0+r.i), wantL[x])
	}
	return Report{Measures: []Measure{o, lse}, Checked: checked}
}

// FLOPs counts each sequence's two matrix multiplies, halved when causal.
func (p *varlenProblem) FLOPs() float64 {
	s := p.s
	f := 0.0
	for b := range s.LensQ {
		f += 2 * float64(s.H) * float64(s.LensQ[b]) * float64(s.LensK[b]) * float64(s.Dqk+s.Dv)
	}
	if s.Causal {
		f /= 2
	}
	return f
}
