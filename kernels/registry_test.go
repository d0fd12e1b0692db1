package kernels

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
)

func mustProblem(t *testing.T, kernel string, vals map[string]string) Problem {
	t.Helper()
	e, err := Lookup(kernel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(vals)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegistryRuns builds every kernel with its default config, runs it on
// the interpreter and checks it whole against float64: at the registry's
// default shape and at small odd ones.
func TestRegistryRuns(t *testing.T) {
	cases := []struct {
		name, kernel string
		vals         map[string]string
	}{
		{"attn_defaults", "flash-attention", nil},
		{"attn_gqa_causal_bshd", "flash-attention", map[string]string{
			"batch": "2", "heads": "4", "heads-kv": "2", "seq-q": "40", "seq-kv": "70",
			"dim": "32", "causal": "true", "layout": "bshd"}},
		{"attn_f16_dv", "flash-attention", map[string]string{
			"heads": "2", "seq-q": "33", "dim": "48", "dim-v": "16", "dtype": "f16", "scale": "0.2"}},
		{"attn_causal_sq>skv", "flash-attention", map[string]string{
			"heads": "1", "seq-q": "50", "seq-kv": "20", "dim": "16", "causal": "true"}},
		{"gemm_defaults", "gemm", nil},
		{"gemm_trans_f16", "gemm", map[string]string{
			"m": "70", "n": "45", "k": "83", "trans-a": "true", "trans-b": "true", "dtype": "f16"}},
		{"gemm_bf16_out", "gemm", map[string]string{"m": "20", "n": "100", "k": "9", "out-dtype": "bf16"}},
		{"gemm_f8", "gemm", map[string]string{"m": "64", "n": "32", "k": "64", "dtype": "f8e4m3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, c.kernel, c.vals)
			fn, err := Build(p, p.DefaultConfig(), ir.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			args := p.Inputs(3)
			if err := interp.Run(fn, args); err != nil {
				t.Fatal(err)
			}
			r := p.Check(args, 3)
			if !r.OK() || r.Checked != "all" {
				t.Errorf("%s: %s", p.Shape(), r)
			}
		})
	}
}

func TestCheckCatchesUnwrittenOutput(t *testing.T) {
	p := mustProblem(t, "gemm", map[string]string{"m": "16", "n": "16", "k": "16"})
	r := p.Check(p.Inputs(1), 1) // C is still NaN
	if r.OK() || r.Errors()["c_bad"] != 256 || !math.IsInf(r.Errors()["c_rel"], 1) {
		t.Errorf("unwritten C passed: %s %v", r, r.Errors())
	}
	p = mustProblem(t, "flash-attention", map[string]string{"heads": "1", "seq-q": "16"})
	if r := p.Check(p.Inputs(1), 1); r.OK() {
		t.Errorf("unwritten O passed: %s", r)
	}
}

func TestSampledCheck(t *testing.T) {
	p := mustProblem(t, "flash-attention", map[string]string{
		"batch": "8", "heads": "16", "seq-q": "4096", "dim": "128"}).(*attnProblem)
	rows, checked := p.rowsToCheck(5)
	if want := 95; len(rows) != want || checked != "sampled 95 rows" { // 1e8 / (4096·256)
		t.Errorf("got %d rows, %q; want %d sampled", len(rows), checked, want)
	}
	again, _ := p.rowsToCheck(5)
	if rows[7] != again[7] {
		t.Errorf("the sample is not seeded")
	}
	// Few rows but long ones: all rows even past the budget.
	p = mustProblem(t, "flash-attention", map[string]string{"heads": "1", "seq-q": "8", "seq-kv": "1000000"}).(*attnProblem)
	if _, checked := p.rowsToCheck(1); checked != "all" {
		t.Errorf("8 rows: %s", checked)
	}
	g := mustProblem(t, "gemm", map[string]string{"m": "4096", "n": "4096", "k": "4096"}).(*gemmProblem)
	if at, checked := g.elemsToCheck(1); len(at) != 24414 || checked != "sampled 24414 elements" {
		t.Errorf("gemm 4096³: %d, %q", len(at), checked)
	}
}

func TestFLOPs(t *testing.T) {
	cases := []struct {
		kernel string
		vals   map[string]string
		want   float64
	}{
		{"flash-attention", nil, 4 * 1 * 4 * 256 * 256 * 64},
		{"flash-attention", map[string]string{"causal": "true"}, 4 * 1 * 4 * 256 * 256 * 64 / 2},
		{"flash-attention", map[string]string{"batch": "2", "heads": "8", "heads-kv": "1", "seq-q": "128", "seq-kv": "1000", "dim": "192", "dim-v": "128"},
			2 * 2 * 8 * 128 * 1000 * (192 + 128)},
		// As FlashAttention counts: causal halves even when Sq ≠ Skv.
		{"flash-attention", map[string]string{"seq-q": "100", "seq-kv": "300", "causal": "true"}, 4 * 4 * 100 * 300 * 64 / 2},
		{"gemm", nil, 2 * 512 * 512 * 512},
		{"gemm", map[string]string{"m": "3", "n": "5", "k": "7", "trans-a": "true"}, 2 * 3 * 5 * 7},
	}
	for _, c := range cases {
		if got := mustProblem(t, c.kernel, c.vals).FLOPs(); got != c.want {
			t.Errorf("%s %v: %g FLOPs, want %g", c.kernel, c.vals, got, c.want)
		}
	}
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		kernel string
		vals   map[string]string
		want   string
	}{
		{"flash-attention", map[string]string{"heads": "6", "heads-kv": "4"}, "--heads 6 is not a multiple of --heads-kv 4"},
		{"flash-attention", map[string]string{"dim": "0"}, "--dim must be at least 1"},
		{"flash-attention", map[string]string{"batch": "-2"}, "--batch must be at least 1"},
		{"flash-attention", map[string]string{"seq-q": "ten"}, `--seq-q: "ten" is not an integer`},
		{"flash-attention", map[string]string{"dtype": "f64"}, `--dtype: unknown dtype "f64" (want bf16, f16)`},
		{"flash-attention", map[string]string{"layout": "sbhd"}, `unknown layout "sbhd"`},
		{"flash-attention", map[string]string{"causal": "maybe"}, `--causal: "maybe" is not true or false`},
		{"flash-attention", map[string]string{"scale": "nan"}, "not a finite number"},
		{"flash-attention", map[string]string{"heads": "99999999"}, "too large"},
		{"flash-attention", map[string]string{"seq-q": "16777216", "batch": "16777216"}, "more than 2^40 elements"},
		{"flash-attention", map[string]string{"m": "8"}, "unknown flag --m"},
		{"flash-attention-bwd", map[string]string{"heads": "6", "heads-kv": "4"}, "--heads 6 is not a multiple of --heads-kv 4"},
		{"flash-attention-bwd", map[string]string{"splits": "2"}, "unknown flag --splits"},
		{"flash-attention-varlen-bwd", map[string]string{"lens": "3,0"}, "--lens"},
		{"gemm", map[string]string{"k": "0"}, "--k must be at least 1"},
		{"gemm", map[string]string{"dtype": "f32"}, `--dtype: unknown dtype "f32"`},
		{"gemm", map[string]string{"out-dtype": "i32"}, `--out-dtype: unknown dtype "i32"`},
	}
	for _, c := range cases {
		e, _ := Lookup(c.kernel)
		_, err := e.Problem(c.vals)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.kernel+": ") {
			t.Errorf("%s %v: error %v; want %q", c.kernel, c.vals, err, c.want)
		}
	}
	if _, err := Lookup("flash"); err == nil || !strings.Contains(err.Error(), "have flash-attention, flash-attention-bwd, flash-attention-varlen, flash-attention-varlen-bwd, flash-attention-kvcache, gemm") {
		t.Errorf("Lookup(flash): %v", err)
	}
}

func TestBuildErrorsAreClean(t *testing.T) {
	p := mustProblem(t, "flash-attention", map[string]string{"dim": "1024"}) // 3 shared tiles of 64×1024 bf16
	_, err := Build(p, p.DefaultConfig(), ir.DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "does not build:\n") || !strings.Contains(err.Error(), "flash.go:") {
		t.Errorf("got %v", err)
	}
	if _, err := p.Program(GemmConfig{}); err == nil {
		t.Error("a gemm config built attention")
	}
}

func TestFieldsJSON(t *testing.T) {
	p := mustProblem(t, "gemm", nil)
	b, err := json.Marshal(struct {
		S Fields `json:"shape"`
		C Fields `json:"config"`
	}{p.Shape(), ConfigFields(p.DefaultConfig())})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"shape":{"m":512,"n":512,"k":512,"trans_a":false,"trans_b":false,"dtype":"bf16","out_dtype":"f32"},` +
		`"config":{"bm":64,"bn":64,"bk":32,"stages":2,"threads":128,"policy":"square","raster":0}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// On sm_90a FlashAttention's default follows the sweep's winners for head
// dims 64, 128 and 256; elsewhere it is GPUConfig.
func TestAttnGPUConfigFor(t *testing.T) {
	for _, tc := range []struct {
		flags map[string]string
		arch  string
		want  AttnConfig
	}{
		{map[string]string{"dim": "128", "seq-q": "512", "batch": "32", "heads": "16"}, "sm_90a", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true}},
		{map[string]string{"dim": "128", "seq-q": "512", "batch": "32", "heads": "16", "causal": "true"}, "sm_90a", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true, Draw: true}},
		{map[string]string{"dim": "128", "seq-q": "1024", "causal": "true"}, "sm_90a", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true}},
		{map[string]string{"dim": "128", "seq-q": "16384", "causal": "true"}, "sm_90a", AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true}},
		{map[string]string{"dim": "64", "seq-q": "512", "causal": "true"}, "sm_90a", AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}},
		{map[string]string{"dim": "64", "seq-q": "4096"}, "sm_90a", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128}},
		{map[string]string{"dim": "256", "seq-q": "512"}, "sm_90a", AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true, Direct: true}},
		{map[string]string{"dim": "256", "seq-q": "2048"}, "sm_90a", AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true}},
		{map[string]string{"dim": "256", "seq-q": "4096"}, "sm_90a", AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true}},
		{map[string]string{"dim": "256", "seq-q": "16384"}, "sm_90a", AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true, Cluster: 2}},
		{map[string]string{"dim": "256", "seq-q": "16384", "causal": "true"}, "sm_90a", AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true}},
		{map[string]string{"dim": "128", "seq-q": "512"}, "sm_80", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}},
		{map[string]string{"dim": "96", "seq-q": "512"}, "sm_90a", AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}},
		{map[string]string{"dim": "192", "dim-v": "128", "seq-q": "512"}, "sm_90a", AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}},
	} {
		e, _ := Lookup("flash-attention")
		p, err := e.Problem(tc.flags)
		if err != nil {
			t.Fatal(err)
		}
		if got := GPUConfigFor(p, tc.arch); got != tc.want {
			t.Errorf("%v on %s: %+v, want %+v", tc.flags, tc.arch, got, tc.want)
		}
	}
	// The split path takes the single program's tiles as a grid, without
	// a cluster: d256 non-causal 16k keys (clusters), 512 keys (a walk),
	// d128 causal 512 keys (a drawn walk).
	for _, flags := range []map[string]string{
		{"dim": "256", "seq-q": "512", "seq-kv": "16384", "heads": "8", "splits": "4"},
		{"dim": "256", "seq-q": "512", "seq-kv": "512", "heads": "8", "splits": "4"},
		{"dim": "128", "seq-q": "512", "seq-kv": "512", "heads": "16", "causal": "true", "splits": "4"},
	} {
		e, _ := Lookup("flash-attention")
		p, err := e.Problem(flags)
		if err != nil {
			t.Fatal(err)
		}
		skv := flags["seq-kv"]
		c := GPUConfigFor(p, "sm_90a").(AttnConfig)
		if c.M != AttnSplitM || c.Cluster != 0 || c.Persistent || c.Direct || c.Draw || !c.WS {
			t.Errorf("split path, %s keys: %+v, want %d-row tiles with a producer, no cluster, not persistent", skv, c, AttnSplitM)
		}
	}
}

// AttnShapeOf gives back the shape a flash-attention problem was made
// with, split or not, and refuses other kernels' problems.
func TestAttnShapeOf(t *testing.T) {
	e, err := Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, splits := range []string{"1", "3"} {
		p, err := e.Problem(map[string]string{"batch": "2", "heads": "8", "heads-kv": "2", "seq-q": "300", "seq-kv": "900", "dim": "128", "causal": "true", "splits": splits})
		if err != nil {
			t.Fatal(err)
		}
		s, ok := AttnShapeOf(p)
		if !ok || s.B != 2 || s.H != 8 || s.HKV != 2 || s.Sq != 300 || s.Skv != 900 || s.Dqk != 128 || !s.Causal {
			t.Errorf("splits %s: %+v, %v", splits, s, ok)
		}
	}
	m, err := Lookup("mla-decode")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Problem(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := AttnShapeOf(p); ok {
		t.Errorf("mla-decode's problem taken for attention")
	}
}

// Each attention kernel refuses the other direction's schedules with a
// message naming them, rather than building without them.
func TestAttnSchedulesOfTheOtherDirection(t *testing.T) {
	fwd := AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}
	for _, c := range []struct {
		kernel string
		edit   func(*AttnConfig)
		want   string
	}{
		{"flash-attention", func(c *AttnConfig) { c.SharedP = true }, "the backward's schedules (sharedp, wholetiles, bulkdq) are not the forward's"},
		{"flash-attention-varlen", func(c *AttnConfig) { c.WholeTiles = true }, "the backward's schedules"},
		{"flash-attention", func(c *AttnConfig) { c.BulkDQ = true }, "the backward's schedules"},
		{"flash-attention-kvcache", func(c *AttnConfig) { c.SharedP = true }, "the backward's schedules"},
		{"flash-attention-bwd", func(c *AttnConfig) { c.Persistent = true }, "the forward's schedules"},
		{"flash-attention-varlen-bwd", func(c *AttnConfig) { c.PingPong = true }, "the forward's schedules"},
	} {
		e, err := Lookup(c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Problem(map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := fwd
		c.edit(&cfg)
		if err := buildAll(p, cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s: %v, want %q", c.kernel, ConfigFields(cfg), err, c.want)
		}
	}
}

// buildAll builds p's program, or a Chain's steps, at c.
func buildAll(p Problem, c Config) error {
	if ch, ok := p.(Chain); ok {
		_, err := ch.Steps(c)
		return err
	}
	_, err := Build(p, c, ir.DefaultLimits)
	return err
}

// --varlen on flash-attention and its backward runs the varlen kernels
// over the lengths it lists; flags that size or mask a padded batch are
// refused beside it, in one line.
func TestVarlenFlag(t *testing.T) {
	for _, c := range []struct {
		kernel string
		flags  map[string]string
		want   string // the problem's kernel, or the error's text
	}{
		{"flash-attention", map[string]string{"varlen": "1,17,100", "heads": "4", "heads-kv": "2", "causal": "true"}, "flash-attention-varlen"},
		{"flash-attention-bwd", map[string]string{"varlen": "1,17,100", "dim": "128"}, "flash-attention-varlen-bwd"},
		{"flash-attention", map[string]string{"varlen": "1,17", "batch": "2"}, "takes no --batch"},
		{"flash-attention", map[string]string{"varlen": "1,17", "splits": "0"}, "takes no --splits"},
		{"flash-attention-bwd", map[string]string{"varlen": "5,6", "softcap": "30"}, "takes no --softcap"},
		{"flash-attention", map[string]string{"varlen": "1,0"}, "--varlen \"1,0\": want lengths"},
	} {
		e, err := Lookup(c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Problem(c.flags)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %v: %v, want one line with %q", c.kernel, c.flags, err, c.want)
			}
		case p.Kernel() != c.want:
			t.Errorf("%s %v: kernel %s, want %s", c.kernel, c.flags, p.Kernel(), c.want)
		}
	}
	e, _ := Lookup("flash-attention")
	p, err := e.Problem(map[string]string{"varlen": "1,17,100", "heads": "4", "heads-kv": "2", "causal": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.(*varlenProblem).s; !slices.Equal(s.LensQ, []int{1, 17, 100}) || s.H != 4 || s.HKV != 2 || !s.Causal {
		t.Errorf("shape %+v", s)
	}
}
