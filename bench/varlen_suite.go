package bench

import (
	"fmt"

	"github.com/tilego/tilego/kernels"
)

// VarlenLens are the fa-varlen suite's packed batches, 16384 tokens each:
// four equal sequences (the padded batch's), four of unequal lengths, and
// six from 1 to 6269 tokens.
var VarlenLens = []string{"4096,4096,4096,4096", "1024,3072,5120,7168", "1,17,1000,4097,5000,6269"}

// faVarlen: varlen FlashAttention (16 heads of 128, bf16) at VarlenLens,
// causal and not, beside the padded batch of 4×4096 it is held to
// (--quick: the unequal lengths and the padded batch, not causal). Each
// point tries the configs the sweep tries at 4096 tokens that varlen
// takes.
func faVarlen(o SuiteOptions) ([]Point, error) {
	return varlenPoints(o, "fa-varlen", "flash-attention", "flash-attention-varlen", func(p kernels.Problem, causal, varlen bool) []kernels.Config {
		cs := AttnConfigsFor(128, causal, 4096)
		if !varlen {
			return cs
		}
		var vcs []kernels.Config
		for _, c := range cs {
			if a := c.(kernels.AttnConfig); kernels.VarlenConfig(a) == a {
				vcs = append(vcs, c)
			}
		}
		return vcs
	})
}

// faVarlenBwd: the varlen backward at faVarlen's points, beside the padded
// backward, each in its GPU config.
func faVarlenBwd(o SuiteOptions) ([]Point, error) {
	return varlenPoints(o, "fa-varlen-bwd", "flash-attention-bwd", "flash-attention-varlen-bwd", func(p kernels.Problem, _, _ bool) []kernels.Config {
		return []kernels.Config{p.GPUConfig()}
	})
}

// varlenPoints are a varlen suite's points: for causal and not, the padded
// 4×4096 batch of kernel pad, then kernel varlen at VarlenLens, each over
// configs(problem, causal, varlen).
func varlenPoints(o SuiteOptions, suite, pad, varlen string, configs func(p kernels.Problem, causal, varlen bool) []kernels.Config) ([]Point, error) {
	var ps []Point
	for _, causal := range []bool{false, true} {
		if o.Quick && causal {
			break
		}
		p, err := kernels.NewProblem(pad, map[string]string{"batch": "4", "seq-q": "4096", "heads": "16", "dim": "128",
			"layout": "bshd", "dtype": "bf16", "causal": fmt.Sprint(causal)})
		if err != nil {
			return nil, err
		}
		ps = append(ps, Point{Suite: suite, Problem: p, Configs: configs(p, causal, false)})
		for i, lens := range VarlenLens {
			if o.Quick && i != 1 {
				continue
			}
			p, err := kernels.NewProblem(varlen, map[string]string{"lens": lens, "heads": "16", "dim": "128", "causal": fmt.Sprint(causal)})
			if err != nil {
				return nil, err
			}
			ps = append(ps, Point{Suite: suite, Problem: p, Configs: configs(p, causal, true)})
		}
	}
	return ps, nil
}
