package kernels

import (
	"fmt"

	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// FlashAttention's split paths in the registry (flash-attention --splits):
// 0 lets TailSplits' cost model choose for --sms SMs (declining where the
// partials and the combine would not pay), N ≥ 2 cuts the KV range of the
// blocks of the last wave (of every block, for a grid of one wave) in N.
// Either runs as two programs, the split kernel and then the combine, as
// TailSplitSteps gives them.

// AttnSplitM is the query rows of a tile on the registry's split paths:
// the partials of a tail split are shaped by the tile (one slot per tile
// of the last wave), so a split problem fixes it, and TailSplits'
// constants are for 128-row blocks.
const AttnSplitM = 128

// attnSplitProblem is FlashAttention at s as a Chain: TailSplitSteps with
// splits pieces on sms SMs for m-row tiles, over TailSplitInputs' tensors.
type attnSplitProblem struct {
	*attnProblem
	m, sms, splits int
}

// AttnSplitProblem is FlashAttention at s run as TailSplitSteps for sms
// SMs and splits pieces (1: the single program, taking the first five of
// the same list of tensors), tiles of m query rows. Its configs must have
// m rows where the tail split applies (TailSplitFits).
func AttnSplitProblem(s AttnShape, m, sms, splits int) Chain {
	return &attnSplitProblem{attnProblem: &attnProblem{s: s}, m: m, sms: sms, splits: max(splits, 1)}
}

// Splits is the number of KV pieces (1: the single program).
func (p *attnSplitProblem) Splits() int { return p.splits }

// SplitNote says which split path runs.
func (p *attnSplitProblem) SplitNote() string {
	if p.splits == 1 {
		return p.note
	}
	a := tailOf(p.s, AttnConfig{M: p.m}, p.sms)
	if a.full == 0 {
		return fmt.Sprintf("every block's keys cut in %d (a grid of %d blocks, within one wave of %d SMs), then the combine", p.splits, a.tiles, p.sms)
	}
	return fmt.Sprintf("the keys of the last wave's %d of %d blocks cut in %d (on %d SMs), then the combine", a.tail, a.tiles, p.splits, p.sms)
}

// DefaultConfig is the interpreter's small config with the problem's rows.
func (p *attnSplitProblem) DefaultConfig() Config {
	c := p.attnProblem.DefaultConfig().(AttnConfig)
	c.M = p.m
	return c
}

// GPUConfig and GPUConfigFor are the single program's, with the problem's
// rows, as a grid: the split kernels have grids of their own (Persistent,
// Prefetch, Direct and Draw are the single program's), and no cluster
// (Steps).
func (p *attnSplitProblem) GPUConfig() Config {
	c := p.attnProblem.GPUConfig().(AttnConfig)
	c.M = p.m
	return c
}

func (p *attnSplitProblem) GPUConfigFor(arch string) Config {
	if amd(arch) { // the split's row count in 64 KiB of LDS: 32 keys a tile, one stage
		return AttnConfig{M: p.m, N: 32, Stages: 1, Threads: 256}
	}
	c := p.attnProblem.GPUConfigFor(arch).(AttnConfig)
	if c.M != p.m {
		return p.GPUConfig()
	}
	c.Persistent, c.Prefetch, c.Direct, c.Draw, c.Cluster = false, false, false, false, 0
	return c
}

func (p *attnSplitProblem) Program(c Config) (*tl.Func, error) {
	if p.splits > 1 {
		return nil, fmt.Errorf("%s: %d splits run as two programs (the split kernel, then the combine), "+
			"and tune takes one: use --splits 1, emit --step 1 or 2, or kernels.Chain's Steps from Go (tilego run runs both)", p.Kernel(), p.splits)
	}
	return p.attnProblem.Program(c)
}

func (p *attnSplitProblem) Steps(c Config) ([]Step, error) {
	cfg, ok := c.(AttnConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.AttnConfig", p.Kernel(), c)
	}
	if p.splits > 1 && TailSplitFits(p.s, cfg, p.sms) && cfg.M != p.m {
		return nil, fmt.Errorf("%s: the tail split's partials are shaped for %d-row tiles; config m=%d", p.Kernel(), p.m, cfg.M)
	}
	if p.splits > 1 && cfg.Cluster > 1 { // never run on a GPU: refused rather than risked
		return nil, fmt.Errorf("%s: the split kernels run without clusters; config cluster=%d", p.Kernel(), cfg.Cluster)
	}
	return TailSplitSteps(p.s, cfg, p.sms, p.splits)
}

func (p *attnSplitProblem) Inputs(seed uint64) []*tensor.Tensor {
	return TailSplitInputs(p.s, AttnConfig{M: p.m}, p.sms, p.splits, seed)
}

var _ Chain = (*attnSplitProblem)(nil)

// AttnShapeOf is the shape of a flash-attention problem from the registry
// (its single program or a split path); ok false for any other problem.
func AttnShapeOf(p Problem) (s AttnShape, ok bool) {
	switch q := p.(type) {
	case *attnProblem:
		return q.s, true
	case *attnSplitProblem:
		return q.s, true
	}
	return AttnShape{}, false
}

// attnSplits resolves --splits for s on sms SMs: the problem to run, the
// single program where the split count comes to 1 (with a note saying why,
// for --splits 0).
func attnSplits(s AttnShape, splits, sms int) Problem {
	if splits == 1 {
		return &attnProblem{s: s}
	}
	if splits == 0 {
		n := FlashAttentionSplits(s, AttnConfig{M: AttnSplitM}, sms)
		if n == 1 {
			return &attnProblem{s: s, note: fmt.Sprintf("declined: on %d SMs a split of the last wave's keys would not save %.0f%% (kernels.TailSplits)", sms, 100*MinSplitGain)}
		}
		splits = n
	}
	return AttnSplitProblem(s, AttnSplitM, sms, splits)
}
