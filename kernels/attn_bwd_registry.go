package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ---- flash-attention-bwd ----

var attentionBwdEntry = &Entry{
	Name: "flash-attention-bwd",
	Doc: "FlashAttention backward: dQ, dK and dV of O = softmax(scale·Q·Kᵀ)·V for a given dO, from the forward's O and LSE " +
		"(MHA/GQA/MQA, causal); three programs (Delta, the main loop, dQ), run and timed together",
	Flags: append(append(slices.Clip(attnShapeFlags), modFlags...), varlenFlag),
	parse: func(v values) (Problem, error) {
		if vs, err := parseVarlenFlag(v); err != nil || vs != nil {
			if err != nil {
				return nil, err
			}
			return &varlenBwdProblem{s: *vs}, nil
		}
		s, err := parseAttnShape(v)
		if err != nil {
			return nil, err
		}
		if s.Mods, err = parseAttnMods(v, s); err != nil {
			return nil, err
		}
		return &attnBwdProblem{s: s}, nil
	},
}

// attnBwdProblem is FlashAttention's backward at s as a Chain
// (AttnBwdSteps over AttnBwdInputs' tensors).
type attnBwdProblem struct {
	s AttnShape
	// visible counts the (query, key) pairs a mask leaves, once.
	pairs   sync.Once
	visible float64
}

func (p *attnBwdProblem) Kernel() string { return attentionBwdEntry.Name }

func (p *attnBwdProblem) Shape() Fields { return (&attnProblem{s: p.s}).Shape() }

// DefaultConfig: 32×32 tiles (fewer for short sequences, rounded up to
// 16), one stage, 128 threads: small for the interpreter.
func (p *attnBwdProblem) DefaultConfig() Config {
	return AttnConfig{M: min(32, roundUp(p.s.Sq, 16)), N: min(32, roundUp(p.s.Skv, 16)), Stages: 1, Threads: 128}
}

// GPUConfig: 64 query rows a step, the query tiles in two stages; 128
// keys over two warpgroups up to head dim 128 (1.43× the 64 keys over one
// at d128 2k, H200); above, 64 keys over two warpgroups with P and dS
// through shared memory (SharedP), each warpgroup half of dK's and dV's
// columns: 2.4× one warpgroup, whose accumulators spilled, at d256 4k.
// Where causality or a mask hides keys, the tiles that hide none skip the
// mask (WholeTiles): 1.02-1.11× faster at every causal fa-bwd point but
// d256 (even), 1.08-1.35× with the fa-mods-bwd modifiers (H200). A
// producer warpgroup loads the query tiles (WS) except at head dims
// 65-128, whose consumers need more registers than setmaxnreg leaves them
// (232): there it ran 25% slower, at d64 causal 7% faster.
func (p *attnBwdProblem) GPUConfig() Config {
	masked := p.s.Causal || p.s.Mods != nil && p.s.Mods.Mask != nil
	d := max(p.s.Dqk, p.s.Dv)
	if d <= 128 {
		return AttnConfig{M: 64, N: 128, Stages: 2, Threads: 256, WholeTiles: masked, WS: d <= 64}
	}
	return AttnConfig{M: 64, N: 64, Stages: 2, Threads: 256, SharedP: true, WholeTiles: masked, WS: true}
}

// GPUConfigFor is GPUConfig, with one stage on sm_8x at head dims over 128
// (two take 204 KiB of shared memory; an A100 opts in to 163); on AMD's
// 64 KiB of LDS, 64 keys a block and 32 query rows a step (16 and 32
// above head dim 128), one stage.
func (p *attnBwdProblem) GPUConfigFor(arch string) Config {
	if amd(arch) {
		if max(p.s.Dqk, p.s.Dv) > 128 {
			return AttnConfig{M: 16, N: 32, Stages: 1, Threads: 128}
		}
		return AttnConfig{M: 32, N: 64, Stages: 1, Threads: 256}
	}
	c := p.GPUConfig().(AttnConfig)
	if ampere(arch) && max(p.s.Dqk, p.s.Dv) > 128 {
		c.Stages = 1
	}
	return c
}

func (p *attnBwdProblem) Program(Config) (*tl.Func, error) {
	return nil, fmt.Errorf("%s runs as three programs (Delta, the main loop, dQ), and tune takes one: "+
		"use emit --step 1, 2 or 3, or kernels.Chain's Steps from Go (tilego run runs all three)", p.Kernel())
}

func (p *attnBwdProblem) Steps(c Config) ([]Step, error) {
	cfg, ok := c.(AttnConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.AttnConfig", p.Kernel(), c)
	}
	if cfg.M < 1 || cfg.N < 1 || cfg.Threads < 1 {
		return nil, fmt.Errorf("%s: config %s: m, n and threads must be at least 1", p.Kernel(), ConfigFields(cfg))
	}
	if cfg.PingPong || cfg.Overlap || cfg.Prefetch || cfg.Direct || cfg.Persistent || cfg.Draw || cfg.Cluster > 1 {
		return nil, fmt.Errorf("%s: the forward's schedules (pingpong, overlap, prefetch, direct, persistent, draw, cluster) "+
			"are not the backward's; config %s", p.Kernel(), ConfigFields(cfg))
	}
	return AttnBwdSteps(p.s, cfg), nil
}

// Inputs runs the float64 forward for O and LSE: about B·H·Sq·Skv·(Dqk+Dv)
// multiply-adds spread over the cores.
func (p *attnBwdProblem) Inputs(seed uint64) []*tensor.Tensor { return AttnBwdInputs(p.s, seed) }

// Source is the forward at the same shape: its outputs O and LSE are the
// backward's inputs (Derived).
func (p *attnBwdProblem) Source() Problem { return &attnProblem{s: p.s} }

// Finish makes the backward's inputs from the forward's arguments after it
// ran: Inputs' list with the forward's O and LSE in place of the float64
// ones.
func (p *attnBwdProblem) Finish(src []*tensor.Tensor, seed uint64) []*tensor.Tensor {
	return attnBwdArgs(p.s, src, seed)
}

// AttnBwdCheck is flash-attention-bwd's check of AttnBwdInputs' list
// after AttnBwdSteps ran on it (attnBwdProblem.Check).
func AttnBwdCheck(s AttnShape, args []*tensor.Tensor, seed uint64) Report {
	return (&attnBwdProblem{s: s}).Check(args, seed)
}

// Check compares dQ, dK and dV with float64: whole (ref.AttentionGrads)
// when that costs at most fullCheckMACs, else a seeded sample of rows
// (checkSampled).
func (p *attnBwdProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	if 2*float64(s.B*s.H)*float64(s.Sq)*float64(s.Skv)*float64(s.Dqk+s.Dv) > fullCheckMACs {
		return p.checkSampled(args, seed)
	}
	q, k, v, do, dq, dk, dv := AttnBwdTensors(args)
	g := s.refAttn().AttentionGrads(q, k, v, do)
	ms := p.measures()
	for i, x := range []struct {
		t    *tensor.Tensor
		want []float64
	}{{dq, g.DQ}, {dk, g.DK}, {dv, g.DV}} {
		n := 0
		x.t.Each(func(idx []int) {
			ms[i].Diff.Add(x.t.At(idx...), x.want[n])
			n++
		})
	}
	return Report{Measures: ms, Checked: "all"}
}

func (p *attnBwdProblem) measures() []Measure {
	tol := Tolerance(p.s.DType)
	return []Measure{{Name: "dq", Tol: tol}, {Name: "dk", Tol: tol}, {Name: "dv", Tol: tol}}
}

// checkSampled compares a seeded sample of dQ's rows (ref.GradQRow) and of
// dK's and dV's (ref.GradKVRow, from the inputs' LSE and O: the float64
// forward's, as Inputs made them), each sample costing about sampleMACs.
func (p *attnBwdProblem) checkSampled(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	q, k, v, do, dq, dk, dv := AttnBwdTensors(args)
	ra := s.refAttn()
	width := float64(s.Dqk + s.Dv)
	r := rand.New(rand.NewPCG(seed, 77))
	nq := int(min(max(sampleMACs/(2*float64(s.Skv)*width), 16), 1024))
	nk := int(min(max(sampleMACs/(2*float64(s.H/s.HKV*s.Sq)*width), 16), 1024))
	qRows := make([]Row, nq)
	for i := range qRows {
		qRows[i] = Row{r.IntN(s.B), r.IntN(s.H), r.IntN(s.Sq)}
	}
	kRows := make([]Row, nk) // H is the KV head, I the key
	for i := range kRows {
		kRows[i] = Row{r.IntN(s.B), r.IntN(s.HKV), r.IntN(s.Skv)}
	}
	lseT, o := args[bwdLSE], args[bwdO]
	lse := func(b, h, i int) float64 { return lseT.At(b, h, i) }
	delta := func(b, h, i int) float64 {
		doi, oi := ref.Vec(do, b, h, i), ref.Vec(o, b, h, i)
		var d float64
		for x := range s.Dv {
			d += doi[x] * oi[x]
		}
		return d
	}
	wantQ := make([][]float64, nq)
	parallelFor(nq, func(i int) { wantQ[i] = ra.GradQRow(q, k, v, do, qRows[i].B, qRows[i].H, qRows[i].I) })
	wantK, wantV := make([][]float64, nk), make([][]float64, nk)
	parallelFor(nk, func(i int) {
		wantK[i], wantV[i] = ra.GradKVRow(q, k, v, do, lse, delta, kRows[i].B, kRows[i].H, kRows[i].I)
	})
	ms := p.measures()
	for i, row := range qRows {
		for x, w := range wantQ[i] {
			ms[0].Diff.Add(dq.At(row.B, row.H, row.I, x), w)
		}
	}
	for i, row := range kRows {
		for x, w := range wantK[i] {
			ms[1].Diff.Add(dk.At(row.B, row.H, row.I, x), w)
		}
		for x, w := range wantV[i] {
			ms[2].Diff.Add(dv.At(row.B, row.H, row.I, x), w)
		}
	}
	return Report{Measures: ms, Checked: fmt.Sprintf("sampled %d rows of dQ, %d of dK and dV", nq, nk)}
}

// FLOPs counts the five matrix multiplies, Q·Kᵀ again, dP, dV, dK and dQ:
// 2·B·H·Sq·Skv·(3·Dqk + 2·Dv), halved when causal (with a mask, over the
// pairs it leaves, as the forward counts them); 2.5 times the forward's
// when Dqk = Dv, as FlashAttention counts its backward.
func (p *attnBwdProblem) FLOPs() float64 {
	s := p.s
	if s.Mods != nil && s.Mods.RefMask != nil {
		p.pairs.Do(func() { p.visible = s.visiblePairs() })
		return 2 * float64(s.H) * p.visible * float64(3*s.Dqk+2*s.Dv)
	}
	f := 2 * float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Skv) * float64(3*s.Dqk+2*s.Dv)
	if s.Causal {
		f /= 2
	}
	return f
}

var _ Chain = (*attnBwdProblem)(nil)
