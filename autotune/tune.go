// Package autotune finds the fastest correct config of a kernel for one
// shape on one GPU and remembers it.
//
// Tune prunes a config space (Reject: configs the problem calls unfit,
// that the compiler refuses or plans over the architecture's shared
// memory, or that the register estimate says spill; see Space), then
// compiles what is left in parallel, a batch at a time, and measures the candidates in order: each runs once on random inputs with poisoned
// outputs and is checked against float64 (a wrong or failing config is
// reported and never chosen), and the survivors are timed. It stops when
// the space is exhausted, the time budget is spent, or a number of
// candidates in a row fail to beat the best by more than a margin. The
// winner goes to an on-disk cache keyed by the kernel, the shape, the GPU,
// the compiler and the code generator; Lookup reads it back without
// compiling anything or touching the GPU.
//
// The device is behind the Runner interface: CUDA runs on a GPU, and the
// tests drive the tuner's logic with a fake.
package autotune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/kernels"
)

// Target names a device and toolchain: results tuned on one apply to it
// alone.
type Target struct {
	GPU      string `json:"gpu"`      // the device as cuda.Backend.Device names it
	Arch     string `json:"arch"`     // the architecture compiled for: sm_90a
	Compiler string `json:"compiler"` // the NVRTC version: nvrtc-12.8
	Codegen  string `json:"codegen"`  // CodegenVersion(Arch)
}

// ErrDeviceLost is wrapped by a Runner's error when a candidate's fault
// left the device unusable to this process: the search stops there.
var ErrDeviceLost = errors.New("device lost")

// Runner is what the tuner needs from a device.
type Runner interface {
	// Target is the device and toolchain, for the cache key.
	Target() Target
	// Compile builds and compiles every config (in parallel); errs[i] is
	// why cs[i] cannot run (a build, code generation or NVRTC error, or
	// ctx's error for those it had no time for).
	Compile(ctx context.Context, p kernels.Problem, cs []kernels.Config) (errs []error)
	// Run runs a compiled config once on random inputs (seeded) with
	// poisoned outputs and checks it against float64; when the check
	// passes it times it. An error means it could not run.
	Run(ctx context.Context, p kernels.Problem, c kernels.Config, seed uint64) (Measurement, error)
}

// Measurement is what Runner.Run found.
type Measurement struct {
	Report     kernels.Report // the check against float64
	Time       bench.Stats    // zero when the check failed
	Regs       int            // registers per thread
	LocalBytes int            // local memory per thread (spills)
	Source     string         // fingerprint of the compiled source
}

// Status is what became of a candidate.
type Status string

const (
	Pruned  Status = "pruned"  // rejected before compiling (Reject)
	Failed  Status = "failed"  // did not build, compile or run
	Wrong   Status = "wrong"   // ran, but its result is beyond tolerance
	Timed   Status = "timed"   // correct and timed
	Skipped Status = "skipped" // not measured: budget, early stop or --max
)

// Candidate is one config and what became of it.
type Candidate struct {
	Config kernels.Config
	Status Status
	Reason string // why it was pruned, failed, wrong or skipped
	Time   bench.Stats
	TFLOPs float64
	Regs   int
	Local  int
	Source string
}

// Options control a tuning run.
type Options struct {
	// Budget bounds the whole run, compilation included; 0 for none. When
	// it runs out the best so far wins.
	Budget time.Duration
	// Max is how many candidates to compile and measure at most (the
	// first ones in order); 0 for all.
	Max int
	// Patience stops the run after this many measured candidates in a row
	// fail to beat the best by more than MinGain; 0 never stops early.
	Patience int
	// MinGain is the relative improvement that counts as beating the best
	// (0 means 1%).
	MinGain float64
	// Batch is how many candidates are compiled at a time, in order,
	// before they are measured (0 means 32), so that an early stop or a
	// spent budget also saves their compilation.
	Batch int
	// Seeds are tried first, in order (the problem's GPU config, configs
	// known to be good); the space follows, without repeats.
	Seeds []kernels.Config
	// Reject prunes configs before compiling; nil uses Reject on the
	// runner's architecture.
	Reject func(kernels.Config) string
	// Seed of the random inputs and the checked sample.
	Seed uint64
	// Progress receives a one-line progress bar redrawn with \r; nil for
	// none.
	Progress io.Writer
}

// Result is a tuning run's outcome.
type Result struct {
	Kernel     string
	Shape      kernels.Fields
	Target     Target
	Candidates []*Candidate // seeds first, then the space, without repeats
	Best       *Candidate   // the fastest correct candidate; nil when none passed
	Stop       string       // why measuring stopped
	Elapsed    time.Duration
	// CompileWait is the part of Elapsed spent waiting for compiles that
	// measuring could not hide.
	CompileWait time.Duration

	problem kernels.Problem
	seeds   int // how many of Candidates were seeds
}

// Count is how many candidates ended with status s.
func (r *Result) Count(s Status) int {
	n := 0
	for _, c := range r.Candidates {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Default is the first seed (the problem's GPU config, as the tuning
// commands pass it) when it was timed, else nil.
func (r *Result) Default() *Candidate {
	if len(r.Candidates) == 0 || r.Candidates[0].Status != Timed || r.seeds == 0 {
		return nil
	}
	return r.Candidates[0]
}

// Top is the n fastest correct candidates, fastest first.
func (r *Result) Top(n int) []*Candidate {
	var ts []*Candidate
	for _, c := range r.Candidates {
		if c.Status == Timed {
			ts = append(ts, c)
		}
	}
	slices.SortStableFunc(ts, func(a, b *Candidate) int { return cmp.Compare(a.Time.Median, b.Time.Median) })
	return ts[:min(n, len(ts))]
}

func configKey(c kernels.Config) string { return fmt.Sprintf("%T%+v", c, c) }

// Tune measures the configs of space (after opts.Seeds) for p through r
// and returns every candidate's outcome and the fastest correct one. It
// returns an error, with the Result, when no candidate passed.
func Tune(ctx context.Context, r Runner, p kernels.Problem, space []kernels.Config, o Options) (*Result, error) {
	start := time.Now()
	if o.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Budget)
		defer cancel()
	}
	t := r.Target()
	reject := o.Reject
	if reject == nil {
		reject = func(c kernels.Config) string { return Reject(p, c, t.Arch) }
	}
	minGain := o.MinGain
	if minGain <= 0 {
		minGain = 0.01
	}
	res := &Result{Kernel: p.Kernel(), Shape: p.Shape(), Target: t, problem: p, seeds: len(o.Seeds)}

	// Order, dedupe, prune, cap.
	seen := map[string]bool{}
	var todo []*Candidate
	for _, c := range append(slices.Clone(o.Seeds), space...) {
		k := configKey(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		cd := &Candidate{Config: c}
		res.Candidates = append(res.Candidates, cd)
		if why := reject(c); why != "" {
			cd.Status, cd.Reason = Pruned, why
			continue
		}
		todo = append(todo, cd)
	}
	if o.Max > 0 && len(todo) > o.Max {
		for _, cd := range todo[o.Max:] {
			cd.Status, cd.Reason = Skipped, fmt.Sprintf("beyond the first %d (max)", o.Max)
		}
		todo = todo[:o.Max]
	}

	bar := newProgress(o.Progress, len(todo), o.Budget, start)
	batch := o.Batch
	if batch <= 0 {
		batch = 32
	}
	var best *Candidate
	sinceGain := 0
	// Chunk k+1 compiles (on the CPU) while chunk k is measured (on the GPU).
	compile := func(chunk []*Candidate) {
		cfgs := make([]kernels.Config, len(chunk))
		for i, cd := range chunk {
			cfgs[i] = cd.Config
		}
		errs := r.Compile(ctx, p, cfgs)
		for i, cd := range chunk {
			if i < len(errs) && errs[i] != nil {
				if isCtxErr(errs[i]) {
					cd.Status, cd.Reason = Skipped, stopReason(errs[i], o.Budget)
				} else {
					cd.Status, cd.Reason = Failed, errs[i].Error()
				}
			}
		}
	}
	var compiled chan struct{} // closed when the chunk at `at` has compiled
	startCompile := func(at int) {
		compiled = make(chan struct{})
		if at >= len(todo) {
			close(compiled)
			return
		}
		done := compiled
		go func() {
			defer close(done)
			compile(todo[at:min(at+batch, len(todo))])
		}()
	}
	startCompile(0)
	defer func() { <-compiled }() // never leave a compile running past the result
	for at := 0; at < len(todo); at += batch {
		chunk := todo[at:min(at+batch, len(todo))]
		if res.Stop == "" && ctx.Err() != nil {
			res.Stop = stopReason(ctx.Err(), o.Budget)
		}
		if res.Stop != "" {
			<-compiled
			for _, cd := range todo[at:] {
				cd.Status, cd.Reason = Skipped, res.Stop
			}
			break
		}
		bar.draw("compiling", at, best)
		t0 := time.Now()
		<-compiled
		res.CompileWait += time.Since(t0)
		startCompile(at + batch)
		for j, cd := range chunk {
			if cd.Status != "" {
				bar.draw("measuring", at+j+1, best)
				continue
			}
			if res.Stop == "" && ctx.Err() != nil {
				res.Stop = stopReason(ctx.Err(), o.Budget)
			}
			if res.Stop != "" {
				cd.Status, cd.Reason = Skipped, res.Stop
				continue
			}
			m, err := r.Run(ctx, p, cd.Config, o.Seed)
			cd.Regs, cd.Local, cd.Source = m.Regs, m.LocalBytes, m.Source
			switch {
			case err != nil && isCtxErr(err):
				cd.Status, cd.Reason = Skipped, stopReason(err, o.Budget)
			case err != nil:
				cd.Status, cd.Reason = Failed, err.Error()
				if errors.Is(err, ErrDeviceLost) {
					res.Stop = fmt.Sprintf("the device faulted on %s, and nothing more can run in this process; the best so far stands", kernels.ConfigFields(cd.Config))
				}
			case !m.Report.OK():
				cd.Status, cd.Reason = Wrong, m.Report.String()
			case m.Time.Median <= 0:
				cd.Status, cd.Reason = Failed, "timing measured nothing"
			default:
				cd.Status, cd.Time = Timed, m.Time
				cd.TFLOPs, _ = bench.Rates(p, m.Time.MS())
			}
			gained := false
			if cd.Status == Timed && (best == nil || cd.Time.Median < best.Time.Median) {
				gained = best == nil || float64(cd.Time.Median) < float64(best.Time.Median)*(1-minGain)
				best = cd
			}
			if gained {
				sinceGain = 0
			} else if best != nil && cd.Status != Skipped {
				sinceGain++
			}
			if o.Patience > 0 && sinceGain >= o.Patience {
				res.Stop = fmt.Sprintf("early stop: %d candidates in a row did not beat the best by more than %g%%", sinceGain, minGain*100)
			}
			bar.draw("measuring", at+j+1, best)
		}
	}
	if res.Stop == "" {
		res.Stop = "every candidate measured"
		if o.Max > 0 && res.Count(Skipped) > 0 {
			res.Stop = fmt.Sprintf("the first %d candidates measured (max)", o.Max)
		}
	}
	bar.finish()
	res.Best = best
	res.Elapsed = time.Since(start)
	if best == nil {
		return res, fmt.Errorf("%s: no config passed (%s; %s)", p.Kernel(), res.counts(), res.Stop)
	}
	return res, nil
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func stopReason(err error, budget time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) && budget > 0 {
		return fmt.Sprintf("the %v budget is spent", budget)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline passed"
	}
	return "canceled"
}

// counts lists how many candidates ended in each status.
func (r *Result) counts() string {
	return fmt.Sprintf("%d candidates: %d timed, %d pruned, %d failed, %d wrong, %d skipped",
		len(r.Candidates), r.Count(Timed), r.Count(Pruned), r.Count(Failed), r.Count(Wrong), r.Count(Skipped))
}
