package bench

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Suites lists the benchmark suites by name.
var Suites = map[string]func(SuiteOptions) ([]Point, error){
	"fa-sweep":      faSweep,
	"fa-short":      faShort,
	"extra":         extra,
	"gemm":          gemm,
	"mla":           mla,
	"fa-tail":       faTail,
	"fa-bwd":        faBwd,
	"rows":          rows,
	"fa-mods":       faMods,
	"gemm-llm":      gemmLLM,
	"gemm-fp8":      gemmFP8,
	"fa-mods-bwd":   faModsBwd,
	"fa-varlen":     faVarlen,
	"fa-varlen-bwd": faVarlenBwd,
}

// SuiteFlush is how a suite's launches are kept cold unless the run says
// otherwise: mla and rows on rotated copies of their inputs, the others with an L2 flush
// before every launch, as triton's do_bench times their peers. An MLA cache is
// many times the L2, so a rotated copy is cold; a memset flush would leave the
// L2 full of dirty lines, whose write-back falls in the timed launch: 6-9% of
// a 230 µs launch at b64. scripts/peers.py times the mla suite's peers, and
// the copy bandwidth they are held to, the same way.
func SuiteFlush(suite string) Flush {
	if suite == "mla" || suite == "rows" { // memory-bound: the same reason holds
		return FlushRotate
	}
	return FlushL2
}

// SuiteOptions say what a suite is made for.
type SuiteOptions struct {
	Quick bool // fewer points (a smoke test)
	// SMs is the device's SM count, which split-KV decisions depend on
	// (the MLA scheduler, FlashAttention's tail split); 0 means 132, an
	// H100's or H200's.
	SMs int
}

func (o SuiteOptions) sms() int { return cmp.Or(o.SMs, 132) }

func attention(suite string, vals map[string]string) (Point, error) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		return Point{}, err
	}
	p, err := e.Problem(vals)
	if err != nil {
		return Point{}, err
	}
	d, _ := strconv.Atoi(vals["dim"])
	sq, _ := strconv.Atoi(vals["seq-q"])
	return Point{Suite: suite, Problem: p, Configs: AttnConfigsFor(d, vals["causal"] == "true", sq)}, nil
}

// AttnConfigsFor is what the benchmark tries at head dim d and seqQ query
// tokens: AttnConfigs, and up to 2k tokens shortAttnConfigs too.
func AttnConfigsFor(d int, causal bool, seqQ int) []kernels.Config {
	cs := AttnConfigs(d, causal)
	if seqQ <= 2048 {
		cs = append(cs, shortAttnConfigs(d, causal)...)
	}
	return cs
}

// shortAttnConfigs are tried at short sequences (up to 2k query tokens), where
// a block's prologue and epilogue weigh most: configs that prefetch the next
// wave's Q and first K/V tiles into L2, and persistent grids whose producer
// loads the next tile's Q and K/V while the consumers finish this one
// (compiler/cudagen/persistent_loads.go). At d256 the query tile fits beside the ring only with
// the output stored from registers (AttnConfig.Direct): 2-10% slower than the
// grid at every short point on the H100 while those stores were 4 bytes a
// lane, 1.01-1.10× the grid's best at 512-1k tokens since they are 16
// (compiler/cudagen/emit_store16.go, docs/perf.md). At d64 and d128 the Direct walks
// won 6 of the 12 points from 512 to 2k tokens, by 0.1-3.3%; their third ring
// slot (the staging tile's bytes leave room for it) won only at d64 causal
// 512, and lost 4-9% at d128. 256-row blocks at d64 (128 rows a consumer
// warpgroup), which read each head's K and V from L2 half as often, were
// 0.65-0.89× the best at 512-2k. With a causal mask a persistent block walks
// pairs of tiles of equal total work (kernels.causalPair), so the blocks stay
// balanced; a causal walk that draws its tiles (Draw) won d128 causal 512, so
// the d128 and d256 causal lists have drawn walks too.
func shortAttnConfigs(d int, causal bool) []kernels.Config {
	pf := func(c kernels.AttnConfig) kernels.Config { c.Prefetch = true; return c }
	walk := func(n, threads int, pingPong, overlap bool) kernels.Config {
		return kernels.AttnConfig{M: 128, N: n, Stages: 2, Threads: threads, WS: true, PingPong: pingPong, Overlap: overlap, Persistent: true}
	}
	direct := func(c kernels.Config, stages int) kernels.Config {
		a := c.(kernels.AttnConfig)
		a.Direct, a.Stages = true, stages
		return a
	}
	drawn := func(c kernels.Config) kernels.Config {
		a := c.(kernels.AttnConfig)
		a.Draw = true
		return a
	}
	var cs []kernels.Config
	switch {
	case d <= 64:
		cs = append(cs, pf(kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}),
			walk(128, 256, true, true), walk(128, 256, false, true), walk(128, 128, false, false), walk(128, 128, false, true))
		cs = append(cs, direct(walk(128, 256, true, true), 2), direct(walk(128, 256, true, true), 3))
	case d <= 128:
		cs = append(cs, pf(kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}),
			walk(128, 256, false, false), walk(128, 256, true, false), walk(128, 256, false, true), walk(128, 256, true, true), walk(96, 256, true, true))
		cs = append(cs, direct(walk(128, 256, true, true), 2))
		if causal {
			cs = append(cs, drawn(walk(128, 256, true, true)), drawn(direct(walk(128, 256, true, true), 2)))
		}
	default:
		cs = append(cs, pf(kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}),
			pf(kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true}))
		for _, pp := range []bool{false, true} {
			for _, ov := range []bool{false, true} {
				c := walk(64, 256, pp, ov).(kernels.AttnConfig)
				c.Direct = true
				cs = append(cs, c)
			}
		}
		if causal {
			cs = append(cs, drawn(direct(walk(64, 256, true, true), 2)))
		}
	}
	return cs
}

// faSweep is FlashAttention-3's forward sweep: 512 to 16k tokens per
// sequence with batch × seq = 16k, heads × dim = 2048, BSHD, bf16. Where
// the tail split's cost model cuts the last wave (kernels.
// FlashAttentionSplits for 128-row tiles on o's SMs), the point's split
// path follows it (impl tilego-split, the split count the model picks;
// `tilego run flash-attention --splits 0`).
func faSweep(o SuiteOptions) ([]Point, error) {
	seqs := []int{512, 1024, 2048, 4096, 8192, 16384}
	if o.Quick {
		seqs = []int{512, 4096}
	}
	var ps []Point
	for _, d := range []int{64, 128, 256} {
		for _, causal := range []bool{false, true} {
			for _, s := range seqs {
				pair, err := attentionSplit("fa-sweep", map[string]string{
					"batch": fmt.Sprint(16384 / s), "heads": fmt.Sprint(2048 / d), "seq-q": fmt.Sprint(s),
					"dim": fmt.Sprint(d), "causal": fmt.Sprint(causal), "layout": "bshd", "dtype": "bf16",
				}, o.sms())
				if err != nil {
					return nil, err
				}
				ps = append(ps, pair...)
			}
		}
	}
	return ps, nil
}

// attentionSplit is attention's point and, where the tail split's cost
// model cuts the last wave (kernels.FlashAttentionSplits for 128-row tiles
// on sms SMs), its split path after it: impl tilego-split, at the model's
// count, over the point's configs of AttnSplitM rows that the split
// kernels run (no persistent walk, prefetch or cluster).
func attentionSplit(suite string, vals map[string]string, sms int) ([]Point, error) {
	p, err := attention(suite, vals)
	if err != nil {
		return nil, err
	}
	s, ok := kernels.AttnShapeOf(p.Problem)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a flash-attention problem", suite, p.Problem.Kernel())
	}
	n := kernels.FlashAttentionSplits(s, kernels.AttnConfig{M: kernels.AttnSplitM}, sms)
	if n < 2 {
		return []Point{p}, nil
	}
	sp := Point{Suite: suite, Impl: "tilego-split", Problem: kernels.AttnSplitProblem(s, kernels.AttnSplitM, sms, n)}
	for _, c := range p.Configs {
		ac := c.(kernels.AttnConfig)
		if ac.M == kernels.AttnSplitM && !ac.Persistent && !ac.Prefetch && ac.Cluster <= 1 {
			sp.Configs = append(sp.Configs, c)
		}
	}
	if len(sp.Configs) == 0 {
		return nil, fmt.Errorf("%s %s: no config of %d rows for the split path", suite, p.Problem.Shape(), kernels.AttnSplitM)
	}
	return []Point{p, sp}, nil
}

// faShort is the causal part of the sweep at 512 and 1k tokens, where
// blocks do few K/V tiles and the tiling matters most.
func faShort(SuiteOptions) ([]Point, error) {
	all, err := faSweep(SuiteOptions{})
	if err != nil {
		return nil, err
	}
	var ps []Point
	for _, p := range all {
		var causal bool
		var seq int
		for _, f := range p.Problem.Shape() {
			switch f.Name {
			case "causal":
				causal = f.Value.(bool)
			case "seq_q":
				seq = f.Value.(int)
			}
		}
		if causal && seq <= 1024 {
			p.Suite = "fa-sweep" // the same points, so tables join them with the sweep's peers
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// extra: GQA (32 query heads over 8 KV heads) and one long causal head set,
// each with its tail split where the cost model cuts (attentionSplit).
func extra(o SuiteOptions) ([]Point, error) {
	var ps []Point
	for _, v := range []map[string]string{
		{"batch": "2", "heads": "32", "heads-kv": "8", "seq-q": "8192", "dim": "128", "causal": "false"},
		{"batch": "2", "heads": "32", "heads-kv": "8", "seq-q": "8192", "dim": "128", "causal": "true"},
		{"batch": "1", "heads": "16", "seq-q": "4096", "dim": "128", "causal": "true"},
	} {
		v["layout"], v["dtype"] = "bshd", "bf16"
		pair, err := attentionSplit("extra", v, o.sms())
		if err != nil {
			return nil, err
		}
		ps = append(ps, pair...)
	}
	return ps, nil
}

// faBwd is the FlashAttention backward (dQ, dK, dV; its three programs
// timed together), BSHD bf16, at the forward sweep's budget: 16k tokens
// (B = 16384/S), H = 2048/D, S 1k, 4k and 16k, head dims 64 and 128, causal
// and not; then GQA 32:8 at S 4k d128 causal, and d256 at S 4k causal and
// not. --quick keeps S 4k d128 non-causal. Its inputs' O and LSE come from
// the float64 forward on the host (ref.Attn), seconds a point on the device
// machine's 16 cores.
func faBwd(o SuiteOptions) ([]Point, error) {
	e, err := kernels.Lookup("flash-attention-bwd")
	if err != nil {
		return nil, err
	}
	type shape struct {
		s, d, heads, kv int
		causal          bool
	}
	var shapes []shape
	for _, d := range []int{64, 128} {
		for _, causal := range []bool{false, true} {
			for _, s := range []int{1024, 4096, 16384} {
				shapes = append(shapes, shape{s, d, 2048 / d, 2048 / d, causal})
			}
		}
	}
	shapes = append(shapes, shape{4096, 128, 32, 8, true}, shape{4096, 256, 8, 8, false}, shape{4096, 256, 8, 8, true})
	if o.Quick {
		shapes = []shape{{4096, 128, 16, 16, false}}
	}
	var ps []Point
	for _, sh := range shapes {
		p, err := e.Problem(map[string]string{"batch": fmt.Sprint(16384 / sh.s), "heads": fmt.Sprint(sh.heads),
			"heads-kv": fmt.Sprint(sh.kv), "seq-q": fmt.Sprint(sh.s),
			"dim": fmt.Sprint(sh.d), "causal": fmt.Sprint(sh.causal), "layout": "bshd", "dtype": "bf16"})
		if err != nil {
			return nil, err
		}
		c, ok := p.GPUConfig().(kernels.AttnConfig)
		if !ok {
			return nil, fmt.Errorf("fa-bwd: %s's GPU config is %T, want kernels.AttnConfig", p.Kernel(), p.GPUConfig())
		}
		ps = append(ps, Point{Suite: "fa-bwd", Problem: p, Configs: []kernels.Config{c}})
	}
	return ps, nil
}

func gemm(SuiteOptions) ([]Point, error) {
	e, err := kernels.Lookup("gemm")
	if err != nil {
		return nil, err
	}
	p, err := e.Problem(map[string]string{"m": "8192", "n": "8192", "k": "8192", "dtype": "bf16", "out-dtype": "bf16"})
	if err != nil {
		return nil, err
	}
	return []Point{{Suite: "gemm", Problem: p, Configs: GemmConfigs()}}, nil
}

// AttnConfigs are the tilings worth trying on the GPU for a head dim: on
// Hopper, 128 query rows over two warpgroups (wgmma), with and without a
// producer warpgroup (ws; elsewhere it is ignored), and with the two
// warpgroups taking turns at the tensor cores (pingpong); 64-row tiles on
// one warpgroup leave room for two blocks per SM, which short sequences
// favour.
func AttnConfigs(d int, causal bool) []kernels.Config {
	var cs []kernels.Config
	add := func(m, n, threads, stages int) {
		cs = append(cs, kernels.AttnConfig{M: m, N: n, Stages: stages, Threads: threads})
	}
	addWS := func(m, n, threads, stages int) {
		cs = append(cs, kernels.AttnConfig{M: m, N: n, Stages: stages, Threads: threads, WS: true})
	}
	addPP := func(m, n, stages int) {
		cs = append(cs, kernels.AttnConfig{M: m, N: n, Stages: stages, Threads: 256, WS: true, PingPong: true})
	}
	addOV := func(m, n, threads, stages int) { // P·V deferred under the next softmax; K and V on rings of their own
		cs = append(cs, kernels.AttnConfig{M: m, N: n, Stages: stages, Threads: threads, WS: true, Overlap: true})
	}
	addOVPP := func(m, n int) { // both: FlashAttention-3's schedule
		cs = append(cs, kernels.AttnConfig{M: m, N: n, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true})
	}
	// K/V multicast to pairs of blocks (non-causal: compiler/cudagen/cluster.go);
	// at d128 it won no point on the H100 (0.89-0.99× the same config below
	// 8k tokens, 0.99-1.05× above), at d256 the long ones (docs/perf.md).
	addCluster := func(c kernels.AttnConfig) {
		if !causal {
			c.Cluster = 2
			cs = append(cs, c)
		}
	}
	switch {
	case d <= 64:
		add(128, 128, 256, 2)
		add(128, 64, 256, 2)
		add(128, 128, 128, 2)
		add(64, 64, 128, 2)
		add(64, 128, 128, 2) // causal 1k: 0.995× the time of 64-key tiles (H100)
		addWS(128, 128, 256, 2)
		addPP(128, 128, 2)
		addPP(128, 64, 2)
		addOV(128, 128, 256, 2)
		addOV(128, 64, 256, 2)
		addOVPP(128, 128)
		addOVPP(128, 64)
	case d <= 128:
		add(128, 128, 256, 2)
		add(128, 64, 256, 2)
		add(128, 176, 256, 2)
		addWS(128, 128, 256, 2)
		addWS(128, 176, 256, 2)
		addPP(128, 128, 2)
		addPP(128, 176, 2)
		addPP(128, 64, 2)
		addOV(128, 128, 256, 2)
		addOV(128, 64, 256, 2)
		addOV(128, 96, 256, 2)
		addOVPP(128, 128)
		addOVPP(128, 96)
		addOVPP(128, 64)
		addOV(128, 176, 256, 2) // FlashAttention-3's tile, on K and V rings of two each
		addOVPP(128, 176)
		add(64, 64, 128, 2)
		add(64, 128, 128, 2)
		if causal { // the tuner's picks at 512 causal tokens on an H100 (docs/perf.md)
			add(64, 32, 128, 2)
			add(128, 48, 256, 2)
		}
	default:
		add(128, 64, 256, 2)
		add(128, 80, 256, 2)
		add(64, 32, 128, 2)
		add(64, 64, 128, 2)
		addWS(128, 64, 256, 2)
		addWS(128, 80, 256, 2)
		addPP(128, 64, 2)
		addPP(128, 80, 2)
		addWS(64, 32, 128, 2) // 96 KB of shared memory: two blocks per SM
		addWS(64, 64, 128, 2)
		addOV(128, 48, 256, 2)
		addOV(128, 32, 256, 2)
		addOVPP(128, 48)
		addOVPP(128, 32)
		addOV(128, 64, 256, 2) // room for these only on K and V rings of two each (not yet timed)
		addOVPP(128, 64)
		addOV(128, 80, 256, 2)
		addCluster(kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true})
		addCluster(kernels.AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true})
	}
	return cs
}

// GemmConfigs are the tilings worth trying for large GEMMs, the Hopper
// ones with a producer warpgroup too.
func GemmConfigs() []kernels.Config {
	return []kernels.Config{
		kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square, Raster: 8, WS: true},
		kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8, WS: true},
		kernels.GemmConfig{BM: 256, BN: 128, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8, WS: true},
		kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8},
		kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square, Raster: 8},
		kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square, Raster: 8},
		kernels.GemmConfig{BM: 256, BN: 128, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8},
		kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 3, Threads: 128, Policy: ir.Square, Raster: 8},
	}
}
