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
			ms    float64
			check kernels.Report
			info  cudaInfo
			err   = cd.err
		)
		if err == nil {
			ms, check, info, err = runOne(b, p.Problem, cd.prog, args, o)
		}
		if err != nil {
			try["error"] = err.Error()
		} else {
			try["ms"] = ms
			try["regs"] = info.NumRegs
			try["local_bytes"] = info.LocalBytes
			try["ok"] = check.OK()
			if check.OK() && (r.MS == 0 || ms < r.MS) {
				r.MS, r.Config, r.Regs, r.Local = ms, kernels.ConfigFields(cd.cfg), info.NumRegs, info.LocalBytes
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
	r.TFLOPs = p.Problem.FLOPs() / (r.MS * 1e-3) / 1e12
	return r
}

func runOne(b *cuda.Backend, p kernels.Problem, prog *cuda.Program, args []*tensor.Tensor, o Options) (float64, kernels.Report, cudaInfo, error) {
	l, err := cuda.Prepare(b, prog, args)
	if err != nil {
		return 0, kernels.Report{}, cudaInfo{}, err
	}
	defer l.Free()
	info, err := l.Info()
	if err != nil {
		return 0, kernels.Report{}, cudaInfo{}, err
	}
	// Correctness first: poisoned outputs, one launch, checked.
	if err := l.Poison(); err != nil {
		return 0, kernels.Report{}, cudaInfo{}, err
	}
	if err := l.Once(); err != nil {
		return 0, kernels.Report{}, cudaInfo{}, err
	}
	if err := l.Download(args); err != nil {
		return 0, kernels.Report{}, cudaInfo{}, err
	}
	check := p.Check(args, o.Seed)
	res, err := l.Time(target.RunOptions{Warmup: o.Warmup, Repeats: o.Repeats})
	if err != nil {
		return 0, check, cudaInfo{}, err
	}
	return float64(res.Time) / 1e6, check, cudaInfo{NumRegs: info.NumRegs, LocalBytes: info.LocalBytes}, nil
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
	return fmt.Sprintf("%-10s %7.3f ms %7.1f TFLOP/s  regs %3d local %4d  %s  [%s]", r.Suite, r.MS, r.TFLOPs, r.Regs, r.Local, r.Shape, r.Config)
}
