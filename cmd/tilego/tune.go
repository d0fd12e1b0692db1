package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"time"

	"github.com/tilego/tilego/autotune"
	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

var tuneCmd = &command{
	name: "tune", args: "KERNEL [flags]", summary: "search a kernel's configs on the GPU; run then uses the fastest correct one",
	main: tuneMain, usage: tuneUsage, json: true,
}

func init() {
	for name, arg := range map[string]string{"budget": "D", "max": "N", "patience": "N", "warmup": "N", "flush": "auto|l2|rotate|none"} {
		argNames[name] = arg
	}
}

// tuneFlags are tune's own flags, after the shape flags.
type tuneFlags struct {
	budget          time.Duration
	max, patience   int
	progress        bool
	warmup, repeats int
	seed            uint64
	flush           string
	save, json      bool
}

func (t *tuneFlags) define(k *kernelFlags) {
	fs := k.fs
	fs.DurationVar(&t.budget, "budget", time.Minute, "time for the whole search, compiling included; the best so far wins; 0 for no limit")
	boundedInt(fs, &t.max, "max", 0, 0, 1<<20, "measure at most N configs, the most promising first; 0 for all")
	boundedInt(fs, &t.patience, "patience", 24, 0, 1<<20, "stop after N configs in a row fail to beat the best by more than 1%; 0 never stops early")
	fs.BoolVar(&t.progress, "progress", false, "draw the progress bar on stderr even when it is not a terminal")
	boundedInt(fs, &t.warmup, "warmup", 5, 0, maxRepeats, "launches of each config before timing it")
	boundedInt(fs, &t.repeats, "repeats", 20, 1, maxRepeats, "timed launches of each config; the median counts")
	fs.Uint64Var(&t.seed, "seed", 1, "seed of the random inputs and of the checked sample")
	fs.StringVar(&t.flush, "flush", "auto", "keep the L2 cache cold between timed launches: auto (when the inputs fit in twice the L2), l2, rotate or none")
	fs.BoolVar(&t.save, "save", true, "save the winner in the tuning cache (tilego run uses it); --save=false only reports")
	fs.BoolVar(&t.json, "json", false, "print the winner's cache entry as JSON instead of the summary")
}

func tuneUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: tilego tune KERNEL [shape flags] [--budget 60s] [--max N] [--progress]

Searches KERNEL's config space for the shape the flags give, on the GPU.
Configs the code generator refuses (how the threads split the tiles, shared
memory) or whose registers would spill are pruned before NVRTC compiles
anything; the rest are compiled in parallel, each runs once on random
inputs with poisoned outputs and is checked against float64 (a wrong or
failing config is reported, never chosen), then timed.
The fastest correct config is saved in the tuning cache ($TILEGO_CACHE/tune,
else the user cache folder's tilego/tune; one that other users can write
is refused), keyed by the kernel, the shape,
the GPU, the NVRTC version and the code generator; tilego run uses it for
this shape on this GPU.

Tune flags:
`)
	k, _ := newKernelFlags("tune", []string{kernels.Entries[0].Name})
	new(tuneFlags).define(k)
	k.printOwnFlags(w)
	fmt.Fprintf(w, "\nShape flags depend on the kernel: tilego help KERNEL, or tilego list.\n")
}

func tuneMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		tuneUsage(stdout)
		return 0
	}
	if err := tune(args, stdout, stderr); err != nil {
		return fail(stdout, stderr, "tune", err, wantsJSON(args))
	}
	return 0
}

// openTuner is the device tune measures on; the tests put a fake here.
var openTuner = func(timing bench.Options) (autotune.Runner, error) {
	b, err := openGPU()
	if err != nil {
		return nil, fmt.Errorf("tune needs a GPU: %w", err)
	}
	return autotune.NewCUDA(b, timing)
}

func tune(args []string, stdout, stderr io.Writer) error {
	k, err := newKernelFlags("tune", args)
	if err != nil {
		return usageErr(err)
	}
	var tf tuneFlags
	tf.define(k)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: tilego tune %s [flags]\n\n", k.entry.Name)
		printKernel(w, k.entry)
		fmt.Fprintf(w, "\nTune flags:\n")
		k.printOwnFlags(w)
	}
	if help, err := k.parse(args[1:], stdout, stderr, usage); help || err != nil {
		if err != nil {
			return usageErr(err)
		}
		return nil
	}
	flush, err := bench.ParseFlush(tf.flush)
	switch {
	case err != nil:
		return usageErr(fmt.Errorf("--flush: %w", err))
	case tf.budget < 0:
		return usageErr(fmt.Errorf("--budget %v: cannot be negative", tf.budget))
	}
	p, err := k.problem()
	if err != nil {
		return usageErr(err)
	}
	if err := checkMemory(p, nil, 0); err != nil { // the host's copies; the GPU's are the tuner's to check
		return err
	}
	if len(kernels.Candidates(p)) == 0 {
		return fmt.Errorf("%s has no config space to search", p.Kernel())
	}
	r, err := openTuner(bench.Options{Warmup: tf.warmup, Repeats: tf.repeats, Flush: flush})
	if err != nil {
		return err
	}
	t := r.Target()
	fmt.Fprintf(stderr, "device: %s (%s, codegen %s)\n", t.GPU, t.Compiler, t.Codegen)
	// The valid configs, most promising first, then the rest, which the
	// tuner prunes and counts.
	space := append(autotune.Space(p, t.Arch), kernels.Candidates(p)...)
	o := autotune.Options{Budget: tf.budget, Max: tf.max, Patience: tf.patience, Seeds: seedsFor(p, t.Arch), Seed: tf.seed}
	if tf.progress || isTerminal(stderr) {
		o.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := autotune.Tune(ctx, r, p, space, o)
	if res != nil && !tf.json {
		res.WriteSummary(stdout)
	}
	if err != nil {
		return err
	}
	entry, err := res.Entry()
	if err != nil {
		return err
	}
	if tf.save { // before --json prints: a failure to save is then the one object
		path, err := autotune.DefaultCache().Save(entry)
		if err != nil {
			return fmt.Errorf("saving the winner: %w", err)
		}
		fmt.Fprintf(stderr, "saved %s: tilego run uses it for this shape on this GPU\n", path)
	}
	if tf.json {
		b, err := json.MarshalIndent(entry, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	}
	return nil
}

// seedsFor are the configs tried first: the problem's GPU config for
// arch (what run takes untuned, so the winner is never slower than it),
// the generic one, then the benchmark's hand-picked ones.
func seedsFor(p kernels.Problem, arch string) []kernels.Config {
	seeds := []kernels.Config{kernels.GPUConfigFor(p, arch)}
	if g := p.GPUConfig(); !reflect.DeepEqual(g, seeds[0]) {
		seeds = append(seeds, g)
	}
	dim, seq, causal := 0, 0, false
	for _, f := range p.Shape() {
		switch f.Name {
		case "dim":
			dim, _ = f.Value.(int)
		case "seq_q":
			seq, _ = f.Value.(int)
		case "causal":
			causal, _ = f.Value.(bool)
		}
	}
	switch p.Kernel() {
	case "flash-attention":
		seeds = append(seeds, bench.AttnConfigsFor(dim, causal, seq)...)
	case "gemm":
		seeds = append(seeds, bench.GemmConfigs()...)
	}
	return seeds
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// gpuConfig is the config run uses on a GPU backend: the tuned one saved
// for this shape on this GPU when there is one, else p.GPUConfig(). The
// second result says which, as run prints it.
func gpuConfig(be backend.Backend, p kernels.Problem) (kernels.Config, string) {
	b, ok := be.(*cuda.Backend)
	if !ok {
		return p.GPUConfig(), "default"
	}
	def := kernels.GPUConfigFor(p, b.Arch())
	t, err := autotune.TargetOf(b)
	if err != nil {
		return def, "default"
	}
	if cfg, from := lookupTuned(autotune.DefaultCache(), p, t, b.Limits()); cfg != nil {
		return cfg, from
	} else if from != "" {
		return def, from
	}
	return def, "default"
}

// lookupTuned finds p's tuned config for t in c. The entry holds the
// fingerprint of the code it was timed with; when today's generator emits
// other code for it, the entry is stale and not used (from says so).
func lookupTuned(c autotune.Cache, p kernels.Problem, t autotune.Target, lim ir.Limits) (cfg kernels.Config, from string) {
	e, cfg, ok := c.Lookup(p, t)
	if !ok {
		return nil, ""
	}
	fn, err := kernels.Build(p, cfg, lim)
	if err != nil {
		return nil, "default (the tuned config no longer builds; run tilego tune again)"
	}
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: t.Arch, Switches: switches})
	if err != nil || prog.Fingerprint() != e.Source {
		return nil, "default (the code of the tuned config changed; run tilego tune again)"
	}
	return cfg, "tuned (cache)"
}
