package bench

// Issue 6's suites: MLA decoding (split-KV with the scheduler, and the
// single program) and FlashAttention's tail split. Both time a split
// path (impl "tilego-split": a split kernel, then the combine, run as a
// kernels.Chain) and the single program (impl "tilego") on one set of
// inputs, so the two compare within a run.

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// mla is issue 6's decoding benchmark: DeepSeek's shapes (h_q 128, bf16)
// at batch 64 and 128 over mean cache lengths of 1k to 32k (each request's
// length within ±50% of the mean, kernels.MLALengths), s_q 1, and s_q 2 at
// 4k; then the memory-bound cases (h_q·s_q < 128: h_q 16, 32 and 64, as
// DeepSeek's heads split over 8, 4 or 2 GPUs) at 8k. Each shape times the
// scheduler's split path for the device's SMs (--splits 0; the single
// program where the scheduler declines) and the single program
// (--splits 1).
//
// Host cost: the inputs are float64 on the host, about 2 ns a cache
// element to make on 16 cores, and every upload encodes them on one core at
// about 11 ns an element (RunSuite uploads up to 8 of a shape's candidates
// at once). Batch 128 at 32k is 2.4e9 elements: 19 GB of host memory (and
// 4.8 GB more per upload), 4.8 GB of device memory a candidate. It
// is kept, being issue 6's point: the whole suite is 9.9e9 elements, about
// 2.5 minutes with the checks (sampled rows) and compiles. --quick has
// four shapes (~25 s).
func mla(o SuiteOptions) ([]Point, error) {
	type shape struct{ batch, hq, sq, mean int }
	var shapes []shape
	if o.Quick {
		shapes = []shape{{64, 128, 1, 2048}, {128, 128, 1, 8192}, {128, 128, 2, 4096}, {128, 16, 1, 8192}}
	} else {
		for _, b := range []int{64, 128} {
			for _, m := range []int{1024, 2048, 4096, 8192, 16384, 32768} {
				shapes = append(shapes, shape{b, 128, 1, m})
			}
		}
		shapes = append(shapes, shape{64, 128, 2, 4096}, shape{128, 128, 2, 4096})
		for _, b := range []int{64, 128} {
			for _, hq := range []int{16, 32, 64} {
				shapes = append(shapes, shape{b, hq, 1, 8192})
			}
		}
	}
	var ps []Point
	for _, s := range shapes {
		pair, err := mlaPoints("mla", s.batch, s.hq, s.sq, s.mean, o.sms())
		if err != nil {
			return nil, err
		}
		ps = append(ps, pair...)
	}
	return ps, nil
}

// mlaPoints are the split path (the scheduler for sms SMs) and then the
// single program of one decoding shape, on the split path's inputs.
func mlaPoints(suite string, batch, hq, sq, mean, sms int) ([]Point, error) {
	e, err := kernels.Lookup("mla-decode")
	if err != nil {
		return nil, err
	}
	var ps []Point
	for _, splits := range []string{"0", "1"} {
		p, err := e.Problem(map[string]string{
			"batch": fmt.Sprint(batch), "heads": fmt.Sprint(hq), "seq-q": fmt.Sprint(sq),
			"mean-kv": fmt.Sprint(mean), "dtype": "bf16", "splits": splits, "sms": fmt.Sprint(sms),
		})
		if err != nil {
			return nil, err
		}
		ps = append(ps, Point{Suite: suite, Problem: p, Configs: MLAConfigs(hq, sq)})
	}
	ps[0].Impl = "tilego-split"
	ps[0].Configs = withDefault(ps[0].Problem, ps[0].Configs)
	ps[1].SameInputs = true // MLAInputs, then the partials: the single program takes the first six
	return ps, nil
}

// withDefault is cs and, if it is not among them, the split path's
// Hopper default (kernels.GPUConfigFor sm_90a), which turns on Early (the
// combine starts while the split kernel runs) or Merge (no combine) by
// the shape: so the suite times what tilego run launches there.
func withDefault(p kernels.Problem, cs []kernels.Config) []kernels.Config {
	def := kernels.GPUConfigFor(p, "sm_90a")
	if slices.Contains(cs, def) {
		return cs
	}
	return append(slices.Clip(cs), def)
}

// MLAConfigs are the tilings tried for MLA decoding: 64 query rows over 8
// warps (FlashMLA's block), on mma.sync or, with its two warpgroups
// splitting the columns of both products (SplitN), on wgmma (sm_90a), which
// also leaves room for two stages (the next page prefetched, by TMA) and a
// producer warpgroup (WS), and with FlashMLA's warpgroup roles (Roles:
// warpgroup 0 scores each page alone; Handoff: it scores the next while
// warpgroup 1 multiplies this one by V); 64 rows over 16 warps (so the 64×512
// accumulator takes 64 registers a thread on mma.sync, not 128, which
// spilled), and 32 over 4 with one stage or two; with fewer than 32 rows a
// request (h_q 16), 16 over 4 with one stage or two. Clusters of a
// request's two 64-row blocks (MLAConfig.Cluster) are left out: 0.97-1.05×
// the same configs at h_q 128 on an H100. Those the shape does
// not allow (kernels.MLAShape.Check), or whose split kernel does not fit
// shared memory (64 rows of two tokens stage an f32 output tile), are
// left out.
func MLAConfigs(hq, sq int) []kernels.Config {
	s := kernels.MLAShape{Hq: hq, Sq: sq, DType: ir.BF16}
	all := []kernels.MLAConfig{{M: 64, Stages: 1, Threads: 256}, {M: 64, Stages: 1, Threads: 256, SplitN: true}, {M: 64, Stages: 2, Threads: 256, SplitN: true}, {M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true}, {M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true}, {M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true}, {M: 64, Stages: 1, Threads: 512}, {M: 32, Stages: 1, Threads: 128}, {M: 32, Stages: 2, Threads: 128}}
	if hq*sq < 32 {
		all = append(all, kernels.MLAConfig{M: 16, Stages: 1, Threads: 128}, kernels.MLAConfig{M: 16, Stages: 2, Threads: 128})
	}
	var cs []kernels.Config
	for _, c := range all {
		if s.Check(c) != nil {
			continue
		}
		if _, err := kernels.MLADecodeSplit(s, c).Build(); err == nil {
			cs = append(cs, c)
		}
	}
	return cs
}

// faTail: FlashAttention grids with a short last wave over long KV, d128,
// BSHD bf16, causal or not. Grids of one partial wave: batch 1, 8 or 16
// heads, 512 or 1k queries (32 to 128 blocks of 128 rows, fewer than 132
// SMs), 8k or 32k keys. Grids of more than one wave with a tail of a few
// blocks: 34 heads × 4 query tiles (a wave and 4 blocks), and batch 17 × 8
// heads × 4 (four waves and 16). Each shape times the split path at the
// count kernels.FlashAttentionSplits picks for 128-row blocks (1 where the
// cost model declines: then it is the single program again, and the
// result's splits says 1) and the single program.
func faTail(o SuiteOptions) ([]Point, error) {
	type shape struct {
		b, h, sq, skv int
		causal        bool
	}
	var shapes []shape
	if o.Quick {
		shapes = []shape{{1, 8, 512, 16384, false}, {1, 8, 512, 16384, true}, {1, 16, 1024, 16384, false}, {1, 34, 512, 16384, false}}
	} else {
		for _, bhs := range [][3]int{{1, 8, 512}, {1, 16, 512}, {1, 8, 1024}, {1, 16, 1024}, {1, 34, 512}, {17, 8, 512}} {
			for _, skv := range []int{8192, 32768} {
				for _, causal := range []bool{false, true} {
					shapes = append(shapes, shape{bhs[0], bhs[1], bhs[2], skv, causal})
				}
			}
		}
	}
	var ps []Point
	for _, x := range shapes {
		s := kernels.AttnShape{B: x.b, H: x.h, HKV: x.h, Sq: x.sq, Skv: x.skv, Dqk: 128, Dv: 128,
			Causal: x.causal, DType: ir.BF16, BSHD: true}
		pair, err := tailPoints("fa-tail", s, AttnConfigs(s.Dqk, s.Causal), o.sms())
		if err != nil {
			return nil, err
		}
		ps = append(ps, pair...)
	}
	return ps, nil
}

// tailPoints are FlashAttention's split path and then the single program
// at s, on the split path's inputs. The split count is FlashAttentionSplits'
// for the first config (128 rows on the GPU, the tiling its cost model is
// for); the split path tries the configs that get the same count and take
// the same path (every block cut, or only the last wave's) with partials
// of the same shape.
func tailPoints(suite string, s kernels.AttnShape, cfgs []kernels.Config, sms int) ([]Point, error) {
	c0 := cfgs[0].(kernels.AttnConfig)
	n := kernels.FlashAttentionSplits(s, c0, sms)
	tail := n > 1 && kernels.TailSplitFits(s, c0, sms)
	split := Point{Suite: suite, Impl: "tilego-split", Problem: kernels.AttnSplitProblem(s, c0.M, sms, n)}
	for _, c := range cfgs {
		ac := c.(kernels.AttnConfig)
		sameShape := kernels.TailSplitFits(s, ac, sms) == tail && (!tail || ac.M == c0.M)
		if kernels.FlashAttentionSplits(s, ac, sms) == n && (n == 1 || sameShape) {
			split.Configs = append(split.Configs, c)
		}
	}
	// The single program as a one-step chain, so that it takes its five
	// tensors from the split path's list.
	one := Point{Suite: suite, Problem: kernels.AttnSplitProblem(s, c0.M, sms, 1), Configs: cfgs, SameInputs: true}
	return []Point{split, one}, nil
}
