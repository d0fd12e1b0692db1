package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

func field(fs kernels.Fields, name string) any {
	for _, f := range fs {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// Every suite has its points, each with candidate configs that build for
// it (a chain's every step); the sweep is FlashAttention-3's: 16k tokens
// per batch, 2048 = heads × dim.
func TestSuites(t *testing.T) {
	want := map[string]struct{ full, quick int }{
		"fa-sweep": {37, 12}, "fa-short": {6, 6}, "extra": {4, 4}, "gemm": {1, 1},
		"mla": {40, 8}, "fa-tail": {48, 8}, // a split path and the single program per shape
		"fa-bwd":        {15, 1},
		"rows":          {30, 6},
		"fa-mods":       {6, 2},
		"gemm-llm":      {7, 2},
		"gemm-fp8":      {8, 2},
		"fa-mods-bwd":   {6, 2},
		"fa-varlen":     {8, 2},
		"fa-varlen-bwd": {8, 2},
	}
	if len(want) != len(Suites) {
		t.Errorf("%d suites, %d tested", len(Suites), len(want))
	}
	for name, n := range want {
		quick, err := Suites[name](SuiteOptions{Quick: true})
		if err != nil || len(quick) != n.quick {
			t.Errorf("%s --quick: %d points, want %d (%v)", name, len(quick), n.quick, err)
		}
		ps, err := Suites[name](SuiteOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ps) != n.full {
			t.Errorf("%s: %d points, want %d", name, len(ps), n.full)
		}
		for _, p := range ps {
			sh := p.Problem.Shape()
			if len(p.Configs) == 0 {
				t.Errorf("%s %s: no configs", name, sh)
			}
			if name == "fa-bwd" && field(sh, "batch").(int)*field(sh, "seq_q").(int) != 16384 {
				t.Errorf("fa-bwd holds %s: not 16k tokens", sh)
			}
			if p.Problem.Kernel() == "flash-attention" {
				b, h, s, d := field(sh, "batch").(int), field(sh, "heads").(int), field(sh, "seq_q").(int), field(sh, "dim").(int)
				if name == "fa-sweep" && (b*s != 16384 || h*d != 2048) {
					t.Errorf("%s: batch×seq = %d, heads×dim = %d", sh, b*s, h*d)
				}
				if name == "fa-short" && (field(sh, "causal") != true || s > 1024) {
					t.Errorf("fa-short holds %s", sh)
				}
			}
			if name == "gemm" {
				continue // 8192³: the GEMM tests build these tilings
			}
			for _, c := range p.Configs {
				if _, _, err := Programs(p.Problem, c, ir.DefaultLimits); err != nil {
					t.Errorf("%s %s: %v", name, kernels.ConfigFields(c), err)
				}
			}
		}
	}
}

// splits is a problem's split count (0 when it has none).
func splits(p kernels.Problem) int {
	if s, ok := p.(interface{ Splits() int }); ok {
		return s.Splits()
	}
	return 0
}

// steps are the tensor indices of each program of p's first config.
func steps(t *testing.T, p Point) [][]int {
	t.Helper()
	_, idx, err := Programs(p.Problem, p.Configs[0], ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// The suites of issue 6 pair each shape's split path (first, making the
// inputs) with the single program (on them), with the split counts the
// scheduler and the tail-split cost model give for the SM count, and the
// programs of each path over the right tensors.
func TestSplitSuites(t *testing.T) {
	tests := []struct {
		suite      string
		sms        int
		split, one [][]int // the steps' tensors when the split path splits, and of the single program
		check      func(t *testing.T, sh kernels.Fields, n int, split Point)
	}{
		{"mla", 132, [][]int{{0, 1, 2, 3, 6, 7, 9, 10, 8, 4, 5}, {8, 9, 10, 4, 5}}, [][]int{{0, 1, 2, 3, 4, 5}}, func(t *testing.T, sh kernels.Fields, n int, split Point) {
			// The split path times what tilego run launches on Hopper.
			if def := kernels.GPUConfigFor(split.Problem, "sm_90a"); n >= 2 && !slices.Contains(split.Configs, def) {
				t.Errorf("%s: the split path does not try the default %s", split.Problem.Shape(), kernels.ConfigFields(def))
			}
			b, m, hq := field(sh, "batch").(int), field(sh, "mean_kv").(int), field(sh, "heads").(int)
			memBound := hq == 16 || hq == 32 || hq == 64 // h_q·s_q < 128, at 8k
			if (hq != 128 && !(memBound && m == 8192)) || field(sh, "dtype") != "bf16" || (b != 64 && b != 128) || m < 1024 || m > 32768 {
				t.Errorf("mla shape %s", sh)
			}
			// The scheduler's parts where they pay (kernels.MLASplitPays),
			// the single program where not: at 32k, and wherever a batch
			// of blocks leaves SMs idle (memory-bound), they split.
			sq := field(sh, "seq_q").(int)
			md := kernels.ScheduleMLA(kernels.MLALengths(b, m), sq, hq, 132)
			if pays := kernels.MLASplitPays(md, kernels.MLALengths(b, m), sq, hq, 132); field(sh, "sms") != 132 || (n >= 2) != pays || ((m == 32768 || memBound) && n < 2) {
				t.Errorf("%s: %d splits, but the split path pays: %v", sh, n, pays)
			}
		}},
		{"mla", 78, nil, nil, func(t *testing.T, sh kernels.Fields, n int, _ Point) {
			if field(sh, "sms") != 78 {
				t.Errorf("%s: want sms 78", sh)
			}
		}},
		{"fa-tail", 132, nil, [][]int{{0, 1, 2, 3, 4}}, func(t *testing.T, sh kernels.Fields, n int, split Point) {
			b, h, sq := field(sh, "batch").(int), field(sh, "heads").(int), field(sh, "seq_q").(int)
			if field(sh, "seq_kv").(int) < 8192 || field(sh, "dim") != 128 {
				t.Errorf("fa-tail shape %s", sh)
			}
			// 128-row blocks on 132 SMs: one wave of 32 blocks cut in 4, 64
			// in 2, 128 not at all; longer grids cut their tail of 4 or 16
			// blocks as TailSplits says, a causal one's (whose last wave
			// holds its first query tiles, of skv-sq+128 keys) into at
			// most 132 pieces.
			blocks := b * h * sq / 128
			want, ok := map[int]int{32: 4, 64: 2, 128: 1}[blocks]
			if !ok {
				causal, skv := field(sh, "causal").(bool), field(sh, "seq_kv").(int)
				if causal {
					skv += 128 - sq
				}
				want = kernels.TailSplits(kernels.SplitGrid{Blocks: blocks, Keys: skv, Dim: 128, SMs: 132, Causal: causal})
				if tail := blocks % 132; want < 2 || (causal && tail*want > 132) {
					t.Errorf("%s: a tail of %d blocks in %d pieces", sh, tail, want)
				}
			}
			if n != want {
				t.Errorf("%s: %d splits, want %d", sh, n, want)
			}
			for _, c := range split.Configs { // those of the count 128-row blocks get; all when none split
				if c.(kernels.AttnConfig).M != 128 && n > 1 {
					t.Errorf("%s: the split path tries %+v", sh, c)
				}
			}
			wantSteps := [][]int{{0, 1, 2, 5, 6}, {5, 6, 3, 4}} // every block cut
			if blocks > 132 {
				wantSteps = [][]int{{0, 1, 2, 3, 4, 5, 6}, {5, 6, 3, 4}} // the tail's: whole blocks write O
			}
			if got := steps(t, split); n > 1 && !slices.EqualFunc(got, wantSteps, slices.Equal) {
				t.Errorf("%s split path: steps %v, want %v", sh, got, wantSteps)
			}
		}},
	}
	for _, tt := range tests {
		ps, err := Suites[tt.suite](SuiteOptions{SMs: tt.sms})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(ps); i += 2 {
			split, one := ps[i], ps[i+1]
			if split.Impl != "tilego-split" || split.SameInputs || one.Impl != "" || !one.SameInputs || splits(one.Problem) != 1 {
				t.Fatalf("%s pair %d: %+v, %+v", tt.suite, i/2, split, one)
			}
			if tt.suite == "fa-tail" && split.Problem.Shape().String() != one.Problem.Shape().String() {
				t.Errorf("fa-tail: %s vs %s", split.Problem.Shape(), one.Problem.Shape())
			}
			n := splits(split.Problem)
			tt.check(t, one.Problem.Shape(), n, split)
			if got := steps(t, split); tt.split != nil && n > 1 && !slices.EqualFunc(got, tt.split, slices.Equal) {
				t.Errorf("%s split path: steps %v, want %v", tt.suite, got, tt.split)
			}
			if got := steps(t, one); tt.one != nil && !slices.EqualFunc(got, tt.one, slices.Equal) {
				t.Errorf("%s single program: steps %v, want %v", tt.suite, got, tt.one)
			}
		}
	}
}

// The split path's candidates include its Hopper default once, Early or
// Merge by the shape; the single program's include neither.
func TestMLASplitDefault(t *testing.T) {
	count := func(p Point, f func(kernels.MLAConfig) bool) int {
		n := 0
		for _, c := range p.Configs {
			if f(c.(kernels.MLAConfig)) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		batch, hq    int
		early, merge int // the split path's configs with each
	}{
		{64, 128, 1, 0},  // 64 requests over 66 parts: Early
		{128, 128, 0, 1}, // more requests than parts, hand-offs: Merge
		{64, 64, 1, 0},   // no hand-off at h_q 64: Early
	} {
		ps, err := mlaPoints("t", tc.batch, tc.hq, 1, 8192, 132)
		if err != nil {
			t.Fatal(err)
		}
		def := kernels.GPUConfigFor(ps[0].Problem, "sm_90a")
		isDef := func(c kernels.MLAConfig) bool { return kernels.Config(c) == def }
		early := count(ps[0], func(c kernels.MLAConfig) bool { return c.Early })
		merge := count(ps[0], func(c kernels.MLAConfig) bool { return c.Merge })
		if early != tc.early || merge != tc.merge || count(ps[0], isDef) != 1 {
			t.Errorf("b%d h_q %d: %d Early, %d Merge configs and the default (%s) %d times on the split path, want %d, %d and once",
				tc.batch, tc.hq, early, merge, kernels.ConfigFields(def), count(ps[0], isDef), tc.early, tc.merge)
		}
		if n := count(ps[1], func(c kernels.MLAConfig) bool { return c.Early || c.Merge }); n != 0 {
			t.Errorf("b%d h_q %d: the single program tries %d Early or Merge configs", tc.batch, tc.hq, n)
		}
	}
}

// runCPU runs p's programs for c on the interpreter over args as RunSuite
// binds them on the GPU (everything any step writes poisoned once, before
// the first: a later step may add to what an earlier one wrote) and checks
// the result.
func runCPU(t *testing.T, p Point, c kernels.Config, args []*tensor.Tensor) {
	t.Helper()
	fns, idx, err := Programs(p.Problem, c, ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	subs := make([][]*tensor.Tensor, len(fns))
	for i, f := range fns {
		subs[i] = args
		if idx != nil {
			subs[i] = make([]*tensor.Tensor, len(idx[i]))
			for j, a := range idx[i] {
				subs[i][j] = args[a]
			}
		}
		for j, prm := range f.Params {
			if prm.Output {
				subs[i][j].Fill(math.NaN())
			}
		}
	}
	for i, f := range fns {
		if err := interp.Run(f, subs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if r := p.Problem.Check(args, 1); !r.OK() {
		t.Errorf("%s %s %s: %s", p.Impl, p.Problem.Shape(), kernels.ConfigFields(c), r)
	}
}

// A split path and the single program computed on the split path's
// inputs, as the mla and fa-tail suites run them, on the interpreter: both
// give the right O and LSE.
func TestSplitPairsOnCPU(t *testing.T) {
	mla, err := mlaPoints("t", 3, 32, 2, 150, 8)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler declines so short a batch (kernels.MLASplitPays); its
	// split path is the same programs as 3 uniform cuts, which stay cheap
	// on the interpreter.
	e, err := kernels.Lookup("mla-decode")
	if err != nil {
		t.Fatal(err)
	}
	if mla[0].Problem, err = e.Problem(map[string]string{"batch": "3", "heads": "32", "seq-q": "2", "mean-kv": "150", "dtype": "bf16", "splits": "3", "sms": "8"}); err != nil {
		t.Fatal(err)
	}
	s := kernels.AttnShape{B: 1, H: 1, HKV: 1, Sq: 64, Skv: 2048, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16, BSHD: true}
	tail, err := tailPoints("t", s, []kernels.Config{kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	// A grid of several waves: 5 query tiles on 2 SMs (two waves and a
	// tail of one block), so only the tail is cut.
	w := kernels.AttnShape{B: 1, H: 1, HKV: 1, Sq: 320, Skv: 2048, Dqk: 128, Dv: 128, DType: ir.BF16}
	waves, err := tailPoints("t", w, []kernels.Config{kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if st := steps(t, waves[0]); len(st) != 2 || len(st[0]) != 7 {
		t.Errorf("several waves: steps %v, want the tail split's", st)
	}
	for _, pair := range [][]Point{mla, tail, waves} {
		if n := splits(pair[0].Problem); n < 2 {
			t.Errorf("%s: %d splits", pair[0].Problem.Shape(), n)
		}
		args := pair[0].Problem.Inputs(1)
		for _, p := range pair {
			for _, c := range p.Configs {
				runCPU(t, p, c, args)
			}
		}
	}
}

// The flush decision counts what a candidate's programs read and none
// writes: the split path's Q, cache, table, lengths and schedule, not the
// partials its combine reads.
func TestCandidateInputBytes(t *testing.T) {
	ps, err := mlaPoints("t", 1, 32, 1, 2000, 8)
	if err != nil {
		t.Fatal(err)
	}
	args := ps[0].Problem.Inputs(1)
	size := func(is ...int) int {
		n := 0
		for _, i := range is {
			n += len(args[i].Data) * args[i].DType.Bytes()
		}
		return n
	}
	for i, want := range []int{size(0, 1, 2, 3, 6, 7, 8), size(0, 1, 2, 3)} {
		fns, idx, err := Programs(ps[i].Problem, ps[i].Configs[0], ir.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		cd := candidate{idx: idx}
		for _, f := range fns {
			cd.progs = append(cd.progs, &cudagen.Program{Func: f})
		}
		if got := cd.inputBytes(args); got != want {
			t.Errorf("%s: input bytes %d, want %d", ps[i].Impl, got, want)
		}
	}
}

// Every program of the new suites' candidates generates CUDA for Hopper
// (no GPU needed), so the device run meets no code generator refusal.
func TestSplitSuitesCompile(t *testing.T) {
	for _, name := range []string{"mla", "fa-tail", "fa-bwd", "fa-varlen-bwd"} {
		ps, err := Suites[name](SuiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			for _, c := range p.Configs {
				fns, _, err := Programs(p.Problem, c, ir.DefaultLimits)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range fns {
					if _, err := cudagen.Compile(f, cudagen.Options{Arch: "sm_90a"}); err != nil {
						t.Errorf("%s %s %s: %v", name, p.Problem.Shape(), kernels.ConfigFields(c), err)
					}
				}
			}
		}
	}
}

// The configs tried only at short sequences: there at 512 and 2k tokens,
// not at 4k; each compiles for Hopper, and a persistent one with a
// producer gets one (its ring counted on across tiles) that loads the
// query tiles too (persistent_loads.go), causal or not; at d256 only walks that store
// their output from registers.
func TestShortAttnConfigs(t *testing.T) {
	for _, d := range []int{64, 128, 256} {
		for _, causal := range []bool{false, true} {
			for _, seq := range []int{512, 2048, 4096} {
				p, err := attention("t", map[string]string{"batch": "2", "heads": "4", "seq-q": fmt.Sprint(seq), "dim": fmt.Sprint(d),
					"causal": fmt.Sprint(causal), "layout": "bshd", "dtype": "bf16"})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, c := range p.Configs {
					ac := c.(kernels.AttnConfig)
					if !ac.Persistent && !ac.Prefetch {
						continue
					}
					n++
					if ac.Persistent && d > 128 && !ac.Direct { // d256's query tile fits beside the ring only without the output's staging tile
						t.Errorf("d%d: persistent config %+v stages its output", d, ac)
					}
					fs, _, err := Programs(p.Problem, c, ir.DefaultLimits)
					if err != nil {
						t.Fatalf("d%d %d %v: %v", d, seq, ac, err)
					}
					prog, err := cudagen.Compile(fs[0], cudagen.Options{Arch: "sm_90a"})
					if err != nil {
						t.Fatalf("d%d %d %+v: %v", d, seq, ac, err)
					}
					ws := ac.WS && ac.Persistent
					if ws != strings.Contains(prog.Source, "ring += max(0, hi - lo);") {
						t.Errorf("d%d %+v: persistent producer %v, but the source says otherwise", d, ac, ws)
					}
					if ws && strings.Contains(prog.Source, "cp_async16(") {
						t.Errorf("d%d %+v: the consumers still load the query tile", d, ac)
					}
				}
				want := len(shortAttnConfigs(d, causal))
				if seq > 2048 {
					want = 0
				}
				if extra := len(p.Configs) - len(AttnConfigs(d, causal)); extra != want {
					t.Errorf("d%d causal %v seq %d: %d short configs, want %d", d, causal, seq, extra, want)
				}
				if seq > 2048 && n != 0 {
					t.Errorf("d%d causal %v seq %d: %d persistent or prefetching configs, want none", d, causal, seq, n)
				}
			}
		}
	}
}

// The sweep and extra time the tail split beside the single program where
// the cost model takes it: on 132 SMs the sweep's d128 at 16k alone (2048
// blocks, a tail of 68; d64's 4096 blocks run two an SM, 15.5 waves of
// 264, and d256's tail of 100 is too long) and extra's non-causal GQA
// (4096 blocks, a tail of 4), never causal; on 78 SMs the sweep's own.
func TestSweepSplits(t *testing.T) {
	ex, err := extra(SuiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 4 || ex[1].Impl != "tilego-split" || field(ex[1].Problem.Shape(), "heads_kv") != 8 ||
		field(ex[1].Problem.Shape(), "causal") != false || splits(ex[1].Problem) != 32 {
		t.Errorf("extra: want the GQA point's split path in 32 pieces second, got %d points", len(ex))
	}
	for _, sms := range []int{132, 78} {
		ps, err := faSweep(SuiteOptions{SMs: sms})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, p := range ps {
			if p.Impl != "tilego-split" {
				continue
			}
			sh := p.Problem.Shape()
			got = append(got, fmt.Sprintf("d%v %v", field(sh, "dim"), field(sh, "seq_q")))
			if i == 0 || ps[i-1].Impl != "" || ps[i-1].Problem.Shape().String() != sh.String() {
				t.Errorf("%s: the split path does not follow its single program", sh)
			}
			if field(sh, "causal") != false || splits(p.Problem) < 2 || field(sh, "sms") != nil {
				t.Errorf("%s: %d splits", sh, splits(p.Problem))
			}
			for _, c := range p.Configs {
				if ac := c.(kernels.AttnConfig); ac.M != 128 || ac.Persistent || ac.Cluster > 1 {
					t.Errorf("%s: the split path tries %+v", sh, ac)
				}
			}
		}
		want := "[d128 16384]"
		if sms == 78 {
			want = fmt.Sprint(sweepSplitsOn(78))
		}
		if fmt.Sprint(got) != want {
			t.Errorf("on %d SMs the sweep splits at %v, want %s", sms, got, want)
		}
	}
}

// sweepSplitsOn lists the sweep points the cost model splits on sms SMs.
func sweepSplitsOn(sms int) []string {
	var out []string
	for _, d := range []int{64, 128, 256} {
		for _, s := range []int{512, 1024, 2048, 4096, 8192, 16384} {
			sh := kernels.AttnShape{B: 16384 / s, H: 2048 / d, HKV: 2048 / d, Sq: s, Skv: s, Dqk: d, Dv: d}
			if kernels.FlashAttentionSplits(sh, kernels.AttnConfig{M: 128}, sms) > 1 {
				out = append(out, fmt.Sprintf("d%d %d", d, s))
			}
		}
	}
	return out
}
