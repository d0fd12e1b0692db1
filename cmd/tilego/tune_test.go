package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilego/tilego/autotune"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/chart"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// fakeGPU is a Runner whose timings favour 128×112 attention tiles (the nearest to the default, so always among the first measured); the
// code is really generated (so fingerprints are real), nothing runs.
type fakeGPU struct {
	mu    sync.Mutex
	progs map[kernels.Config]*cudagen.Program
	ran   int
}

func (f *fakeGPU) Target() autotune.Target {
	return autotune.Target{GPU: "Fake GPU (sm_90a, 1 SMs)", Arch: "sm_90a", Compiler: "nvrtc-0.0", Codegen: autotune.CodegenVersion("sm_90a")}
}

func (f *fakeGPU) Compile(ctx context.Context, p kernels.Problem, cs []kernels.Config) []error {
	progs, errs := autotune.BuildAll(p, cs, ir.DefaultLimits, cudagen.Options{Arch: "sm_90a"})
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range cs {
		f.progs[c] = progs[i]
	}
	return errs
}

func (f *fakeGPU) Run(ctx context.Context, p kernels.Problem, c kernels.Config, seed uint64) (autotune.Measurement, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran++
	m := kernels.Measure{Name: "o", Tol: 1e-2}
	m.Diff.Add(1, 1)
	ms := 1.0
	if a, ok := c.(kernels.AttnConfig); ok {
		ms += float64(abs(a.M-128))/100 + float64(abs(a.N-112))/1000 + float64(a.Stages)/1e4 + float64(a.Threads)/1e6
	}
	d := time.Duration(ms * 1e6)
	return autotune.Measurement{Report: kernels.Report{Measures: []kernels.Measure{m}, Checked: "all"},
		Time: bench.Stats{Median: d, Spread: d / 100, N: 20, Flush: bench.FlushL2}, Regs: 128,
		Source: f.progs[c].Fingerprint()}, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func withFakeGPU(t *testing.T) *fakeGPU {
	t.Helper()
	t.Setenv("TILEGO_CACHE", t.TempDir())
	f := &fakeGPU{progs: map[kernels.Config]*cudagen.Program{}}
	old := openTuner
	openTuner = func(bench.Options) (autotune.Runner, error) { return f, nil }
	t.Cleanup(func() { openTuner = old })
	return f
}

func TestTuneSavesWinnerForRun(t *testing.T) {
	f := withFakeGPU(t)
	shape := []string{"--heads", "2", "--seq-q", "4096", "--dim", "64"} // no short-sequence seeds
	out, stderr := tilegoOut(t, 0, append([]string{"tune", "flash-attention", "--max", "20", "--progress", "--patience", "0"}, shape...)...)
	for _, want := range []string{"tuned flash-attention", "Fake GPU", "20 timed", "pruned", "first 20 candidates measured", "rank", "1       1.0005", "m=128 n=112 stages=2 threads=256"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"device: Fake GPU", "\rmeasuring [", "saved "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%q", want, stderr)
		}
	}
	if f.ran != 20 {
		t.Errorf("%d configs run, want 20 (--max)", f.ran)
	}
	entries, _ := filepath.Glob(filepath.Join(os.Getenv("TILEGO_CACHE"), "tune", "flash-attention", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v", entries)
	}

	// run's lookup finds it for this shape and this GPU only.
	e, _ := kernels.Lookup("flash-attention")
	p, _ := e.Problem(map[string]string{"heads": "2", "seq-q": "4096", "dim": "64"})
	cfg, from := lookupTuned(autotune.DefaultCache(), p, f.Target(), ir.DefaultLimits)
	if from != "tuned (cache)" || cfg != (kernels.AttnConfig{M: 128, N: 112, Stages: 2, Threads: 256}) {
		t.Errorf("lookup: %+v %q", cfg, from)
	}
	other := f.Target()
	other.GPU = "Another GPU"
	if cfg, from := lookupTuned(autotune.DefaultCache(), p, other, ir.DefaultLimits); cfg != nil || from != "" {
		t.Errorf("another GPU: %+v %q", cfg, from)
	}
	q, _ := e.Problem(map[string]string{"heads": "2", "seq-q": "8192", "dim": "64"})
	if cfg, _ := lookupTuned(autotune.DefaultCache(), q, f.Target(), ir.DefaultLimits); cfg != nil {
		t.Errorf("another shape: %+v", cfg)
	}
	// An entry timed with other code is stale: run says so and uses the default.
	b, _ := os.ReadFile(entries[0])
	var ent autotune.Entry
	json.Unmarshal(b, &ent)
	os.WriteFile(entries[0], []byte(strings.Replace(string(b), ent.Source, "0000", 1)), 0o644)
	if cfg, from := lookupTuned(autotune.DefaultCache(), p, f.Target(), ir.DefaultLimits); cfg != nil || !strings.Contains(from, "changed; run tilego tune again") {
		t.Errorf("stale: %+v %q", cfg, from)
	}

	// --json prints the entry; --save=false leaves the cache alone.
	os.Remove(entries[0])
	out, _ = tilegoOut(t, 0, append([]string{"tune", "flash-attention", "--max", "3", "--json", "--save=false"}, shape...)...)
	var got autotune.Entry
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.ConfigText == "" || got.Key.GPU != "Fake GPU (sm_90a, 1 SMs)" {
		t.Errorf("%v: %s", err, out)
	}
	if entries, _ := filepath.Glob(filepath.Join(os.Getenv("TILEGO_CACHE"), "tune", "*", "*.json")); len(entries) != 0 {
		t.Errorf("--save=false saved %v", entries)
	}
}

func TestTuneErrors(t *testing.T) {
	withFakeGPU(t)
	cases := []struct {
		code int
		want string
		args []string
	}{
		{2, "--flush: unknown flush", []string{"tune", "gemm", "--flush", "l3"}},
		{2, "--repeats 0: must be at least 1", []string{"tune", "gemm", "--repeats", "0"}},
		{2, "cannot be negative", []string{"tune", "gemm", "--budget", "-1s"}},
		{2, "--budget soon: not a duration (such as 90s or 5m)", []string{"tune", "gemm", "--budget", "soon"}},
		{1, "no config passed", []string{"tune", "gemm", "--dtype", "f8e4m3"}},
	}
	for _, c := range cases {
		_, stderr := tilegoOut(t, c.code, c.args...)
		if !strings.Contains(stderr, c.want) {
			t.Errorf("tilego %s: stderr %q, want %q", strings.Join(c.args, " "), stderr, c.want)
		}
	}
	out, _ := tilegoOut(t, 0, "help", "tune")
	for _, want := range []string{"--budget D", "--max N", "--progress", "--flush auto|l2|rotate|none", "tuning cache"} {
		if !strings.Contains(out, want) {
			t.Errorf("help tune lacks %q:\n%s", want, out)
		}
	}
	if out, _ := tilegoOut(t, 0, "tune", "gemm", "--help"); !strings.Contains(out, "--trans-b") || !strings.Contains(out, "--patience N") {
		t.Errorf("tune gemm --help:\n%s", out)
	}
}

// Without a GPU, run uses the interpreter's config and says it is the default.
func TestRunConfigSource(t *testing.T) {
	out, _ := tilegoOut(t, 0, "run", "gemm", "--backend", "cpu", "--m", "32", "--n", "16", "--k", "16")
	if !strings.Contains(out, "  config   default: bm=32 bn=16") {
		t.Errorf("output:\n%s", out)
	}
	out, _ = tilegoOut(t, 0, "run", "gemm", "--backend", "cpu", "--m", "32", "--n", "16", "--k", "16", "--json")
	if !strings.Contains(out, `"config_source":"default"`) {
		t.Errorf("json: %s", out)
	}
}

// bench --chart draws one SVG per suite.
func TestWriteCharts(t *testing.T) {
	dir := "../../docs/bench/2026-11-22-h200"
	recs, err := chart.ReadFiles(dir+"/tilego.jsonl", dir+"/peers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.svg")
	paths, err := writeCharts(path, recs, []string{"fa-sweep", "fa-short", "extra", "gemm"}, "NVIDIA H200", "2026-11-22")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{path, strings.TrimSuffix(path, ".svg") + "-extra.svg", strings.TrimSuffix(path, ".svg") + "-gemm.svg"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths %v, want %v", paths, want)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "FlashAttention forward on NVIDIA H200, 2026-11-22 (fa-sweep)") {
		t.Errorf("%.400s", b)
	}
	if _, err := writeCharts(path, nil, []string{"gemm"}, "", ""); err == nil {
		t.Error("no records, no error")
	}
	_, stderr := tilegoOut(t, 1, "bench", "--chart", path)
	if !strings.Contains(stderr, "bench needs a GPU") {
		t.Errorf("bench --chart without a GPU: %q", stderr)
	}
	_, stderr = tilegoOut(t, 1, "bench", "--flush", "l3")
	if !strings.Contains(stderr, "--flush: unknown flush") {
		t.Errorf("bench --flush l3: %q", stderr)
	}
}

// The tuner measures first what run takes untuned on the target's
// architecture, so its winner is never slower than that; the generic GPU
// config follows where it differs.
func TestSeedsFor(t *testing.T) {
	e, _ := kernels.Lookup("flash-attention")
	p, err := e.Problem(map[string]string{"dim": "128", "seq-q": "512", "batch": "32", "heads": "16"})
	if err != nil {
		t.Fatal(err)
	}
	hopper, ampere := seedsFor(p, "sm_90a"), seedsFor(p, "sm_80")
	if hopper[0] != kernels.GPUConfigFor(p, "sm_90a") || hopper[1] != p.GPUConfig() || !hopper[0].(kernels.AttnConfig).Persistent {
		t.Errorf("sm_90a seeds start %v, %v; want the persistent default, then GPUConfig", hopper[0], hopper[1])
	}
	if ampere[0] != p.GPUConfig() || len(ampere) != len(hopper)-1 {
		t.Errorf("sm_80 seeds start %v (%d seeds, %d on sm_90a); want GPUConfig once", ampere[0], len(ampere), len(hopper))
	}
	// Up to 2k tokens the benchmark's short-sequence configs (the Direct
	// walks among them) are seeds too; at 4k they are not.
	long, err := e.Problem(map[string]string{"dim": "128", "seq-q": "4096", "batch": "4", "heads": "16"})
	if err != nil {
		t.Fatal(err)
	}
	direct := func(cs []kernels.Config) int {
		n := 0
		for _, c := range cs {
			if a := c.(kernels.AttnConfig); a.Direct && a.Persistent {
				n++
			}
		}
		return n
	}
	if n, m := direct(hopper), direct(seedsFor(long, "sm_90a")); n == 0 || m != 0 {
		t.Errorf("persistent Direct seeds: %d at 512 tokens, %d at 4k; want some, then none", n, m)
	}
}
