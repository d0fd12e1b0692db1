// Package bench times the library's kernels on the GPU over the sweeps the
// docs report, checking every result against float64 before timing it.
package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// Point is one benchmark: a suite name, a problem and the configs to try.
// A problem that implements kernels.Chain runs as its Steps (several
// programs over the one list of tensors Inputs makes, timed from the first
// program's start to the last one's end); any other as its Program.
type Point struct {
	Suite   string
	Impl    string // the result's impl; "" is "tilego"
	Problem kernels.Problem
	Configs []kernels.Config
	// SameInputs: run on the inputs of the point before it instead of
	// making new ones. That point's Inputs must serve this Problem: a
	// Chain takes its tensors by index, so a split path's list (the
	// single program's, then the partials) serves the single program too.
	SameInputs bool
}

// Result is one point's best config, as a JSON line.
type Result struct {
	Suite    string             `json:"suite"`
	Kernel   string             `json:"kernel"`
	Impl     string             `json:"impl"`
	Shape    kernels.Fields     `json:"shape"`
	Config   kernels.Fields     `json:"config,omitempty"`
	Steps    int                `json:"steps,omitempty"`  // programs per run: 2 for a split kernel and its combine
	Splits   int                `json:"splits,omitempty"` // KV splits, for problems that have them (1: the single program)
	MS       float64            `json:"ms"`
	TFLOPs   float64            `json:"tflops"`
	Spread   float64            `json:"spread_ms,omitempty"` // max - min of the timed launches
	Times    []float64          `json:"times_ms,omitempty"`  // the timed launches in launch order (flushed or rotated timing)
	GBps     float64            `json:"gbps,omitempty"`      // when the problem declares its bytes
	Flush    string             `json:"flush,omitempty"`     // how the timing kept L2 cold: l2, rotate, none
	TMA      bool               `json:"tma,omitempty"`       // the fastest config's loads went by TMA (sm_90a; TILEGO_TMA=0 turns it off)
	Producer bool               `json:"producer,omitempty"`  // ... and a producer warpgroup issued them (warp specialization)
	PingPong bool               `json:"pingpong,omitempty"`  // ... and the consumer warpgroups took turns at the tensor cores
	Check    map[string]any     `json:"check,omitempty"`
	Regs     int                `json:"regs,omitempty"` // the most of any step
	Local    int                `json:"local_bytes"`
	Tried    []map[string]any   `json:"tried,omitempty"`
	Error    string             `json:"error,omitempty"`
	Errors   map[string]float64 `json:"-"`
	lost     error              // a kernel faulted or hung and took the CUDA context with it
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

// Programs builds p's programs for c against lim: a Chain's steps and the
// indices of their tensors in Inputs' list, or a plain problem's one
// program (idx nil: it takes the whole list).
func Programs(p kernels.Problem, c kernels.Config, lim ir.Limits) (fns []*ir.Func, idx [][]int, err error) {
	ch, ok := p.(kernels.Chain)
	if !ok {
		f, err := kernels.Build(p, c, lim)
		if err != nil {
			return nil, nil, err
		}
		return []*ir.Func{f}, nil, nil
	}
	steps, err := ch.Steps(c)
	if err != nil {
		return nil, nil, err
	}
	for i, st := range steps {
		f, err := st.Func.Build(lim)
		if err != nil {
			return nil, nil, fmt.Errorf("%s (%s) step %d does not build:\n%w", p.Kernel(), kernels.ConfigFields(c), i, err)
		}
		fns, idx = append(fns, f), append(idx, st.Args)
	}
	return fns, idx, nil
}

// candidate is one config of one point, built, compiled and bound.
type candidate struct {
	cfg   kernels.Config
	progs []*cudagen.Program
	idx   [][]int // as Programs returns it
	x     bound   // the programs over a device copy of the point's inputs
	err   error
}

// bound is a candidate bound to device copies of its tensors.
type bound interface {
	cuda.Runnable
	Poison() error
	Once() error
	Download(args []*tensor.Tensor) error
	Time(opt backend.RunOptions) (backend.Result, error)
	Free()
}

// prepare uploads args and binds cd's programs to them.
func (cd candidate) prepare(b *cuda.Backend, args []*tensor.Tensor) (bound, error) {
	if cd.idx == nil {
		l, err := cuda.Prepare(b, cd.progs[0], args)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	c, err := cuda.PrepareChain(b, cd.progs, cd.idx, args)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// inputBytes is the size of the tensors of args that cd's programs read
// and none of them writes.
func (cd candidate) inputBytes(args []*tensor.Tensor) int {
	read, written := map[int]bool{}, map[int]bool{}
	for i, p := range cd.progs {
		for j, prm := range p.Func.Params {
			a := j
			if cd.idx != nil {
				a = cd.idx[i][j]
			}
			if prm.Output {
				written[a] = true
			} else {
				read[a] = true
			}
		}
	}
	n := 0
	for i, t := range args {
		if read[i] && !written[i] {
			n += len(t.Data) * t.DType.Bytes()
		}
	}
	return n
}

// RunSuite builds every config of every point, compiles them all in
// parallel (NVRTC dominates otherwise), then runs the points in order and
// hands each result to emit. It returns an error when a kernel faulted or
// hung and took the CUDA context with it: the points after it are emitted
// as not run, and nothing more can run on the device in this process.
func RunSuite(b *cuda.Backend, points []Point, o Options, emit func(Result)) error {
	cands := make([][]candidate, len(points))
	var progs []*cudagen.Program
	seen := map[string]bool{} // identical programs (a combine, MLA's batch-free kernels) compile once
	for i, p := range points {
		for _, c := range p.Configs {
			cd := candidate{cfg: c}
			var fns []*ir.Func
			fns, cd.idx, cd.err = Programs(p.Problem, c, b.Limits())
			for _, f := range fns {
				var prog *cudagen.Program
				if prog, cd.err = cudagen.Compile(f, cudagen.Options{Arch: b.Arch()}); cd.err != nil {
					break
				}
				cd.progs = append(cd.progs, prog)
				if fp := prog.Fingerprint(); !seen[fp] {
					seen[fp] = true
					progs = append(progs, prog)
				}
			}
			cands[i] = append(cands[i], cd)
		}
	}
	t0 := time.Now()
	b.Precompile(progs)
	o.Log("compiled %d kernels in %.1fs", len(progs), time.Since(t0).Seconds())
	for i := 0; i < len(points); {
		j := i + 1 // points[i:j] share their inputs
		for j < len(points) && points[j].SameInputs {
			j++
		}
		t0 := time.Now()
		args, err := Inputs(b, points[i].Problem, o.Seed)
		if err != nil {
			for k := i; k < j; k++ {
				emit(Result{Suite: points[k].Suite, Kernel: points[k].Problem.Kernel(), Impl: cmp.Or(points[k].Impl, "tilego"),
					Shape: points[k].Problem.Shape(), Error: err.Error()})
			}
			if cuda.DeviceLost(err) {
				return err
			}
			i = j
			continue
		}
		prepareAll(b, cands[i:j], args)
		if dt := time.Since(t0); dt > time.Second {
			o.Log("%s: inputs made and uploaded in %.1fs (host memory: %s)", points[i].Suite, dt.Seconds(), hostMemory())
		}
		for k := i; k < j; k++ {
			r := run(b, points[k], cands[k], args, o)
			emit(r)
			if r.lost != nil {
				for _, p := range points[k+1:] { // nothing more can run in this process
					emit(Result{Suite: p.Suite, Kernel: p.Problem.Kernel(), Impl: cmp.Or(p.Impl, "tilego"), Shape: p.Problem.Shape(),
						Error: "not run: an earlier kernel faulted or hung and the CUDA context is lost"})
				}
				return r.lost
			}
		}
		i = j
		if inputBytes(args) > 1<<30 { // give a large point's host memory back before the next one's
			args = nil
			debug.FreeOSMemory()
		}
	}
	return nil
}

// inputBytes is the host size of args (float64 elements).
func inputBytes(args []*tensor.Tensor) int {
	n := 0
	for _, t := range args {
		n += 8 * len(t.Data)
	}
	return n
}

// hostMemory is the process's resident and peak memory, as Linux counts it
// (the largest MLA points take tens of GB on the host).
func hostMemory() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "VmRSS" || k == "VmHWM") {
			out = append(out, k+" "+strings.TrimSpace(v))
		}
	}
	return strings.Join(out, ", ")
}

// prepareAll makes every candidate's device copy of args at once: an
// upload encodes the tensors on one core (seconds per GB of a KV cache),
// so the candidates of points that share their inputs upload in parallel.
func prepareAll(b *cuda.Backend, cands [][]candidate, args []*tensor.Tensor) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxUploads) // each holds an encoded copy of the inputs
	for _, cs := range cands {
		for i := range cs {
			if cd := &cs[i]; cd.err == nil {
				wg.Go(func() {
					sem <- struct{}{}
					cd.x, cd.err = cd.prepare(b, args)
					<-sem
				})
			}
		}
	}
	wg.Wait()
}

// maxUploads bounds the uploads at once: the largest MLA point has 14
// candidates of 4.8 GB encoded each, beside its 19 GB of float64 inputs.
const maxUploads = 8

// run times every config of p, bound to args, and keeps the fastest that
// computes the right answer; configs that fail to build or compute a wrong
// answer are reported in Tried and never chosen.
func run(b *cuda.Backend, p Point, cands []candidate, args []*tensor.Tensor, o Options) Result {
	r := Result{Suite: p.Suite, Kernel: p.Problem.Kernel(), Impl: cmp.Or(p.Impl, "tilego"), Shape: p.Problem.Shape()}
	if s, ok := p.Problem.(interface{ Splits() int }); ok {
		r.Splits = s.Splits()
	}
	for _, cd := range cands {
		try := map[string]any{"config": kernels.ConfigFields(cd.cfg)}
		var (
			st    Stats
			check kernels.Report
			info  cudaInfo
			err   = cd.err
		)
		if err != nil && cd.x == nil && cuda.OutOfMemory(err) {
			// prepareAll uploaded the point's candidates at once and the
			// device ran out (a 4.7 GB cache, 20 candidates); those run
			// before this one have freed theirs since.
			cd.x, err = cd.prepare(b, args)
		}
		if err == nil {
			st, check, info, err = runOne(b, p.Problem, cd, cd.x, args, o)
			cd.x.Free()
		}
		ms := st.MS()
		if err != nil {
			try["error"] = err.Error()
			if cuda.DeviceLost(err) { // the context is gone: no later config can run
				r.lost = fmt.Errorf("%s config %s faulted or hung, losing the CUDA context: %w", p.Problem.Kernel(), kernels.ConfigFields(cd.cfg), err)
				r.Tried = append(r.Tried, try)
				r.Error = r.lost.Error()
				return r
			}
		} else {
			try["ms"] = ms
			try["spread_ms"] = st.Spread.Seconds() * 1e3
			try["regs"] = info.NumRegs
			try["local_bytes"] = info.LocalBytes
			try["ok"] = check.OK()
			if check.OK() && (r.MS == 0 || ms < r.MS) {
				r.MS, r.Config, r.Regs, r.Local = ms, kernels.ConfigFields(cd.cfg), info.NumRegs, info.LocalBytes
				r.Steps = len(cd.progs)
				r.TMA, r.Producer, r.PingPong = false, false, false
				for _, pr := range cd.progs {
					r.TMA = r.TMA || len(pr.TMA) > 0
					r.Producer = r.Producer || pr.Threads > pr.Func.Kernel.Threads
					r.PingPong = r.PingPong || pr.PingPong
				}
				r.Spread, r.Times, r.Flush = st.Spread.Seconds()*1e3, msList(st.Times), st.Flush.String()
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

// runOne checks cd, bound to args by x, then times it: correctness first
// (poisoned outputs, one run, checked against float64).
func runOne(b *cuda.Backend, p kernels.Problem, cd candidate, x bound, args []*tensor.Tensor, o Options) (Stats, kernels.Report, cudaInfo, error) {
	info, err := infoOf(x)
	if err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	if err := x.Poison(); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	if err := x.Once(); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	if err := x.Download(args); err != nil {
		return Stats{}, kernels.Report{}, cudaInfo{}, err
	}
	check := p.Check(args, o.Seed)
	st, err := timeBound(b, cd, x, args, o)
	if err != nil {
		return Stats{}, check, cudaInfo{}, err
	}
	return st, check, info, nil
}

// infoOf is the most registers and local memory of any of x's kernels.
func infoOf(x bound) (cudaInfo, error) {
	var ls []*cuda.Launch
	switch x := x.(type) {
	case *cuda.Launch:
		ls = []*cuda.Launch{x}
	case *cuda.Chain:
		ls = x.Steps()
	}
	var ci cudaInfo
	for _, l := range ls {
		fi, err := l.Info()
		if err != nil {
			return cudaInfo{}, err
		}
		ci.NumRegs, ci.LocalBytes = max(ci.NumRegs, fi.NumRegs), max(ci.LocalBytes, fi.LocalBytes)
	}
	return ci, nil
}

// Time times prog, bound to args by l, as o says: o.Warmup launches, then
// the median of o.Repeats. With no flush this is l.Time; with one, every
// launch is timed alone by events around the kernel, after a memset of a
// FlushBytes buffer (l2) or on the next of several device copies of the
// inputs (rotate).
func Time(b *cuda.Backend, prog *cudagen.Program, l *cuda.Launch, args []*tensor.Tensor, o Options) (Stats, error) {
	return timeBound(b, candidate{progs: []*cudagen.Program{prog}}, l, args, o)
}

// timeBound is Time for a program or a chain: a chain is timed from its
// first kernel's start to its last one's end.
func timeBound(b *cuda.Backend, cd candidate, x bound, args []*tensor.Tensor, o Options) (Stats, error) {
	in := cd.inputBytes(args)
	f := o.Flush.Resolve(in, b.L2Bytes())
	switch f {
	case FlushNone:
		res, err := x.Time(backend.RunOptions{Warmup: o.Warmup, Repeats: o.Repeats})
		if err != nil {
			return Stats{}, err
		}
		return Stats{Median: res.Time, Spread: res.Spread, N: res.Repeats, Flush: f}, nil
	case FlushL2:
		ts, err := b.TimeEach([]cuda.Runnable{x}, o.Warmup, max(o.Repeats, 1), FlushBytes(b.L2Bytes()))
		if err != nil {
			return Stats{}, err
		}
		return Summarize(ts, f), nil
	}
	ls := []cuda.Runnable{x}
	defer func() {
		for _, y := range ls[1:] {
			y.(bound).Free()
		}
	}()
	for range RotateCopies(in, b.L2Bytes()) - 1 {
		y, err := cd.prepare(b, args)
		if err != nil {
			return Stats{}, err
		}
		ls = append(ls, y)
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
	name := r.Suite
	if r.Impl != "" && r.Impl != "tilego" {
		name += " " + r.Impl
	}
	if r.Error != "" {
		return fmt.Sprintf("%-10s %s: %s", name, r.Shape, r.Error)
	}
	bw := ""
	if r.GBps > 0 {
		bw = fmt.Sprintf(" %6.0f GB/s", r.GBps)
	}
	if r.Steps > 1 {
		bw += fmt.Sprintf(" (%d programs, %d splits)", r.Steps, r.Splits)
	}
	return fmt.Sprintf("%-10s %7.3f ms ±%.3f %7.1f TFLOP/s%s  regs %3d local %4d  %s  [%s]", name, r.MS, r.Spread/2, r.TFLOPs, bw, r.Regs, r.Local, r.Shape, r.Config)
}
