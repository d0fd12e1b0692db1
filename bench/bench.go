// Package bench times the library's kernels on the GPU over the sweeps the
// docs report, checking every result against float64 before timing it.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/target"
	"github.com/tilego/tilego/target/cuda"
	"github.com/tilego/tilego/tensor"
)

// Point is one benchmark: a suite name, a problem and the configs to try.
type Point struct {
	Suite   string
	Problem kernels.Problem
	Configs []kernels.Config
}

// Result is one point's best config, as a JSON line.
type Result struct {
	Suite   string             `json:"suite"`
	Kernel  string             `json:"kernel"`
	Impl    string             `json:"impl"`
	Shape   kernels.Fields     `json:"shape"`
	Config  kernels.Fields     `json:"config,omitempty"`
	MS      float64            `json:"ms"`
	TFLOPs  float64            `json:"tflops"`
	Spread  float64            `json:"spread_ms,omitempty"` // max - min of the timed launches
	GBps    float64            `json:"gbps,omitempty"`      // when the problem declares its bytes
	Flush   string             `json:"flush,omitempty"`     // how the timing kept L2 cold: l2, rotate, none
	Check   map[string]any     `json:"check,omitempty"`
	Regs    int                `json:"regs,omitempty"`
	Local   int                `json:"local_bytes"`
	Tried   []map[string]any   `json:"tried,omitempty"`
	Error   string             `json:"error,omitempty"`
	Errors  map[string]float64 `json:"-"`
	elapsed time.Duration
}

// Options control timing.
type Options struct {
	Warmup, Repeats int
	Seed            uint64
	Logf            func(format string, args ...any) // progress; nil for none
	// Flush keeps the L2 cache from holding the inputs between timed
	// launches; the zero value, FlushAuto, flushes small problems only.
	Flush Flush
}

// Log reports progress through Logf.
func (o Options) Log(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// candidate is one config of one point, built and compiled.
type candidate struct {
	cfg  kernels.Config
	prog *cuda.Program
	err  error
}

// RunSuite builds every config of every point, compiles them all in
// parallel (NVRTC dominates otherwise), then runs the points in order and
// hands each result to emit.
func RunSuite(b *cuda.Backend, points []Point, o Options, emit func(Result)) {
	cands := make([][]candidate, len(points))
	var progs []*cuda.Program
	for i, p := range points {
		for _, c := range p.Configs {
			cd := candidate{cfg: c}
			f, err := kernels.Build(p.Problem, c, b.Limits())
			if err == nil {
				cd.prog, err = cuda.Compile(f, cuda.Options{Arch: b.Arch()})
			}
			cd.err = err
			if cd.prog != nil {
				progs = append(progs, cd.prog)
			}
			cands[i] = append(cands[i], cd)
		}
	}
	t0 := time.Now()
	b.Precompile(progs)
	o.Log("compiled %d kernels in %.1fs", len(progs), time.Since(t0).Seconds())
	for i, p := range points {
		emit(run(b, p, cands[i], o))
	}
}

// run times every config of p and keeps the fastest that computes the
// right answer; configs that fail to build or compute a wrong answer are
// reported in Tried and never chosen.
func run(b *cuda.Backend, p Point, cands []candidate, o Options) Result {
	r := Result{Suite: p.Suite, Kernel: p.Problem.Kernel(), Impl: "tilego", Shape: p.Problem.Shape()}
	args := p.Problem.Inputs(o.Seed)
	for _, cd := range cands {
		try := map[string]any{"config": kernels.ConfigFields(cd.cfg)}
		var (
			st    Stats
			check kernels.Report
			info  cudaInfo
			err   = cd.err
		)
		if err == nil {
			st, check, info, err = runOne(b, p.Problem, cd.prog, args, o)
		}
		ms := st.MS()
		if err != nil {
			try["error"] = err.Error()
		} else {
			try["ms"] = ms
			try["spread_ms"] = st.Spread.Seconds() * 1e3
			try["regs"] = info.NumRegs
			try["local_bytes"] = info.LocalBytes
			try["ok"] = check.OK()
			if check.OK() && (r.MS == 0 || ms < r.MS) {
				r.MS, r.Config, r.Regs, r.Local = ms, kernels.ConfigFields(cd.cfg), info.NumRegs, info.LocalBytes
				r.Spread, r.Flush = st.Spread.Seconds()*1e3, st.Flush.String()
				r.Check = map[string]any{"ok": true, "checked": check.Checked}
				for k, v := range check.Errors() {
					r.Check[k] = v
				}
			}
			if !check.OK() {
				try["check"] = check.String()
			}
		}
		r.Tried = append(r.Tried, try)
	}
	if r.MS == 0 {
		r.Error = "no config built and passed its check"
		return r
	}
	r.TFLOPs, r.GBps = Rates(p.Problem, r.MS)
	return r
}

// Rates are TFLOP/s and, when p declares the bytes it moves (Byter), GB/s
// at ms milliseconds per run.
func Rates(p kernels.Problem, ms float64) (tflops, gbps float64) {
	if ms <= 0 {
		return 0, 0
	}
	tflops = p.FLOPs() / (ms * 1e-3) / 1e12
	if b, ok := p.(Byter); ok {
		gbps = b.Bytes() / (ms * 1e-3) / 1e9
	}
	return tflops, gbps
}

// Byter is a problem that declares how many bytes an ideal kernel moves
// (each input read once, each output written once), for GB/s.
type Byter interface{ Bytes() float64 }

func runOne(b *cuda.Backend, p kernels.Problem, prog *cuda.Program, args []*tensor.Tensor, o Options) (Stats, kernels.Report, cudaInfo, error) {
	l, err := cuda.Prepare(b, prog, args)
	if err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	defer l.Free()
	info, err := l.Info()
	if err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	// Correctness first: poisoned outputs, one launch, checked.
	if err := l.Poison(); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	if err := l.Once(); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	if err := l.Download(args); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	check := p.Check(args, o.Seed)
	st, err := Time(b, prog, l, args, o)
	if err != nil {
		return Stats{}, check, cudaInfo{}, err
	}
	return st, check, cudaInfo{NumRegs: info.NumRegs, LocalBytes: info.LocalBytes}, nil
}

// Time times prog, bound to args by l, as o says: o.Warmup launches, then
// the median of o.Repeats. With no flush this is l.Time; with one, every
// launch is timed alone by events around the kernel, after a memset of a
// FlushBytes buffer (l2) or on the next of several device copies of the
// inputs (rotate).
func Time(b *cuda.Backend, prog *cuda.Program, l *cuda.Launch, args []*tensor.Tensor, o Options) (Stats, error) {
	in := InputBytes(prog.Func, args)
	f := o.Flush.Resolve(in, b.L2Bytes())
	switch f {
	case FlushNone:
		res, err := l.Time(target.RunOptions{Warmup: o.Warmup, Repeats: o.Repeats})
		if err != nil {
			return Stats{}, err
		}
		return Stats{Median: res.Time, Spread: res.Spread, N: res.Repeats, Flush: f}, nil
	case FlushL2:
		ts, err := b.TimeEach([]*cuda.Launch{l}, o.Warmup, max(o.Repeats, 1), FlushBytes(b.L2Bytes()))
		if err != nil {
			return Stats{}, err
		}
		return Summarize(ts, f), nil
	}
	ls := []*cuda.Launch{l}
	defer func() {
		for _, x := range ls[1:] {
			x.Free()
		}
	}()
	for range RotateCopies(in, b.L2Bytes()) - 1 {
		x, err := cuda.Prepare(b, prog, args)
		if err != nil {
			return Stats{}, err
		}
		ls = append(ls, x)
	}
	ts, err := b.TimeEach(ls, o.Warmup, max(o.Repeats, 1), 0)
	if err != nil {
		return Stats{}, err
	}
	return Summarize(ts, f), nil
}

type cudaInfo struct{ NumRegs, LocalBytes int }

// Write prints results as JSON lines.
func Write(w io.Writer, rs ...Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// Line is a one-line human summary of a result.
func (r Result) Line() string {
	if r.Error != "" {
		return fmt.Sprintf("%-10s %s: %s", r.Suite, r.Shape, r.Error)
	}
	bw := ""
	if r.GBps > 0 {
		bw = fmt.Sprintf(" %6.0f GB/s", r.GBps)
	}
	return fmt.Sprintf("%-10s %7.3f ms ±%.3f %7.1f TFLOP/s%s  regs %3d local %4d  %s  [%s]", r.Suite, r.MS, r.Spread/2, r.TFLOPs, bw, r.Regs, r.Local, r.Shape, r.Config)
}
