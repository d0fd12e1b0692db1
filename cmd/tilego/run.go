package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cpu"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/backend/hip"
	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

var runCmd = &command{
	name: "run", args: "KERNEL [flags]", summary: "run a kernel, compare it with float64, time it",
	main: runMain, usage: runUsage, json: true,
}

// runFlags are run's own flags, after the shape flags.
type runFlags struct {
	backend string
	check   bool
	json    bool
	repeats int
	seed    uint64
	config  string
	flushL2 bool
	maxGF   float64
}

func (r *runFlags) define(k *kernelFlags) {
	fs := k.fs
	fs.StringVar(&r.backend, "backend", "auto", "where to run; auto uses the GPU when one is usable, else the CPU interpreter; hip runs on an AMD MI300X (ROCm); hip-emu runs the gfx942 HIP program emulated on the CPU")
	fs.BoolVar(&r.check, "check", true, "compare the outputs with a float64 reference; exit 1 beyond tolerance; --check=false skips it")
	fs.BoolVar(&r.json, "json", false, "print one JSON object instead of text")
	boundedInt(fs, &r.repeats, "repeats", 0, 0, maxRepeats, "timed launches, the median reported; 0 means 1 on the interpreter, 10 on a GPU")
	fs.BoolVar(&r.flushL2, "flush-l2", false, "on a GPU, clear a buffer of twice the L2 (at least 256 MiB, as tilego bench's --flush l2) before every timed launch, so each starts cold")
	fs.Uint64Var(&r.seed, "seed", 1, "seed of the random inputs and of the checked sample")
	fs.Float64Var(&r.maxGF, "max-gflop", defaultMaxGFLOP, "on the interpreter, refuse a run of more work than this many GFLOP (all repeats, a tensor element counted as 1000 FLOPs; it does about half a GFLOP/s a core); 0 for no bound")
	fs.StringVar(&r.config, "config", "", "config fields to change from the one picked (tuned or default), as name=value pairs (e.g. \"m=64 persistent\"; names as --json prints them)")
}

func runUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: tilego run KERNEL [shape flags] [run flags]

Builds KERNEL for the shape the flags give (on a GPU with the config tilego
tune saved for this shape and GPU when there is one, else the default;
--config changes fields of it), runs it on random inputs, compares the outputs with a float64 reference and
prints the backend, the error, the time and TFLOP/s. A shape whose tensors
do not fit in host memory (float64) or GPU memory, or past --max-gflop on
the interpreter, is refused before anything is allocated. With --json,
a failure is {"ok":false,"error":"..."} on stdout too.

Run flags:
`)
	k, _ := newKernelFlags("run", []string{kernels.Entries[0].Name})
	new(runFlags).define(k)
	k.printOwnFlags(w)
	fmt.Fprintf(w, "\nShape flags depend on the kernel: tilego help KERNEL, or tilego list. Kernels:")
	for _, e := range kernels.Entries {
		fmt.Fprintf(w, " %s", e.Name)
	}
	fmt.Fprintln(w)
}

func runKernelUsage(k *kernelFlags) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "Usage: tilego run %s [flags]\n\n", k.entry.Name)
		printKernel(w, k.entry)
		fmt.Fprintf(w, "\nRun flags:\n")
		k.printOwnFlags(w)
	}
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		runUsage(stdout)
		return 0
	}
	if err := run(args, stdout, stderr); err != nil {
		return fail(stdout, stderr, "run", err, wantsJSON(args))
	}
	return 0
}

// runResult is what --json prints.
type runResult struct {
	Kernel   string             `json:"kernel"`
	Shape    kernels.Fields     `json:"shape"`
	Backend  string             `json:"backend"`
	Device   string             `json:"device"`
	Config   kernels.Fields     `json:"config"`
	From     string             `json:"config_source"`  // "default" or "tuned (cache)"
	PickMS   float64            `json:"config_pick_ms"` // time to find the config (cache lookup and its check)
	Errors   map[string]jsonNum `json:"errors,omitempty"`
	Checked  string             `json:"checked"`              // "all", "sampled N rows", "none"
	Split    string             `json:"split_note,omitempty"` // why a split path asked for runs as one program
	OK       *bool              `json:"ok,omitempty"`
	TimeMS   float64            `json:"time_ms"`
	Repeats  int                `json:"repeats"`
	Flush    string             `json:"flush,omitempty"` // "l2" with --flush-l2 on a GPU
	GFLOP    float64            `json:"gflop"`
	TFLOPS   float64            `json:"tflops"`
	GB       float64            `json:"gb,omitempty"`        // bytes the kernel must move at least once (its global tensors), in GB
	GBps     float64            `json:"gbps,omitempty"`      // GB over the time: what a memory-bound kernel is judged by
	CopyGBps float64            `json:"copy_gbps,omitempty"` // on a GPU: a device-to-device copy of as many bytes, timed alike
	OfCopy   float64            `json:"of_copy,omitempty"`   // gbps / copy_gbps
	Error    string             `json:"error,omitempty"`     // why ok is false
}

// jsonNum is a float that encodes ±Inf and NaN as strings, which JSON
// numbers cannot hold.
type jsonNum float64

func (x jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return json.Marshal(fmt.Sprint(f))
	}
	return json.Marshal(f)
}

func run(args []string, stdout, stderr io.Writer) error {
	k, err := newKernelFlags("run", args)
	if err != nil {
		return usageErr(err)
	}
	var rf runFlags
	rf.define(k)
	if help, err := k.parse(args[1:], stdout, stderr, runKernelUsage(k)); help || err != nil {
		if err != nil {
			return usageErr(err)
		}
		return nil
	}
	p, err := k.problem()
	if err != nil {
		return usageErr(err)
	}
	if !(rf.maxGF >= 0) { // NaN too
		return usageErr(fmt.Errorf("--max-gflop %v: must be 0 (no bound) or more", rf.maxGF))
	}
	be, err := pickBackend(rf.backend, stderr)
	if err != nil {
		return err
	}
	cfg, from := p.DefaultConfig(), "default"
	t0 := time.Now()
	switch be.Name() {
	case "cuda":
		cfg, from = gpuConfig(be, p) // the tuned config when tilego tune saved one
	case "hip", "hip-emu":
		cfg, from = kernels.GPUConfigFor(p, emu.Arch), "gfx942 default"
	}
	pick := time.Since(t0)
	if rf.config != "" {
		if cfg, err = kernels.ParseConfig(cfg, rf.config); err != nil {
			return usageErr(err) // "config m=0: why"
		}
		from += ", changed by --config"
	}
	opt := backend.RunOptions{Repeats: rf.repeats}
	if be.Name() != "cpu" && be.Name() != "hip-emu" {
		opt.Warmup = 2
		if opt.Repeats == 0 {
			opt.Repeats = 10
		}
	}
	opt.Repeats = max(opt.Repeats, 1)
	if b, ok := be.(*cuda.Backend); ok && rf.flushL2 {
		opt.FlushBytes = bench.FlushBytes(b.L2Bytes())
	}
	if be.Name() == "cpu" || be.Name() == "hip-emu" { // both run on the host's cores
		if err := checkInterpWork(p, opt.Repeats, rf.maxGF); err != nil {
			return err
		}
		// A run long enough to wonder about says so first, to a person.
		if s := interpSeconds(p, opt.Repeats); be.Name() == "cpu" && s > 2 && !rf.json && isTerminal(stderr) {
			fmt.Fprintf(stderr, "tilego: interpreting %s, about %.0f s on %d cores...\n", p.Kernel(), s, runtime.NumCPU())
		}
	}
	if err := checkMemory(p, be, opt.FlushBytes); err != nil {
		return err
	}
	inputs, err := runInputs(be, p, rf.seed)
	if err != nil {
		return err
	}
	res, err := runProblem(be, p, cfg, inputs, opt)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", p.Kernel(), be.Name(), withConfig(err, cfg))
	}
	out := runResult{
		Kernel: p.Kernel(), Shape: p.Shape(), Backend: be.Name(), Device: be.Device(),
		Config: kernels.ConfigFields(cfg), From: from, PickMS: pick.Seconds() * 1e3, Checked: "none",
		TimeMS: res.Time.Seconds() * 1e3, Repeats: res.Repeats, GFLOP: p.FLOPs() / 1e9,
	}
	if opt.FlushBytes > 0 {
		out.Flush = "l2"
	}
	if n, ok := p.(interface{ SplitNote() string }); ok {
		out.Split = n.SplitNote()
	}
	if s := res.Time.Seconds(); s > 0 {
		out.TFLOPS = p.FLOPs() / s / 1e12
	}
	if tr, ok := p.(kernels.Traffic); ok {
		out.GB = tr.Bytes() / 1e9
		if s := res.Time.Seconds(); s > 0 {
			out.GBps = out.GB / s
		}
		if b, ok := be.(*cuda.Backend); ok && out.GBps > 0 {
			if rate, err := b.CopyRate(int64(tr.Bytes()), opt); err == nil {
				out.CopyGBps = rate / 1e9
				out.OfCopy = out.GBps / out.CopyGBps
			} else {
				fmt.Fprintf(stderr, "tilego: the copy bandwidth was not measured: %v\n", err)
			}
		}
	}
	var rep kernels.Report
	if rf.check {
		rep = p.Check(inputs, rf.seed)
		ok := rep.OK()
		out.OK, out.Checked, out.Errors = &ok, rep.Checked, map[string]jsonNum{}
		for name, v := range rep.Errors() {
			out.Errors[name] = jsonNum(v)
		}
	}
	var failed error
	if out.OK != nil && !*out.OK {
		failed = fmt.Errorf("%s: result beyond tolerance: %s", p.Kernel(), rep)
		out.Error = failed.Error()
	}
	if !rf.json {
		printRun(stdout, out, rep, rf.check)
		return failed
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", b)
	if failed != nil {
		return shownErr{failed}
	}
	return nil
}

func printRun(w io.Writer, r runResult, rep kernels.Report, checked bool) {
	fmt.Fprintf(w, "%s  %s\n", r.Kernel, r.Shape)
	fmt.Fprintf(w, "  backend  %s: %s\n", r.Backend, r.Device)
	fmt.Fprintf(w, "  config   %s: %s (picked in %.1f ms)\n", r.From, r.Config, r.PickMS)
	if r.Split != "" {
		fmt.Fprintf(w, "  split    %s\n", r.Split)
	}
	if checked {
		for i, m := range rep.Measures {
			fmt.Fprintf(w, "  %-8s %s\n", map[bool]string{true: "error"}[i == 0], m)
		}
		fmt.Fprintf(w, "  checked  %s, against float64\n", rep.Checked)
	} else {
		fmt.Fprintf(w, "  error    not checked (--check=false)\n")
	}
	fmt.Fprintf(w, "  time     %.3f ms (median of %d)\n", r.TimeMS, r.Repeats)
	fmt.Fprintf(w, "  speed    %.3g TFLOP/s (%.4g GFLOP)", r.TFLOPS, r.GFLOP)
	if r.GB > 0 {
		fmt.Fprintf(w, ", %.4g GB/s (%.4g GB its global tensors move at least once)", r.GBps, r.GB)
		if r.CopyGBps > 0 {
			fmt.Fprintf(w, "\n  memory   %.2f of the copy bandwidth (%.4g GB/s: a device-to-device copy of as many bytes, timed alike)", r.OfCopy, r.CopyGBps)
		}
	}
	fmt.Fprintln(w)
}

// pickBackend resolves --backend. With auto, a missing GPU is a one-line
// note and the interpreter runs instead.
func pickBackend(name string, stderr io.Writer) (backend.Backend, error) {
	switch name {
	case "cpu":
		return cpu.Backend{}, nil
	case "gpu":
		b, err := gpuBackend()
		if err != nil {
			return nil, fmt.Errorf("--backend gpu: %w", err)
		}
		return b, nil
	case "hip":
		b, err := hip.Open(0)
		if err != nil {
			return nil, fmt.Errorf("--backend hip: %w", err)
		}
		return b, nil
	case "hip-emu":
		b, err := emu.Open()
		if err != nil {
			return nil, fmt.Errorf("--backend hip-emu: %w", err)
		}
		return b, nil
	case "auto":
		b, err := gpuBackend()
		if err == nil {
			return b, nil
		}
		if a, errAMD := hip.Open(0); errAMD == nil {
			return a, nil
		}
		fmt.Fprintf(stderr, "tilego: no GPU (%v); running on the CPU interpreter\n", err)
		return cpu.Backend{}, nil
	}
	return nil, usageErr(fmt.Errorf("--backend: unknown backend %q (want auto, cpu, gpu, hip or hip-emu)", name))
}

// runInputs are p's inputs: on a CUDA device a Derived problem's are made
// by its Source there (bench.Inputs), elsewhere by p.Inputs.
func runInputs(be backend.Backend, p kernels.Problem, seed uint64) ([]*tensor.Tensor, error) {
	if b, ok := be.(*cuda.Backend); ok {
		return bench.Inputs(b, p, seed)
	}
	return p.Inputs(seed), nil
}
