package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ---- mla-decode ----

// Chain is a Problem whose work is several programs launched in order
// over the one list of tensors Inputs makes: split-KV MLA decoding runs
// the split kernel, then the combine. The CLI runs one program per
// problem (Program); a chained problem whose work is more than one
// program says so from Program, and runs through Steps.
type Chain interface {
	Problem
	Steps(c Config) ([]Step, error)
}

// Step is one program of a Chain and the indices, in Inputs' list, of the
// tensors it takes (in its parameter order).
type Step struct {
	Func *tl.Func
	Args []int
}

// RunSteps builds each step against lim and runs it with run (e.g.
// interp.Run, or a backend's Run) on its tensors of args.
func RunSteps(steps []Step, args []*tensor.Tensor, lim ir.Limits, run func(*ir.Func, []*tensor.Tensor) error) error {
	for _, st := range steps {
		fn, err := st.Func.Build(lim)
		if err != nil {
			return err
		}
		sub := make([]*tensor.Tensor, len(st.Args))
		for i, a := range st.Args {
			sub[i] = args[a]
		}
		if err := run(fn, sub); err != nil {
			return err
		}
	}
	return nil
}

// Traffic is implemented by problems that count the bytes they must move
// at least once, for GB/s: decoding is bound by memory, not by FLOPs.
type Traffic interface {
	Bytes() float64
}

var mlaEntry = &Entry{
	Name: "mla-decode",
	Doc:  "DeepSeek MLA decoding over a paged KV cache: h_q heads share one 576-wide KV head (V is its first 512 columns), s_q causal query tokens per request",
	Flags: []Flag{
		{Name: "batch", Default: "2", Help: "requests, each with its own cache length"},
		{Name: "heads", Default: "16", Help: "query heads h_q (16, 32, 64 or 128 in DeepSeek's models)"},
		{Name: "seq-q", Default: "1", Help: "query tokens per request, causal among themselves: 1 or 2"},
		{Name: "mean-kv", Default: "100", Help: "mean cache length; lengths vary ±50% around it (seeded by batch and mean) and are never multiples of 64"},
		{Name: "dtype", Default: "bf16", Help: "element type of Q, the cache and O: bf16 or f16"},
		{Name: "splits", Default: "1", Arg: "N", Help: "KV splits: 1 runs the single-program kernel; 0 lets the scheduler decide for --sms and N >= 2 cuts every request in N; more than one split is two programs (split kernel, then combine): run runs and times them together, emit prints one (--step), tune takes one program"},
		{Name: "sms", Default: "132", Help: "SM count the scheduler balances over (--splits 0)"},
		{Name: "scale", Default: "0", Arg: "X", Help: "softmax scale; 0 means 1/sqrt(576)"},
	},
	parse: parseMLA,
}

func parseMLA(v values) (Problem, error) {
	var s MLAShape
	var batch, mean, sms int
	var err error
	get := func(dst *int, name string) {
		if err == nil {
			*dst, err = v.int(name, 0)
		}
	}
	get(&batch, "batch")
	get(&s.Hq, "heads")
	get(&s.Sq, "seq-q")
	get(&mean, "mean-kv")
	get(&sms, "sms")
	if err != nil {
		return nil, err
	}
	if s.Sq > 2 {
		return nil, fmt.Errorf("--seq-q %d: MLA decoding takes 1 or 2 query tokens", s.Sq)
	}
	splits, err := v.splits("scheduler")
	if err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	if s.Scale, err = v.scale(); err != nil {
		return nil, err
	}
	if _, err := elems("the KV cache", batch, mean*3/2+MLAPage, MLADqk); err != nil {
		return nil, err
	}
	if _, err := elems("Q", batch, s.Sq, s.Hq, MLADqk); err != nil {
		return nil, err
	}
	p := &mlaProblem{s: s.Full(), lens: MLALengths(batch, mean), mean: mean, sms: sms}
	switch splits {
	case 0: // the scheduler's parts, where they beat one program
		if md := ScheduleMLA(p.lens, s.Sq, s.Hq, sms); MLASplitPays(md, p.lens, s.Sq, s.Hq, sms) {
			p.md = &md
		} else {
			p.note = fmt.Sprintf("declined: on %d SMs the scheduler's parts would not beat one program (kernels.MLASplitPays)", sms)
		}
	case 1:
	default:
		md := UniformMLASplits(p.lens, MLAPage, splits)
		p.md = &md
	}
	if p.md != nil && p.md.Splits == 1 { // the scheduler cut nothing: one program does it
		p.md, p.note = nil, "the scheduler cut no request: one program"
	}
	return p, nil
}

// MLALengths draws batch cache lengths uniformly within ±50% of mean,
// seeded by batch and mean; a multiple of 64 moves up by one, so every
// request ends inside a cache block.
func MLALengths(batch, mean int) []int32 {
	r := rand.New(rand.NewPCG(uint64(batch), uint64(mean)))
	lens := make([]int32, batch)
	for i := range lens {
		l := max(1, int(math.Round(float64(mean)*(0.5+r.Float64()))))
		if l%MLAPage == 0 {
			l++
		}
		lens[i] = int32(l)
	}
	return lens
}

type mlaProblem struct {
	s         MLAShape
	lens      []int32
	mean, sms int
	md        *MLAMetadata // nil: the single-program kernel
	note      string       // why --splits 0 runs the single program
}

// SplitNote says why the scheduler (--splits 0) left the single program
// running; "" otherwise.
func (p *mlaProblem) SplitNote() string { return p.note }

func (p *mlaProblem) Kernel() string { return mlaEntry.Name }

// Splits is the grid's split dim: 1 for the single-program kernel.
func (p *mlaProblem) Splits() int {
	if p.md == nil {
		return 1
	}
	return p.md.Splits
}

func (p *mlaProblem) Shape() Fields {
	lo, hi, sum := p.lens[0], p.lens[0], 0
	for _, l := range p.lens {
		lo, hi, sum = min(lo, l), max(hi, l), sum+int(l)
	}
	return Fields{
		{"batch", len(p.lens)}, {"heads", p.s.Hq}, {"seq_q", p.s.Sq}, {"mean_kv", p.mean},
		{"kv_min", lo}, {"kv_max", hi}, {"kv_sum", sum}, {"splits", p.Splits()}, {"sms", p.sms},
		{"dtype", p.s.DType.String()}, {"scale", p.s.SoftmaxScale()},
	}
}

// mlaM is the first M of ms that the shape allows.
func (p *mlaProblem) mlaM(ms ...int) int {
	for _, m := range ms {
		if p.s.Check(MLAConfig{M: m, Stages: 1, Threads: 128}) == nil {
			return m
		}
	}
	return 1
}

// DefaultConfig: all of a request's query rows in one block, up to 64.
func (p *mlaProblem) DefaultConfig() Config {
	return MLAConfig{M: p.mlaM(64, 32, 16, 8, 4, 2, 1), Stages: 1, Threads: 128}
}

// GPUConfig is GPUConfigFor Hopper's TMA path.
func (p *mlaProblem) GPUConfig() Config { return p.GPUConfigFor("sm_90a") }

// GPUConfigFor: on sm_90a, where 64 rows are a piece of one token's heads
// (h_q >= 64) or one token's 32 heads padded to 64 rows, FlashMLA's block:
// warpgroup 0 scoring each page (Roles), both multiplying by their half of
// V (wgmma), two stages of pages fetched by TMA from a producer
// warpgroup; with hand-offs (Handoff) from 2k mean tokens at h_q 128, and
// in the single program at any h_q. Measured on an H100 (docs/perf.md):
// roles 1.11-1.16× the block without them (h_q 128, single program);
// hand-offs 1.02-1.16× roles at h_q 128 from 2k tokens, 0.97-0.98× at 1k,
// and with fewer heads 1.02-1.14× in the single program, 0.98-0.99× on the
// split path. At h_q 16, 16-row blocks with two stages were fastest. The
// two stages fit only the TMA path. Elsewhere, or with fewer heads, 64
// rows over 8 warps where the shape and shared memory allow (the split
// kernel's f32 staging tile needs fewer rows when a block holds several
// tokens), else 32 or 16 over 4 warps; one stage each, or on sm_90a with
// one query token two, which were faster at every point measured.
//
// On sm_90a's split path with no more requests than parts, the combine
// starts early (Early): nearly every request is cut there and merged by
// the combine, whose work then runs beside the split kernel's last parts.
// H200, 2026-11-25, alternating pairs against the same program without
// it: 1.004-1.008× at b64 h_q 128 kv8k (64 requests over 66 parts),
// 1.011-1.017× at kv4k, 1.010-1.020× at b64 h_q 64 kv8k (over 132); with
// about two requests a part, 0.996-0.997× at b128 h_q 128 kv8k and
// 0.998-1.001× at b64 s_q 2 kv4k, where most requests are whole and the
// split kernel writes them. On an
// H100 the same b64 points: 1.006-1.020×; on the H200 b128 h_q 32 and 64
// and b64 h_q 32 1.003-1.016×.
//
// Where requests outnumber parts and the warpgroups hand off, there is no
// combine (Merge): each cut request's first piece merges the others in
// registers. H200, 2026-11-25, alternating pairs against the combine:
// b128 h_q 128 kv4k 1.015-1.017×, kv8k 1.005-1.006×, kv16k 1.003-1.004×,
// s_q 2 kv4k at b64 1.004-1.010× and b128 1.005-1.009× (15 of 15 rounds
// faster); at b64 kv4k-8k, where Early runs, 0.97-0.99× (docs/perf.md).
// Its blocks wait for each other, so its grid (one
// block an SM and M-block of a part) must fit the GPU at once: --sms no
// more than the GPU's SMs.
func (p *mlaProblem) GPUConfigFor(arch string) Config {
	c := p.gpuConfigFor(arch)
	m, ok := c.(MLAConfig)
	if !ok || arch != "sm_90a" || !m.WS || p.md == nil {
		return c
	}
	if len(p.lens) <= MLASMParts(p.s.Sq, p.s.Hq, p.sms) {
		m.Early = true
		return m
	}
	if mm := m; m.Handoff {
		mm.Merge = true
		if p.s.Check(mm) == nil && p.mergeFits(mm) == nil {
			return mm
		}
	}
	return c
}

// mergeFits reports why c's split kernel cannot run all its blocks at
// once, as Merge needs (nil: it can): one block an SM and M-block of a
// part, over --sms SMs.
func (p *mlaProblem) mergeFits(c MLAConfig) error {
	if blocks := len(p.md.Parts) * p.s.mBlocks(c); c.Merge && blocks > p.sms {
		return fmt.Errorf("%s: Merge runs every block of the split kernel at once, and %d parts of %d rows make %d blocks, more than --sms %d: use the scheduler (--splits 0) or fewer splits", p.Kernel(), len(p.md.Parts), c.M, blocks, p.sms)
	}
	return nil
}

func (p *mlaProblem) gpuConfigFor(arch string) Config {
	builds := func(c MLAConfig) bool {
		_, err := mlaDecode(p.s, c, p.md != nil).Build()
		return p.s.Check(c) == nil && err == nil
	}
	if amd(arch) { // 64 KiB of LDS: 16 query rows, a cache block in halves, two waves
		if c := (MLAConfig{M: 16, Stages: 1, Threads: 128, N: 32}); builds(c) {
			return c
		}
		return p.DefaultConfig()
	}
	hopper := arch == "sm_90a"
	if c := (MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true}); hopper && (p.s.Hq%64 == 0 || p.s.Sq == 1 && p.s.Hq == 32) && builds(c) {
		if h := c; p.mean >= 2048 && (p.s.Hq%128 == 0 || p.md == nil) {
			h.Handoff = true
			if builds(h) {
				return h
			}
		}
		return c
	}
	stages := []int{1}
	if hopper && p.s.Sq == 1 { // as measured; blocks of two tokens with two stages can outgrow shared memory after pipelining
		stages = []int{2, 1}
	}
	for _, m := range []int{64, 32, 16} {
		for _, st := range stages {
			c := MLAConfig{M: m, Stages: st, Threads: 128}
			if m == 64 {
				c.Threads = 256
			}
			if p.s.padded(c) { // measured on sm_90a only, above
				continue
			}
			if builds(c) {
				return c
			}
		}
	}
	return p.DefaultConfig()
}

func (p *mlaProblem) config(c Config) (MLAConfig, error) {
	cfg, ok := c.(MLAConfig)
	if !ok {
		return cfg, fmt.Errorf("%s: config is %T, want kernels.MLAConfig", p.Kernel(), c)
	}
	return cfg, p.s.Check(cfg)
}

func (p *mlaProblem) Program(c Config) (*tl.Func, error) {
	cfg, err := p.config(c)
	if err != nil {
		return nil, err
	}
	if p.md != nil {
		return nil, fmt.Errorf("%s: %d splits run as two programs (the split kernel, then the combine), "+
			"and tune takes one: use --splits 1, emit --step 1 or 2, or kernels.Chain's Steps from Go (tilego run runs both)", p.Kernel(), p.md.Splits)
	}
	return MLADecode(p.s, cfg), nil
}

// Steps is the single-program kernel over Inputs[0:6], or MLASplitSteps.
func (p *mlaProblem) Steps(c Config) ([]Step, error) {
	cfg, err := p.config(c)
	if err != nil {
		return nil, err
	}
	if p.md == nil {
		return []Step{{MLADecode(p.s, cfg), []int{0, 1, 2, 3, 4, 5}}}, nil
	}
	if err := p.mergeFits(cfg); err != nil {
		return nil, err
	}
	return MLASplitSteps(p.s, cfg), nil
}

// MLASplitSteps is the split path over MLAInputs and then MLAPartials: the
// split kernel over Q, KV, table, lengths, parts, chunks, O_partial,
// LSE_partial, num_splits, O and LSE (the requests it leaves whole), then
// the combine from num_splits and the partials into the other requests' O
// and LSE; under Merge the split kernel alone, which also takes the
// counters; under Early both take them (the pieces' count).
func MLASplitSteps(s MLAShape, c MLAConfig) []Step {
	if c.Merge {
		return []Step{{MLADecodeSplit(s, c), []int{0, 1, 2, 3, 6, 7, 9, 10, 8, 11, 4, 5}}}
	}
	if c.Early {
		cc := DefaultCombineConfig(s)
		cc.Early = s.mBlocks(c) // the split kernel's M-blocks: pieces a split
		return []Step{
			{MLADecodeSplit(s, c), []int{0, 1, 2, 3, 6, 7, 9, 10, 8, 11, 4, 5}},
			{MLACombine(s, cc), []int{8, 9, 10, 11, 4, 5}},
		}
	}
	return []Step{
		{MLADecodeSplit(s, c), []int{0, 1, 2, 3, 6, 7, 9, 10, 8, 4, 5}},
		{MLACombine(s, DefaultCombineConfig(s)), []int{8, 9, 10, 4, 5}},
	}
}

// Inputs: see MLAInputs; with splits, also the bounds tensor and the
// NaN-poisoned partial buffers.
func (p *mlaProblem) Inputs(seed uint64) []*tensor.Tensor {
	args := MLAInputs(p.s, p.lens, seed)
	if p.md != nil {
		args = append(args, MLAPartials(p.s, *p.md)...)
	}
	return args
}

// MLAInputs makes the single-program kernel's arguments for a batch of
// cache lengths: random Q, a pool of cache blocks with the request's blocks
// in a shuffled order (a seeded permutation of the pool) and two spare
// blocks, the block table (its unused entries point at a spare block), the
// lengths, and NaN-poisoned O and LSE. The spare blocks and the slots past
// each request's length hold NaN, so reading them shows.
func MLAInputs(s MLAShape, lens []int32, seed uint64) []*tensor.Tensor {
	s = s.Full()
	blocks := mlaBlocks(lens, s.Page)
	total, width := 0, 1
	for _, n := range blocks {
		total, width = total+n, max(width, n)
	}
	const spare = 2
	pool := tensor.New(s.DType, total+spare, s.Page, s.Dqk).Rand(seed+1, 1)
	ids := rand.New(rand.NewPCG(seed, 17)).Perm(total + spare)
	table := tensor.New(ir.I32, len(lens), width)
	ln := tensor.New(ir.I32, len(lens))
	nan := math.NaN()
	poison := func(blk, from int) {
		for r := from; r < s.Page; r++ {
			for d := range s.Dqk {
				pool.Set(nan, blk, r, d)
			}
		}
	}
	next := 0
	for b, n := range blocks {
		ln.Set(float64(lens[b]), b)
		for j := range width {
			id := ids[total] // a spare block
			if j < n {
				id = ids[next]
				next++
			}
			table.Set(float64(id), b, j)
		}
		if n > 0 {
			poison(int(table.At(b, n-1)), int(lens[b])-(n-1)*s.Page)
		}
	}
	for _, id := range ids[total:] {
		poison(id, 0)
	}
	return []*tensor.Tensor{
		tensor.New(s.DType, len(lens), s.Sq, s.Hq, s.Dqk).Rand(seed, 1),
		pool, table, ln,
		tensor.New(s.DType, len(lens), s.Sq, s.Hq, s.Dv).Fill(nan),
		tensor.New(ir.F32, len(lens), s.Sq, s.Hq).Fill(nan),
	}
}

// MLAPartials makes the split path's extra arguments: a schedule's
// tensors (parts, chunks, num_splits), NaN-poisoned O_partial and
// LSE_partial, and the counters of Merge and Early (zeros, a column per
// query row and at least two: enough for an M-block's each at any M, and
// for Early's two).
func MLAPartials(s MLAShape, md MLAMetadata) []*tensor.Tensor {
	s = s.Full()
	b := len(md.NumSplits)
	ps, ch, ns := md.Tensors()
	return []*tensor.Tensor{
		ps, ch, ns,
		tensor.New(s.partialDType(), b, md.Splits, s.Sq, s.Hq, s.Dv).Fill(math.NaN()),
		tensor.New(ir.F32, b, md.Splits, s.Sq, s.Hq).Fill(math.NaN()),
		tensor.New(ir.I32, b, max(2, s.Sq*s.Hq)),
	}
}

// MLARow names one query row: request B, token T, head H.
type MLARow struct{ B, T, H int }

// CheckMLARows compares O (args[4]) and LSE (args[5]) of the given rows
// with the float64 reference, computing the references on every core.
func CheckMLARows(s MLAShape, args []*tensor.Tensor, rows []MLARow, o, lse *ref.Diff) {
	s = s.Full()
	p := ref.MLA{Scale: s.SoftmaxScale(), Dv: s.Dv}
	wantO, wantL := make([][]float64, len(rows)), make([]float64, len(rows))
	parallelFor(len(rows), func(i int) {
		r := rows[i]
		wantO[i], wantL[i] = p.Row(args[0], args[1], args[2], args[3], r.B, r.T, r.H)
	})
	for i, r := range rows {
		for d, w := range wantO[i] {
			o.Add(args[4].At(r.B, r.T, r.H, d), w)
		}
		lse.Add(args[5].At(r.B, r.T, r.H), wantL[i])
	}
}

// rowsToCheck is every query row when the problem is small, else a
// seeded sample costing about sampleMACs.
func (p *mlaProblem) rowsToCheck(seed uint64) ([]MLARow, string) {
	s := p.s
	var all []MLARow
	var macs float64
	for b, l := range p.lens {
		for t := range s.Sq {
			for h := range s.Hq {
				all = append(all, MLARow{b, t, h})
			}
		}
		macs += float64(s.Sq*s.Hq) * float64(l) * float64(s.Dqk+s.Dv)
	}
	if len(all)*s.Dv <= fullCheckElems && macs <= fullCheckMACs {
		return all, "all"
	}
	n := int(min(max(sampleMACs/(macs/float64(len(all))), 16), 1024))
	if n >= len(all) {
		return all, "all"
	}
	r := rand.New(rand.NewPCG(seed, 99))
	rows := make([]MLARow, n)
	for i := range rows {
		rows[i] = all[r.IntN(len(all))]
	}
	return rows, fmt.Sprintf("sampled %d rows", n)
}

func (p *mlaProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	rows, checked := p.rowsToCheck(seed)
	o := Measure{Name: "o", Tol: Tolerance(p.s.DType)}
	lse := Measure{Name: "lse", Tol: LSETolerance}
	CheckMLARows(p.s, args, rows, &o.Diff, &lse.Diff)
	return Report{Measures: []Measure{o, lse}, Checked: checked}
}

// FLOPs is 2·s_q·h_q·(Σ cache lengths)·(576+512): both matrix
// multiplies over every key, as FlashMLA counts (the causal mask among
// the s_q tokens is not subtracted).
func (p *mlaProblem) FLOPs() float64 {
	return 2 * float64(p.s.Sq*p.s.Hq) * float64(p.kvSum()) * float64(p.s.Dqk+p.s.Dv)
}

// Bytes is what decoding must move at least once: Q, every cache row the
// batch reads (576 columns) and O.
func (p *mlaProblem) Bytes() float64 {
	s, eb := p.s, float64(p.s.DType.Bytes())
	rows := float64(len(p.lens) * s.Sq * s.Hq)
	return eb * (rows*float64(s.Dqk) + float64(p.kvSum())*float64(s.Dqk) + rows*float64(s.Dv))
}

func (p *mlaProblem) kvSum() int {
	n := 0
	for _, l := range p.lens {
		n += int(l)
	}
	return n
}
