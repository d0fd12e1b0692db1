package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/fuzz"
	"github.com/tilego/tilego/internal/clangcuda"
	"github.com/tilego/tilego/ir"
)

var fuzzCmd = &command{
	name: "fuzz", args: "[--n N] [--seed S]", summary: "check random valid programs: interpreter vs both CUDA emitters (and the GPU)",
	main: fuzzMain, usage: fuzzUsage,
}

type fuzzFlags struct {
	fs                    *flag.FlagSet
	n                     *int
	seed                  *uint64
	backend, tgt, out     *string
	with                  *string
	jsonOut               *bool
	shrink, shrinkPerKind *int
	batch                 *int
	replay                *string
}

func newFuzzFlags(stderr io.Writer) *fuzzFlags {
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &fuzzFlags{
		fs:            fs,
		n:             fs.Int("n", 200, "programs to generate"),
		seed:          fs.Uint64("seed", 1, "seed of the first program; program i has seed S+i"),
		backend:       fs.String("backend", "cpu", "cpu: interpreter and emitters only (the CUDA C++ compiled by clang++-19 where it is on the PATH); gpu: also run on GPU 0 and compare; auto: gpu where one is usable; hip-emu: run gfx942's programs in the CPU emulator and compare"),
		tgt:           fs.String("target", "both", "code paths to emit (and run): sm_80 (mma.sync), sm_90a (wgmma, TMA), both, gfx942 (AMD, HIP) or all"),
		out:           fs.String("out", "fuzz-findings", "folder for the findings' reproducers (seed-N.go)"),
		with:          fs.String("with", "", "comma-separated generator switches to turn on besides the defaults (constructs left out: see fuzz.Switches): "+strings.Join(sortedSwitches(), ", ")),
		jsonOut:       fs.Bool("json", false, "print the summary as JSON"),
		shrink:        fs.Int("shrink", 300, "candidates the shrinker may try per finding (0: write findings unshrunk)"),
		shrinkPerKind: fs.Int("shrink-per-kind", 2, "findings shrunk per kind and message; the rest are listed by seed"),
		batch:         fs.Int("batch", 512, "programs checked per batch (with a GPU: compiled by NVRTC in parallel, then run)"),
		replay:        fs.String("replay", "", "check the one program saved in FILE (fuzz.SaveProg) and print its outcome as JSON: how a fault's candidates are checked, each in a process of its own"),
	}
}

func sortedSwitches() []string {
	s := fuzz.SwitchNames()
	sort.Strings(s)
	return s
}

func fuzzUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: tilego fuzz [--n N] [--seed S] [--backend cpu|gpu|auto|hip-emu] [--target sm_80|sm_90a|both|gfx942|all] [--out DIR] [--json]

A differential fuzzer. Generates N random valid tile programs (seeds S, S+1,
...: copies between every scope pair with conversions, partial tiles at
edges, strided tensors, Gemm with transposes and policies, reductions,
Parallel loops with broadcasts and index arithmetic, Serial, Unrolled and
Pipelined loops with Defer, If, While, atomics, symbolic sizes), and for
each: builds and verifies it, runs it on the interpreter on random inputs
(outputs poisoned with NaN), emits CUDA for each target (an error or a
panic is a finding; on the cpu backend, with clang++-19 on the PATH, the
CUDA C++ is compiled to PTX by clang, NVRTC's check without a GPU) and,
with --backend gpu, compiles and runs it on the
GPU and compares with the interpreter: bit for bit where the arithmetic is
exact, within the dtypes' tolerance elsewhere. A program the verifier
refuses is the generator's bug: counted, not a finding.

Each finding is shrunk (ops dropped, loops cut, sizes reduced while it
fails the same way) and written to DIR/seed-N.go as a Go function that
builds it with tl, under a one-line summary. Exit status 1 if any finding.

Flags:
`)
	newFuzzFlags(w).fs.PrintDefaults()
}

func fuzzMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fuzzUsage(stdout)
		return 0
	}
	ff := newFuzzFlags(stderr)
	if err := ff.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if ff.fs.NArg() > 0 {
		return report(stderr, "fuzz", usageErr(fmt.Errorf("unexpected argument %q", ff.fs.Arg(0))))
	}
	if *ff.replay != "" {
		if err := replayFuzz(ff, stdout); err != nil {
			return report(stderr, "fuzz", err)
		}
		return 0
	}
	if err := runFuzz(ff, stdout, stderr); err != nil {
		if errors.Is(err, errFindings) {
			return 1
		}
		return report(stderr, "fuzz", err)
	}
	return 0
}

var errFindings = errors.New("findings")

// fuzzFault is nil but in the tests of the reporting path (fuzz.Checker's
// Fault): no generated program fails on purpose.
var fuzzFault func(*ir.Func) string

// fuzzSummary is what --json prints.
type fuzzSummary struct {
	Programs  int            `json:"programs"`
	Rejected  int            `json:"rejected_by_verifier"`
	Refused   int            `json:"refused_by_a_target"`
	Refusals  map[string]int `json:"refusals_by_class"`
	Passed    int            `json:"passed"`
	Skipped   int            `json:"skipped_device_lost,omitempty"`
	Findings  map[string]int `json:"findings_by_kind"`
	Backend   string         `json:"backend"`
	Device    string         `json:"device,omitempty"`
	Targets   []string       `json:"targets"`
	EmitMs    float64        `json:"emit_ms_per_program_per_target"`
	Seconds   float64        `json:"seconds"`
	Reports   []fuzzReport   `json:"reports"`
	Generator []string       `json:"switches_on,omitempty"`
}

type fuzzReport struct {
	Seed       uint64 `json:"seed"`
	Kind       string `json:"kind"`
	Target     string `json:"target,omitempty"`
	Summary    string `json:"summary"`
	Reproducer string `json:"reproducer,omitempty"`
}

func runFuzz(ff *fuzzFlags, stdout, stderr io.Writer) error {
	sw := fuzz.Defaults()
	var on []string
	for _, name := range strings.Split(*ff.with, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !sw.Set(name) {
			return usageErr(fmt.Errorf("--with: no switch %q (want one of %s)", name, strings.Join(sortedSwitches(), ", ")))
		}
		on = append(on, name)
	}
	c, backend, device, err := ff.checker(stderr)
	if err != nil {
		return err
	}
	sum := fuzzSummary{Backend: backend, Device: device, Targets: c.Archs, Findings: map[string]int{}, Refusals: map[string]int{}, Generator: on}
	if *ff.n < 0 || *ff.batch < 1 {
		return usageErr(fmt.Errorf("--n and --batch must be positive"))
	}
	if !*ff.jsonOut {
		fmt.Fprintf(stdout, "fuzz: %d programs from seed %d, backend %s%s, targets %s\n", *ff.n, *ff.seed, sum.Backend, deviceNote(sum.Device), strings.Join(c.Archs, ", "))
	}
	start := time.Now()
	var found []fuzz.Outcome
	progs := map[uint64]*fuzz.Prog{}
	lastReport := start
	for lo := 0; lo < *ff.n; lo += *ff.batch {
		var ps []*fuzz.Prog
		for i := lo; i < min(lo+*ff.batch, *ff.n); i++ {
			p := fuzz.Generate(*ff.seed+uint64(i), sw)
			ps = append(ps, p)
			progs[p.Seed] = p
		}
		for _, o := range c.CheckAll(ps, runtime.NumCPU()) {
			sum.Programs++
			if len(o.Refusals) > 0 {
				sum.Refused++
				for _, r := range o.Refusals {
					sum.Refusals[fuzz.RefusalClass(r)]++
				}
			}
			switch {
			case o.Kind == fuzz.Rejected:
				sum.Rejected++
				fmt.Fprintf(stderr, "fuzz: generator bug: %s\n", o.Summary())
			case o.Kind == fuzz.Refused:
			case o.Finding():
				sum.Findings[o.Kind]++
				found = append(found, o)
			case o.Skipped:
				sum.Skipped++
			default:
				sum.Passed++
			}
			if !*ff.jsonOut && o.Finding() {
				fmt.Fprintf(stdout, "  %s\n", o.Summary())
			}
		}
		if !*ff.jsonOut && time.Since(lastReport) > 10*time.Second {
			fmt.Fprintf(stdout, "  %d/%d programs, %d findings, %.0fs\n", sum.Programs, *ff.n, len(found), time.Since(start).Seconds())
			lastReport = time.Now()
		}
		if c.GPU != nil && c.GPU.Lost { // a fault lost the context: nothing more runs there
			fmt.Fprintf(stderr, "fuzz: the GPU's context is lost (the last finding faulted); stopping after %d programs\n", sum.Programs)
			break
		}
		for _, p := range ps { // keep only the findings' programs
			if !slices.ContainsFunc(found, func(o fuzz.Outcome) bool { return o.Seed == p.Seed }) {
				delete(progs, p.Seed)
			}
		}
	}
	sum.EmitMs = float64(c.EmitTime().Microseconds()) / 1000
	sum.Reports = writeFindings(c, found, progs, ff, stdout)
	sum.Seconds = time.Since(start).Seconds()
	if *ff.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printFuzzSummary(stdout, sum)
	}
	if len(found) > 0 {
		return errFindings
	}
	return nil
}

func deviceNote(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

// writeFindings shrinks the first few findings of each kind and message
// and writes their reproducers.
func writeFindings(c *fuzz.Checker, found []fuzz.Outcome, progs map[uint64]*fuzz.Prog, ff *fuzzFlags, stdout io.Writer) []fuzzReport {
	var out []fuzzReport
	perKey := map[string]int{}
	for _, o := range found {
		r := fuzzReport{Seed: o.Seed, Kind: o.Kind, Target: o.Arch, Summary: o.Summary()}
		key := o.Key()
		if perKey[key] < *ff.shrinkPerKind {
			perKey[key]++
			small := progs[o.Seed]
			check := c.Check
			if c.GPU != nil && (c.GPU.Lost || o.Kind == fuzz.GPURun) { // a fault lost the context: each candidate in a process of its own
				check = isolatedCheck(ff)
			}
			if *ff.shrink > 0 && check != nil {
				small, _ = fuzz.Shrink(small, o, check, *ff.shrink)
			}
			if path, err := fuzz.WriteReproducer(*ff.out, o, small); err == nil {
				r.Reproducer = path
			} else if !*ff.jsonOut {
				fmt.Fprintf(stdout, "fuzz: writing the reproducer of seed %d: %v\n", o.Seed, err)
			}
		}
		out = append(out, r)
	}
	return out
}

func printFuzzSummary(w io.Writer, s fuzzSummary) {
	fmt.Fprintf(w, "\n%d programs in %.1fs: %d passed, %d rejected by the verifier (generator bugs), %d findings\n",
		s.Programs, s.Seconds, s.Passed, s.Rejected, len(s.Reports))
	if s.Skipped > 0 {
		fmt.Fprintf(w, "%d programs not run on the GPU: its context was lost; rerun from the seed after the fault\n", s.Skipped)
	}
	fmt.Fprintf(w, "emit: %.2f ms a program a target (cudagen.Compile)\n", s.EmitMs)
	if s.Refused > 0 {
		fmt.Fprintf(w, "%d programs refused by a target at the op's file:line (as Build with its limits refuses them; the other target still checked):\n", s.Refused)
		classes := slices.Collect(maps.Keys(s.Refusals))
		slices.SortFunc(classes, func(a, b string) int { return s.Refusals[b] - s.Refusals[a] })
		for _, c := range classes {
			fmt.Fprintf(w, "  %6d  %s\n", s.Refusals[c], c)
		}
	}
	for _, k := range []string{fuzz.EmitError, fuzz.EmitPanic, fuzz.InterpPanic, fuzz.InterpError, fuzz.CUDACompile, fuzz.GPUCompile, fuzz.GPURun, fuzz.GPUMismatch} {
		fmt.Fprintf(w, "  %-20s %d\n", k, s.Findings[k])
	}
	for _, r := range s.Reports {
		where := "not shrunk (another of its kind was)"
		if r.Reproducer != "" {
			where = r.Reproducer
		}
		fmt.Fprintf(w, "  %s\n      -> %s\n", r.Summary, where)
	}
}

// checker is the Checker --backend and --target ask for.
func (ff *fuzzFlags) checker(stderr io.Writer) (*fuzz.Checker, string, string, error) {
	c := &fuzz.Checker{Fault: fuzzFault}
	switch *ff.tgt {
	case "both":
		c.Archs = fuzz.Archs
	case "all":
		c.Archs = append(slices.Clone(fuzz.Archs), "gfx942")
	case "sm_80", "sm_90a", "gfx942":
		c.Archs = []string{*ff.tgt}
	default:
		return nil, "", "", usageErr(fmt.Errorf("--target: unknown target %q (want sm_80, sm_90a, gfx942, both or all)", *ff.tgt))
	}
	switch *ff.backend {
	case "cpu":
		if clangcuda.Available() == nil && slices.ContainsFunc(c.Archs, func(a string) bool { return a != "gfx942" }) {
			c.Clang = true
			return c, "cpu", "CUDA C++ compiled by " + clangcuda.Clang, nil
		}
		return c, "cpu", "", nil
	case "hip-emu":
		if !slices.Contains(c.Archs, "gfx942") {
			return nil, "", "", usageErr(fmt.Errorf("--backend hip-emu runs gfx942's programs: --target gfx942 or all"))
		}
		if _, err := emu.Open(); err != nil {
			return nil, "", "", fmt.Errorf("--backend hip-emu: %w", err)
		}
		c.Emulate = true
		return c, "hip-emu", emu.Backend{}.Device(), nil
	case "gpu", "auto":
		g, err := fuzz.OpenGPU()
		if err != nil && *ff.backend == "gpu" {
			return nil, "", "", fmt.Errorf("--backend gpu: %w", err)
		}
		if err != nil {
			fmt.Fprintf(stderr, "fuzz: no GPU (%v); interpreter and emitters only\n", err)
			return c, "cpu", "", nil
		}
		c.GPU = g
		return c, "gpu", g.Device(), nil
	}
	return nil, "", "", usageErr(fmt.Errorf("--backend: unknown backend %q (want cpu, gpu, auto or hip-emu)", *ff.backend))
}

// replayFuzz checks the program saved in --replay's file and prints its
// outcome as JSON (fuzz.Isolated reads it).
func replayFuzz(ff *fuzzFlags, stdout io.Writer) error {
	p, err := fuzz.LoadProg(*ff.replay)
	if err != nil {
		return err
	}
	c, _, _, err := ff.checker(io.Discard)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(c.Check(p))
}

// isolatedCheck checks programs in new processes of this command, with
// this run's backend and targets (nil where the command's path is
// unknown).
func isolatedCheck(ff *fuzzFlags) func(*fuzz.Prog) fuzz.Outcome {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return fuzz.Isolated(exe, "fuzz", "--backend", *ff.backend, "--target", *ff.tgt, "--replay")
}
