package kernels

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ---- flash-attention ----

// attnShapeFlags are the shape flags of the attention kernels (forward
// and backward).
var attnShapeFlags = []Flag{
	{Name: "batch", Default: "1", Help: "batch size"},
	{Name: "heads", Default: "4", Help: "query heads"},
	{Name: "heads-kv", Help: "key/value heads; must divide --heads (GQA/MQA) (default: --heads)"},
	{Name: "seq-q", Default: "256", Help: "query sequence length"},
	{Name: "seq-kv", Help: "key/value sequence length (default: --seq-q)"},
	{Name: "dim", Default: "64", Help: "head dimension of Q and K"},
	{Name: "dim-v", Help: "head dimension of V and O (default: --dim)"},
	{Name: "causal", Default: "false", Help: "causal mask, bottom-right aligned: query i sees keys j <= i + seq-kv - seq-q", Bool: true},
	{Name: "dtype", Default: "bf16", Help: "element type of Q, K, V and O: bf16 or f16"},
	{Name: "layout", Default: "bhsd", Help: "memory layout of Q, K, V and O: bhsd or bshd"},
	{Name: "scale", Default: "0", Arg: "X", Help: "softmax scale; 0 means 1/sqrt(dim)"},
}

// modFlags are the score and mask modifiers of the forward and the
// backward (parseAttnMods).
var modFlags = []Flag{
	{Name: "window", Default: "", Arg: "L,R", Help: "sliding window: query i sees keys from L before its diagonal to R after it (the diagonal at i + seq-kv - seq-q; -1: unbounded), as FlashAttention's window_size (kernels.SlidingWindow)"},
	{Name: "softcap", Default: "0", Arg: "X", Help: "soft-capping of the scores, X·tanh(s/X) (kernels.SoftCap); 0: none"},
	{Name: "alibi", Default: "false", Help: "ALiBi position biases, slope 2^(-8(h+1)/heads) a head (kernels.ALiBi)", Bool: true},
	{Name: "prefix", Default: "", Arg: "N", Help: "prefix-LM mask: every query sees the first N keys, then keys up to its diagonal (kernels.PrefixLM)"},
	{Name: "doc-lens", Default: "", Arg: "LENS", Help: "document masks of packed sequences: the documents' lengths, comma-separated, summing to --seq-q (= --seq-kv); a token sees only its own document's (kernels.DocumentMask)"},
}

var attentionEntry = &Entry{
	Name: "flash-attention",
	Doc:  "FlashAttention forward: O = softmax(scale·Q·Kᵀ)·V and the LSE of each query row (MHA/GQA/MQA, causal, score and mask modifiers)",
	Flags: append(append(slices.Clip(attnShapeFlags), modFlags...),
		Flag{Name: "splits", Default: "1", Arg: "N", Help: "KV splits: 1 runs the single program; 0 lets the cost model (kernels.TailSplits) decide for --sms, N >= 2 cuts the keys of the last wave's blocks (of every block, when the grid fills at most one wave) in N; more than one split is two programs (split kernel, then combine), with 128-row tiles: run runs and times them together, emit prints one (--step), tune takes one program"},
		Flag{Name: "sms", Default: "132", Help: "SM count the split is planned for (--splits other than 1)"},
		varlenFlag,
	),
	parse: parseAttention,
}

func parseAttention(v values) (Problem, error) {
	if vs, err := parseVarlenFlag(v); err != nil || vs != nil {
		if err != nil {
			return nil, err
		}
		return &varlenProblem{s: *vs}, nil
	}
	s, err := parseAttnShape(v)
	if err != nil {
		return nil, err
	}
	splits, err := v.splits("the cost model")
	if err != nil {
		return nil, err
	}
	sms, err := v.int("sms", 0)
	if err != nil {
		return nil, err
	}
	if s.Mods, err = parseAttnMods(v, s); err != nil {
		return nil, err
	}
	if s.Mods != nil && splits != 1 {
		return nil, fmt.Errorf("--splits %d: --window, --softcap and --alibi run the single program (--splits 1)", splits)
	}
	return attnSplits(s, splits, sms), nil
}

// parseAttnMods reads --window, --softcap and --alibi into modifiers, or
// nil when none is given.
func parseAttnMods(v values, s AttnShape) (*AttnMods, error) {
	var mods []AttnMods
	if w := v.str("window"); w != "" {
		l, r, ok := strings.Cut(w, ",")
		left, err1 := strconv.Atoi(strings.TrimSpace(l))
		right, err2 := strconv.Atoi(strings.TrimSpace(r))
		if !ok || err1 != nil || err2 != nil || left < -1 || right < -1 {
			return nil, fmt.Errorf("--window %q: want L,R, two whole numbers of keys, -1 for unbounded (e.g. 256,0)", w)
		}
		if left == -1 && right == -1 {
			return nil, fmt.Errorf("--window -1,-1 bounds nothing; leave it out")
		}
		mods = append(mods, SlidingWindow(left, right, s.Sq, s.Skv))
	}
	cap, err := v.float("softcap")
	if err != nil {
		return nil, err
	}
	if cap < 0 || math.IsInf(cap, 0) {
		return nil, fmt.Errorf("--softcap %v: want a positive cap, or 0 for none", cap)
	}
	if cap > 0 {
		mods = append(mods, SoftCap(cap))
	}
	alibi, err := v.bool("alibi")
	if err != nil {
		return nil, err
	}
	if alibi {
		mods = append(mods, ALiBi(s.H, s.Sq, s.Skv))
	}
	prefix, err := v.int("prefix", 0)
	if err != nil {
		return nil, err
	}
	if prefix > 0 {
		if s.Causal {
			return nil, fmt.Errorf("--prefix %d with --causal: the prefix-LM mask is causal after its prefix already; leave --causal out", prefix)
		}
		mods = append(mods, PrefixLM(prefix, s.Sq, s.Skv))
	}
	if d := v.str("doc-lens"); d != "" {
		var lens []int
		sum := 0
		for _, x := range strings.Split(d, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--doc-lens %q: want positive whole lengths, comma-separated", d)
			}
			lens, sum = append(lens, n), sum+n
		}
		if sum != s.Sq || s.Sq != s.Skv {
			return nil, fmt.Errorf("--doc-lens %q: the lengths sum to %d; they must sum to --seq-q %d, and --seq-kv (%d) must equal it", d, sum, s.Sq, s.Skv)
		}
		mods = append(mods, DocumentMask(lens, s.B, s.Sq))
	}
	if len(mods) == 0 {
		return nil, nil
	}
	m := mods[0]
	for _, n := range mods[1:] {
		m = m.Then(n)
	}
	return &m, nil
}

// parseAttnShape reads attnShapeFlags.
func parseAttnShape(v values) (AttnShape, error) {
	var s AttnShape
	var err error
	get := func(dst *int, name string, def int) {
		if err == nil {
			*dst, err = v.int(name, def)
		}
	}
	get(&s.B, "batch", 0)
	get(&s.H, "heads", 0)
	get(&s.HKV, "heads-kv", s.H)
	get(&s.Sq, "seq-q", 0)
	get(&s.Skv, "seq-kv", s.Sq)
	get(&s.Dqk, "dim", 0)
	get(&s.Dv, "dim-v", s.Dqk)
	if err != nil {
		return s, err
	}
	if s.H%s.HKV != 0 {
		return s, fmt.Errorf("--heads %d is not a multiple of --heads-kv %d", s.H, s.HKV)
	}
	if s.Causal, err = v.bool("causal"); err != nil {
		return s, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16); err != nil {
		return s, err
	}
	switch l := v.str("layout"); l {
	case "bhsd":
	case "bshd":
		s.BSHD = true
	default:
		return s, fmt.Errorf("--layout: unknown layout %q (want bhsd or bshd)", l)
	}
	if s.Scale, err = v.scale(); err != nil {
		return s, err
	}
	for _, t := range [][]int{{s.B, s.H, s.Sq, max(s.Dqk, s.Dv)}, {s.B, s.HKV, s.Skv, max(s.Dqk, s.Dv)}} {
		if _, err := elems("a tensor", t...); err != nil {
			return s, err
		}
	}
	return s, nil
}

type attnProblem struct {
	s    AttnShape
	note string // why --splits 0 runs the single program
	// visible counts the (query, key) pairs a mask leaves, once.
	pairs   sync.Once
	visible float64
}

// SplitNote says why --splits 0 left the single program running; ""
// otherwise.
func (p *attnProblem) SplitNote() string { return p.note }

func (p *attnProblem) Kernel() string { return attentionEntry.Name }

func (p *attnProblem) Shape() Fields {
	s := p.s
	layout := "bhsd"
	if s.BSHD {
		layout = "bshd"
	}
	fs := Fields{
		{"batch", s.B}, {"heads", s.H}, {"heads_kv", s.HKV}, {"seq_q", s.Sq}, {"seq_kv", s.Skv},
		{"dim", s.Dqk}, {"dim_v", s.Dv}, {"causal", s.Causal}, {"dtype", s.DType.String()},
		{"layout", layout}, {"scale", s.SoftmaxScale()},
	}
	if s.Mods != nil {
		fs = append(fs, Field{"mods", s.Mods.Name})
	}
	return fs
}

// DefaultConfig: 64×64 tiles (fewer rows for short sequences, rounded up
// to 16), 2 stages, 128 threads.
func (p *attnProblem) DefaultConfig() Config {
	return AttnConfig{M: min(64, roundUp(p.s.Sq, 16)), N: min(64, roundUp(p.s.Skv, 16)), Stages: 2, Threads: 128}
}

// GPUConfig: 128 query rows per block over two warpgroups, 128 keys per
// tile up to head dim 128 and 64 beyond (registers bound it).
func (p *attnProblem) GPUConfig() Config {
	if max(p.s.Dqk, p.s.Dv) <= 128 {
		return AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	}
	return AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
}

// GPUConfigFor: on sm_90a, for head dims 64, 128 and 256 (Q, K and V alike),
// the configs that won the FlashAttention-3 sweep on an H100 or came within 7%
// of the winner at every point (docs/perf.md, 2026-11-24): d64 one warpgroup a
// block (64-row tiles, causal up to 1k keys); d128 a persistent walk with
// ping-pong and the overlap up to 2k keys (causal up to 512 drawing its
// tiles), then FlashAttention-3's 128×176 tiles; d256 up to 1k keys a walk
// with ping-pong, the overlap and the output stored from registers, then the
// overlap with 80 keys a tile, in clusters of two from 8k keys non-causal.
// On sm_8x, head dims over 128 take 32-key tiles, which fit the shared
// memory of an A100. Other shapes, and sm_80, get GPUConfig.
func (p *attnProblem) GPUConfigFor(arch string) Config {
	s := p.s
	if amd(arch) { // 64 KiB of LDS: one stage of K and V; at d256, 32-row Q tiles over two waves
		if max(s.Dqk, s.Dv) > 128 {
			return AttnConfig{M: 32, N: 32, Stages: 1, Threads: 128}
		}
		return AttnConfig{M: 64, N: 64, Stages: 1, Threads: 256}
	}
	if ampere(arch) && max(s.Dqk, s.Dv) > 128 {
		return AttnConfig{M: 128, N: 32, Stages: 2, Threads: 256} // 128 KiB of shared memory: an A100 opts in to 163
	}
	if arch != "sm_90a" || s.Dqk != s.Dv {
		return p.GPUConfig()
	}
	var c AttnConfig
	switch s.Dqk {
	case 64:
		c = AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128}
		if s.Causal && s.Skv <= 1024 {
			c.M, c.N = 64, 64
		}
	case 128:
		c = AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true}
		if s.Skv <= 2048 {
			c.N, c.Persistent = 128, true
		}
		if s.Causal && s.Skv <= 512 { // tiles drawn (headsThenLongest): 1.03-1.05× the pairs at 512 back to back, the sweep's pick
			c.Draw = true
		}
	case 256:
		c = AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true}
		if s.Skv <= 1024 { // a walk, the output stored from registers: within 2% of the best at 512-1k
			c = AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true, Direct: true}
		}
		if !s.Causal && s.Skv >= 8192 { // K/V multicast to pairs of query tiles: 1.005-1.05× there over two runs (docs/perf.md)
			c.Cluster = 2
		}
	default:
		return p.GPUConfig()
	}
	if _, err := FlashAttention(s, c).Build(); err != nil {
		return p.GPUConfig()
	}
	return c
}

// attnConfigOf is c as an AttnConfig whose sizes are positive, for p's
// Program.
func attnConfigOf(p Problem, c Config) (AttnConfig, error) {
	cfg, ok := c.(AttnConfig)
	if !ok {
		return cfg, fmt.Errorf("%s: config is %T, want kernels.AttnConfig", p.Kernel(), c)
	}
	if cfg.M < 1 || cfg.N < 1 || cfg.Stages < 1 || cfg.Threads < 1 {
		return cfg, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	if cfg.SharedP || cfg.WholeTiles || cfg.BulkDQ {
		return cfg, fmt.Errorf("%s: the backward's schedules (sharedp, wholetiles, bulkdq) are not the forward's; config %s", p.Kernel(), ConfigFields(cfg))
	}
	return cfg, nil
}

func (p *attnProblem) Program(c Config) (*tl.Func, error) {
	cfg, err := attnConfigOf(p, c)
	if err != nil {
		return nil, err
	}
	return FlashAttention(p.s, cfg), nil
}

// Inputs are AttentionInputs, then the modifiers' tensors (AttnMods.Inputs).
func (p *attnProblem) Inputs(seed uint64) []*tensor.Tensor {
	args := AttentionInputs(p.s, seed)
	if m := p.s.Mods; m != nil && m.Inputs != nil {
		args = append(args, m.Inputs()...)
	}
	return args
}

// rowsToCheck is every query row when the problem is small, else a
// seeded sample costing about sampleMACs.
func (p *attnProblem) rowsToCheck(seed uint64) ([]Row, string) {
	s := p.s
	nRows := s.B * s.H * s.Sq
	if nRows*s.Dv <= fullCheckElems && float64(nRows)*p.rowMACs() <= fullCheckMACs {
		return AllRows(s), "all"
	}
	n := int(min(max(sampleMACs/p.rowMACs(), 16), 1024))
	if n >= nRows {
		return AllRows(s), "all"
	}
	return SampleRows(s, n, seed), fmt.Sprintf("sampled %d rows", n)
}

// rowMACs is the reference's cost of one query row (all keys; causal rows
// see fewer, so this over-estimates).
func (p *attnProblem) rowMACs() float64 { return float64(p.s.Skv) * float64(p.s.Dqk+p.s.Dv) }

func (p *attnProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	rows, checked := p.rowsToCheck(seed)
	o := Measure{Name: "o", Tol: Tolerance(s.DType)}
	lse := Measure{Name: "lse", Tol: LSETolerance}
	// As CheckAttentionRows, with the references computed on every core.
	ra := s.refAttn()
	wantO, wantL := make([][]float64, len(rows)), make([]float64, len(rows))
	parallelFor(len(rows), func(i int) {
		r := rows[i]
		wantO[i], wantL[i] = ra.AttentionRow(args[0], args[1], args[2], r.B, r.H, r.I)
	})
	for i, r := range rows {
		for d, w := range wantO[i] {
			o.Diff.Add(args[3].At(r.B, r.H, r.I, d), w)
		}
		lse.Diff.Add(args[4].At(r.B, r.H, r.I), wantL[i])
	}
	return Report{Measures: []Measure{o, lse}, Checked: checked}
}

// FLOPs counts the two matrix multiplies, 2·B·H·Sq·Skv·(Dqk+Dv), halved
// when causal. As FlashAttention's benchmarks, the causal count is halved
// even when Sq ≠ Skv.
func (p *attnProblem) FLOPs() float64 {
	s := p.s
	if s.Mods != nil && s.Mods.RefMask != nil {
		p.pairs.Do(func() { p.visible = s.visiblePairs() })
		return 2 * float64(s.H) * p.visible * float64(s.Dqk+s.Dv)
	}
	f := 2 * float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Skv) * float64(s.Dqk+s.Dv)
	if s.Causal {
		f /= 2
	}
	return f
}

// ampere reports whether arch is an sm_8x GPU, whose blocks have at most
// 163 KiB of shared memory (99 KiB on sm_86 and sm_89), not Hopper's 227.
func ampere(arch string) bool { return strings.HasPrefix(arch, "sm_8") }

// amd: arch is an AMD GPU (gfx942), whose blocks have 64 KiB of LDS.
func amd(arch string) bool { return strings.HasPrefix(arch, "gfx") }
