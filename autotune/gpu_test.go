//go:build gpu

package autotune

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// openGPU opens device 0; without one the tests skip, unless
// TILEGO_REQUIRE_GPU is set (as on the device machine), where they fail.
func openGPU(t *testing.T) *cuda.Backend {
	t.Helper()
	b, err := cuda.Open(0)
	if err != nil {
		if os.Getenv("TILEGO_REQUIRE_GPU") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return b
}

// The profiler's three ways of timing give sane, comparable numbers.
func TestGPUTimeFlush(t *testing.T) {
	b := openGPU(t)
	p := problem(t)
	fn, err := kernels.Build(p, p.GPUConfig(), b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: b.Arch()})
	if err != nil {
		t.Fatal(err)
	}
	args := p.Inputs(1)
	l, err := cuda.Prepare(b, prog, args)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Free()
	t.Logf("L2 %d MiB, inputs %d MiB", b.L2Bytes()>>20, bench.InputBytes(fn, args)>>20)
	for _, f := range []bench.Flush{bench.FlushNone, bench.FlushL2, bench.FlushRotate, bench.FlushAuto} {
		st, err := bench.Time(b, prog, l, args, bench.Options{Warmup: 3, Repeats: 20, Flush: f})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		t.Logf("%-6v -> %-6v median %.4f ms, spread %.4f ms over %d", f, st.Flush, st.MS(), st.Spread.Seconds()*1e3, st.N)
		if st.Median <= 0 || st.N != 20 || st.Flush == bench.FlushAuto || st.Spread < 0 {
			t.Errorf("%v: %+v", f, st)
		}
	}
	if err := l.Download(args); err != nil {
		t.Fatal(err)
	}
	if rep := p.Check(args, 1); !rep.OK() {
		t.Errorf("after timing: %s", rep)
	}
}

// A short real tuning run: a winner, nothing wrong, saved and found.
func TestGPUTune(t *testing.T) {
	b := openGPU(t)
	r, err := NewCUDA(b, bench.Options{Warmup: 3, Repeats: 10})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := kernels.Lookup("flash-attention")
	p, err := e.Problem(map[string]string{"batch": "8", "heads": "16", "seq-q": "1024", "dim": "128", "layout": "bshd", "causal": "true"})
	if err != nil {
		t.Fatal(err)
	}
	space := append(Space(p, b.Arch()), kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 256})
	res, err := Tune(context.Background(), r, p, space, Options{Budget: 90 * time.Second, Max: 16, Patience: 8,
		Seeds: []kernels.Config{p.GPUConfig()}, Seed: 1, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	res.WriteSummary(os.Stderr)
	if res.Count(Wrong) != 0 || res.Best == nil || res.Best.Source == "" || res.Best.Regs == 0 {
		t.Errorf("%s; best %+v", res.counts(), res.Best)
	}
	if res.Count(Pruned) < 1 {
		t.Error("the bad config was not pruned")
	}
	ent, err := res.Entry()
	if err != nil {
		t.Fatal(err)
	}
	c := Cache{Dir: t.TempDir()}
	if _, err := c.Save(ent); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	got, cfg, ok := c.Lookup(p, r.Target())
	if !ok || cfg != res.Best.Config || got.MS != res.Best.Time.MS() {
		t.Errorf("lookup: %v %+v %+v", ok, cfg, got)
	}
	t.Logf("lookup %v; target %+v", time.Since(t0), r.Target())
	// The winner's source is what a fresh compile gives (run checks this).
	fn, err := kernels.Build(p, cfg, ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: b.Arch()})
	if err != nil || prog.Fingerprint() != got.Source {
		t.Errorf("fingerprint: %v", err)
	}
}
