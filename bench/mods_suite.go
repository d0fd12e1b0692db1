package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tilego/tilego/kernels"
)

// ModsPoints are the fa-mods suite's points (issue 54's): FlashAttention's
// forward with score and mask modifiers at 16k tokens, bf16, BSHD, 16 heads
// of 128, as flag values; scripts/mods_peers.py times FlexAttention on the
// same list. The last is the plain causal kernel at 1k tokens, which a 1k
// window at 16k should take about 16 times as long as.
var ModsPoints = []map[string]string{
	{"batch": "1", "seq-q": "16384", "causal": "true", "window": "1023,0"},
	{"batch": "1", "seq-q": "16384", "causal": "true", "doc-lens": docLens(16384, 8)},
	{"batch": "4", "seq-q": "4096", "causal": "true", "softcap": "30"},
	{"batch": "4", "seq-q": "4096", "causal": "true", "alibi": "true"},
	{"batch": "4", "seq-q": "4096", "prefix": "1024"},
	{"batch": "16", "seq-q": "1024", "causal": "true"},
}

// docLens cuts n tokens into k documents of uneven lengths (the i-th a
// share proportional to i+1), summing to n.
func docLens(n, k int) string {
	parts, total := make([]string, k), k*(k+1)/2
	left := n
	for i := range k {
		l := n * (i + 1) / total
		if i == k-1 {
			l = left
		}
		left -= l
		parts[i] = strconv.Itoa(l)
	}
	return strings.Join(parts, ",")
}

// faMods: ModsPoints (--quick: the window and the plain kernel), each over
// the configs the sweep tries at its length.
func faMods(o SuiteOptions) ([]Point, error) {
	return modsPoints(o, "fa-mods", "flash-attention", func(p kernels.Problem, vals map[string]string) ([]kernels.Config, error) {
		sq, _ := strconv.Atoi(vals["seq-q"])
		return AttnConfigsFor(128, vals["causal"] == "true", sq), nil
	})
}

// faModsBwd: the backward at ModsPoints, in its GPU config.
func faModsBwd(o SuiteOptions) ([]Point, error) {
	return modsPoints(o, "fa-mods-bwd", "flash-attention-bwd", func(p kernels.Problem, _ map[string]string) ([]kernels.Config, error) {
		return []kernels.Config{p.GPUConfig()}, nil
	})
}

func modsPoints(o SuiteOptions, suite, kernel string, configs func(kernels.Problem, map[string]string) ([]kernels.Config, error)) ([]Point, error) {
	pts := ModsPoints
	if o.Quick {
		pts = []map[string]string{ModsPoints[0], ModsPoints[len(ModsPoints)-1]}
	}
	e, err := kernels.Lookup(kernel)
	if err != nil {
		return nil, err
	}
	var ps []Point
	for _, v := range pts {
		vals := map[string]string{"heads": "16", "dim": "128", "layout": "bshd", "dtype": "bf16"}
		for k, x := range v {
			vals[k] = x
		}
		p, err := e.Problem(vals)
		if err != nil {
			return nil, fmt.Errorf("%s %v: %w", suite, v, err)
		}
		cs, err := configs(p, vals)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Point{Suite: suite, Problem: p, Configs: cs})
	}
	return ps, nil
}
