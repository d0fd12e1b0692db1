package autotune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/kernels"
)

// outcome is what the fake device does with one config.
type outcome struct {
	ms         float64 // time; 0 means the default
	wrong      bool    // the check fails
	compileErr error
	runErr     error
}

// fake is a Runner with scripted outcomes: no GPU.
type fake struct {
	target   Target
	outcomes map[kernels.Config]outcome
	defMS    float64
	delay    time.Duration // per Run

	mu       sync.Mutex
	compiled []kernels.Config
	ran      []kernels.Config
}

func newFake() *fake {
	return &fake{target: Target{GPU: "Fake H200 (sm_90a, 132 SMs)", Arch: "sm_90a", Compiler: "nvrtc-0.0", Codegen: "fakecodegen"},
		outcomes: map[kernels.Config]outcome{}, defMS: 1}
}

func (f *fake) Target() Target { return f.target }

func (f *fake) Compile(ctx context.Context, p kernels.Problem, cs []kernels.Config) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(cs))
	for i, c := range cs {
		f.compiled = append(f.compiled, c)
		errs[i] = f.outcomes[c].compileErr
	}
	return errs
}

func okReport(ok bool) kernels.Report {
	m := kernels.Measure{Name: "o", Tol: 1e-2}
	m.Diff.Add(1, 1)
	if !ok {
		m.Diff.Add(3, 1)
	}
	return kernels.Report{Measures: []kernels.Measure{m}, Checked: "all"}
}

func (f *fake) Run(ctx context.Context, p kernels.Problem, c kernels.Config, seed uint64) (Measurement, error) {
	f.mu.Lock()
	f.ran = append(f.ran, c)
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return Measurement{}, ctx.Err()
		}
	}
	o := f.outcomes[c]
	if o.runErr != nil {
		return Measurement{}, o.runErr
	}
	m := Measurement{Report: okReport(!o.wrong), Regs: 100, Source: fmt.Sprintf("src-%v", c)}
	if o.wrong {
		return m, nil
	}
	ms := o.ms
	if ms == 0 {
		ms = f.defMS
	}
	d := time.Duration(ms * 1e6)
	m.Time = bench.Stats{Median: d, Spread: d / 50, N: 10, Flush: bench.FlushL2}
	return m, nil
}

func problem(t testing.TB) kernels.Problem {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(map[string]string{"batch": "4", "heads": "32", "seq-q": "4096", "dim": "64", "layout": "bshd"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ac(m, n, st, th int) kernels.Config {
	return kernels.AttnConfig{M: m, N: n, Stages: st, Threads: th}
}

func statusOf(r *Result, c kernels.Config) *Candidate {
	for _, cd := range r.Candidates {
		if cd.Config == c {
			return cd
		}
	}
	return nil
}

// Wrong and failing configs are reported and never chosen, however fast;
// pruned ones are never compiled; the fastest correct one wins.
func TestTunePicksFastestCorrect(t *testing.T) {
	p := problem(t)
	f := newFake()
	a, b, c, d, e, g := ac(128, 128, 2, 256), ac(128, 64, 2, 256), ac(128, 96, 2, 256), ac(64, 64, 2, 128), ac(64, 64, 2, 256), ac(128, 80, 2, 256)
	f.outcomes[a] = outcome{ms: 0.5}
	f.outcomes[b] = outcome{ms: 0.1, wrong: true}
	f.outcomes[c] = outcome{compileErr: errors.New("gemm.go:75: gemm: boom")}
	f.outcomes[d] = outcome{runErr: errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")}
	f.outcomes[g] = outcome{ms: 0.4}
	res, err := Tune(context.Background(), f, p, []kernels.Config{a, b, c, d, e, g}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Best == nil || res.Best.Config != g {
		t.Fatalf("best %+v, want %+v", res.Best, g)
	}
	want := map[kernels.Config]Status{a: Timed, b: Wrong, c: Failed, d: Failed, e: Pruned, g: Timed}
	for cfg, s := range want {
		if cd := statusOf(res, cfg); cd == nil || cd.Status != s {
			t.Errorf("%+v: %+v, want %s", cfg, cd, s)
		}
	}
	if r := statusOf(res, c).Reason; !strings.Contains(r, "boom") {
		t.Errorf("compile failure reason %q", r)
	}
	if r := statusOf(res, b).Reason; !strings.Contains(r, "FAIL") {
		t.Errorf("wrong reason %q", r)
	}
	if r := statusOf(res, e).Reason; !strings.Contains(r, "cannot split") {
		t.Errorf("pruned reason %q", r)
	}
	for _, cfg := range f.compiled {
		if cfg == e {
			t.Error("a pruned config was compiled")
		}
	}
	if res.Count(Timed) != 2 || res.Count(Wrong) != 1 || res.Count(Failed) != 2 || res.Count(Pruned) != 1 {
		t.Errorf("counts: %s", res.counts())
	}
	wantTF := p.FLOPs() / 0.4e-3 / 1e12
	if d := res.Best.TFLOPs - wantTF; d > 1e-9 || d < -1e-9 {
		t.Errorf("TFLOP/s %v, want %v", res.Best.TFLOPs, wantTF)
	}
	if res.Stop != "every candidate measured" {
		t.Errorf("stop %q", res.Stop)
	}
	if top := res.Top(5); len(top) != 2 || top[0].Config != g || top[1].Config != a {
		t.Errorf("top %v", top)
	}
}

// Seeds come first, repeats are dropped, and the space follows in order.
func TestTuneOrder(t *testing.T) {
	p := problem(t)
	f := newFake()
	x, a, b, c := ac(128, 176, 2, 256), ac(128, 128, 2, 256), ac(128, 64, 2, 256), ac(64, 64, 2, 128)
	res, err := Tune(context.Background(), f, p, []kernels.Config{a, b, a, c}, Options{Seeds: []kernels.Config{x, b}})
	if err != nil {
		t.Fatal(err)
	}
	want := []kernels.Config{x, b, a, c}
	if fmt.Sprint(f.ran) != fmt.Sprint(want) {
		t.Errorf("ran %v, want %v", f.ran, want)
	}
	if len(res.Candidates) != 4 {
		t.Errorf("%d candidates", len(res.Candidates))
	}
	// With equal times the first stays the winner.
	if res.Best.Config != x {
		t.Errorf("best %+v", res.Best.Config)
	}
}

// Patience: stop after N measured candidates in a row fail to beat the
// best by more than 1%; a faster one within 1% still becomes the best.
func TestTuneEarlyStop(t *testing.T) {
	p := problem(t)
	f := newFake()
	cs := []kernels.Config{ac(128, 128, 2, 256), ac(128, 112, 2, 256), ac(128, 144, 2, 256), ac(128, 96, 2, 256), ac(128, 160, 2, 256), ac(128, 64, 2, 256)}
	f.outcomes[cs[0]] = outcome{ms: 1.0}
	f.outcomes[cs[1]] = outcome{ms: 0.995} // faster, but by less than 1%
	f.outcomes[cs[2]] = outcome{ms: 1.2}
	f.outcomes[cs[3]] = outcome{wrong: true, ms: 0.1}
	f.outcomes[cs[4]] = outcome{ms: 0.5} // never reached
	res, err := Tune(context.Background(), f, p, cs, Options{Patience: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 4 {
		t.Errorf("ran %d candidates, want 4", len(f.ran))
	}
	if res.Best.Config != cs[1] {
		t.Errorf("best %+v, want %+v (the fastest measured)", res.Best.Config, cs[1])
	}
	if !strings.HasPrefix(res.Stop, "early stop: 3 candidates") {
		t.Errorf("stop %q", res.Stop)
	}
	for _, c := range cs[4:] {
		if cd := statusOf(res, c); cd.Status != Skipped || !strings.Contains(cd.Reason, "early stop") {
			t.Errorf("%+v: %+v", c, cd)
		}
	}
	// Compiled in batches, one batch ahead of the measuring: an early stop
	// saves compiling the rest (6 configs; stopped after 4, with the third
	// batch compiled ahead).
	f3 := newFake()
	f3.outcomes = f.outcomes
	if _, err := Tune(context.Background(), f3, p, cs, Options{Patience: 3, Batch: 2}); err != nil || len(f3.compiled) != 6 || len(f3.ran) != 4 {
		t.Errorf("batches of 2: err %v, compiled %d, ran %d", err, len(f3.compiled), len(f3.ran))
	}
	// A bigger MinGain counts 0.995 as no gain either: still 4 run.
	f2 := newFake()
	f2.outcomes = f.outcomes
	res, _ = Tune(context.Background(), f2, p, cs, Options{Patience: 2, MinGain: 0.1})
	if len(f2.ran) != 3 || res.Best.Config != cs[1] {
		t.Errorf("MinGain 10%%: ran %d, best %+v", len(f2.ran), res.Best.Config)
	}
}

// The budget bounds the run; what was not measured is skipped and the
// best so far wins.
func TestTuneBudget(t *testing.T) {
	p := problem(t)
	f := newFake()
	f.delay = 30 * time.Millisecond
	space := Space(p, "sm_90a")[:20]
	t0 := time.Now()
	res, err := Tune(context.Background(), f, p, space, Options{Budget: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 400*time.Millisecond {
		t.Errorf("took %v with a 100ms budget", el)
	}
	if res.Count(Skipped) < 10 || res.Count(Timed) < 1 || res.Best == nil {
		t.Errorf("counts %s", res.counts())
	}
	if !strings.Contains(res.Stop, "budget is spent") {
		t.Errorf("stop %q", res.Stop)
	}
	// A budget spent while compiling skips everything: no winner, an error.
	g := &ctxCompiler{fake: newFake()}
	res, err = Tune(context.Background(), g, p, space[:3], Options{Budget: time.Millisecond})
	if err == nil || res.Count(Skipped) != 3 || !strings.Contains(err.Error(), "no config passed") {
		t.Errorf("err %v, counts %s", err, res.counts())
	}
}

// ctxCompiler compiles nothing before its context ends.
type ctxCompiler struct{ *fake }

func (c *ctxCompiler) Compile(ctx context.Context, p kernels.Problem, cs []kernels.Config) []error {
	<-ctx.Done()
	errs := make([]error, len(cs))
	for i := range errs {
		errs[i] = ctx.Err()
	}
	return errs
}

func TestTuneMaxAndCancel(t *testing.T) {
	p := problem(t)
	f := newFake()
	space := append([]kernels.Config{ac(64, 64, 2, 256)}, Space(p, "sm_90a")[:10]...) // a pruned one first
	res, err := Tune(context.Background(), f, p, space, Options{Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 3 || len(f.compiled) != 3 || res.Count(Skipped) != 7 || res.Count(Pruned) != 1 {
		t.Errorf("ran %d, compiled %d, %s", len(f.ran), len(f.compiled), res.counts())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = Tune(ctx, newFake(), p, space, Options{})
	if err == nil || res.Stop != "canceled" {
		t.Errorf("canceled: err %v, stop %q", err, res.Stop)
	}
}

func TestTuneNoWinner(t *testing.T) {
	p := problem(t)
	f := newFake()
	cs := []kernels.Config{ac(128, 128, 2, 256), ac(128, 64, 2, 256)}
	f.outcomes[cs[0]] = outcome{wrong: true}
	f.outcomes[cs[1]] = outcome{runErr: errors.New("launch failed")}
	res, err := Tune(context.Background(), f, p, cs, Options{})
	if err == nil || !strings.Contains(err.Error(), "no config passed (2 candidates: 0 timed, 0 pruned, 1 failed, 1 wrong") {
		t.Errorf("err %v", err)
	}
	if res == nil || res.Best != nil {
		t.Fatalf("result %+v", res)
	}
	if _, err := res.Entry(); err == nil {
		t.Error("an entry without a winner")
	}
	// A custom Reject prunes everything.
	_, err = Tune(context.Background(), f, p, cs, Options{Reject: func(kernels.Config) string { return "no" }})
	if err == nil || !strings.Contains(err.Error(), "2 pruned") {
		t.Errorf("err %v", err)
	}
}

func TestProgressAndSummary(t *testing.T) {
	p := problem(t)
	f := newFake()
	space := Space(p, "sm_90a")[:8]
	for i, c := range space {
		f.outcomes[c] = outcome{ms: 1 + float64(i)/10}
	}
	f.outcomes[space[6]] = outcome{wrong: true}
	f.outcomes[space[7]] = outcome{compileErr: errors.New("line one\nline two\nk.cu(12): error: too many registers\nline four")}
	var prog bytes.Buffer
	res, err := Tune(context.Background(), f, p, append(space, kernels.GemmConfig{}), Options{Progress: &prog, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := prog.String()
	if !strings.HasPrefix(out, "\rcompiling [") || strings.Count(out, "\r") < 8 || !strings.HasSuffix(out, "\n") ||
		!strings.Contains(out, "8/8") || !strings.Contains(out, "of 1m0s") || !strings.Contains(out, "best 1.000 ms m=128 n=128") {
		t.Errorf("progress:\n%q", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\r") {
		if len(line) > 130 {
			t.Errorf("progress line of %d characters", len(line))
		}
	}
	var sum bytes.Buffer
	res.WriteSummary(&sum)
	s := sum.String()
	for _, want := range []string{"tuned flash-attention", "Fake H200", "9 candidates: 6 timed, 1 pruned, 1 failed, 1 wrong, 0 skipped",
		"stopped: every candidate measured", "rank", "1       1.0000", "wrong:", "failed:", "line one ... k.cu(12): error: too many registers\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "m=128"); n < 5 {
		t.Errorf("summary shows %d configs:\n%s", n, s)
	}
	if strings.Contains(s, "\n  6 ") {
		t.Errorf("more than 5 ranked:\n%s", s)
	}
	if cd := statusOf(res, kernels.GemmConfig{}); cd == nil || cd.Status != Pruned || !strings.Contains(cd.Reason, "want kernels.AttnConfig") {
		t.Errorf("a config of the wrong type: %+v", cd)
	}
}

// The summary puts the default (the first seed) next to the winner.
func TestSummaryDefault(t *testing.T) {
	p := problem(t)
	f := newFake()
	space := Space(p, "sm_90a")[:3]
	for i, c := range space {
		f.outcomes[c] = outcome{ms: 2 - float64(i)/2} // the last is fastest
	}
	res, err := Tune(context.Background(), f, p, space[1:], Options{Seeds: space[:1]})
	if err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	res.WriteSummary(&sum)
	want := fmt.Sprintf("default %s: 2.0000 ms; best 1.0000 ms (2.00x)", kernels.ConfigFields(space[0]))
	if !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
	// With no seeds there is no default to show.
	res, err = Tune(context.Background(), f, p, space, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Default() != nil {
		t.Errorf("default %+v without seeds", res.Default())
	}
}

// A fault that loses the device stops the search; the best so far wins.
func TestDeviceLostStops(t *testing.T) {
	p := problem(t)
	f := newFake()
	space := Space(p, "sm_90a")[:6]
	for i, c := range space {
		f.outcomes[c] = outcome{ms: 1 + float64(i)}
	}
	f.outcomes[space[2]] = outcome{runErr: fmt.Errorf("%w: illegal address", ErrDeviceLost)}
	res, err := Tune(context.Background(), f, p, space, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 3 || res.Best == nil || res.Best.Config != space[0] {
		t.Errorf("ran %d; best %+v", len(f.ran), res.Best)
	}
	if res.Count(Failed) != 1 || res.Count(Skipped) != 3 || !strings.Contains(res.Stop, "the device faulted") {
		t.Errorf("%s; stop %q", res.counts(), res.Stop)
	}
}

func TestBrief(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"wrong: O rel 0.5", "wrong: O rel 0.5"},
		{"nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)\nlog:\nk.cu(3): warning: x\nk.cu(9): Error: y\nz", "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6) ... k.cu(9): Error: y"},
		{"first\nsecond", "first ..."},
	} {
		if got := brief(tc.in); got != tc.want {
			t.Errorf("brief(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
