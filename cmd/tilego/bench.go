package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/target/cuda"
)

// cmdBench runs benchmark suites on the GPU: one JSON line per point on
// stdout (or --out), a one-line summary per point on stderr.
func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suites := fs.String("suite", "fa-sweep,extra,gemm", "comma-separated suites: "+suiteNames())
	quick := fs.Bool("quick", false, "fewer points (smoke test)")
	warmup := fs.Int("warmup", 10, "launches before timing")
	repeats := fs.Int("repeats", 30, "timed launches; the median is reported")
	out := fs.String("out", "", "write JSON lines here instead of stdout")
	seed := fs.Uint64("seed", 1, "seed of the random inputs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := cuda.Open(0)
	if err != nil {
		return fmt.Errorf("bench needs a GPU: %w", err)
	}
	var w io.Writer = stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	fmt.Fprintf(stderr, "device: %s\n", b.Device())
	for _, name := range strings.Split(*suites, ",") {
		mk, ok := bench.Suites[name]
		if !ok {
			return fmt.Errorf("unknown suite %q (have %s)", name, suiteNames())
		}
		points, err := mk(*quick)
		if err != nil {
			return err
		}
		var werr error
		opt := bench.Options{Warmup: *warmup, Repeats: *repeats, Seed: *seed,
			Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
		bench.RunSuite(b, points, opt, func(r bench.Result) {
			fmt.Fprintln(stderr, r.Line())
			if err := bench.Write(w, r); err != nil && werr == nil {
				werr = err
			}
		})
		if werr != nil {
			return werr
		}
	}
	return nil
}

func suiteNames() string {
	var names []string
	for n := range bench.Suites {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

var benchCmd = &command{
	name:    "bench",
	args:    "[--suite S] [--quick]",
	summary: "time the library on the GPU (results checked against float64 first)",
	main: func(args []string, stdout, stderr io.Writer) int {
		if err := cmdBench(args, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "tilego bench: %v\n", err)
			return 1
		}
		return 0
	},
	usage: func(w io.Writer) {
		fmt.Fprintf(w, "Usage: tilego bench [--suite %s] [--quick] [--warmup N] [--repeats N] [--out FILE]\n\n", suiteNames())
		fmt.Fprintf(w, "Runs each suite's points on the GPU: every candidate config is built, run once on\n")
		fmt.Fprintf(w, "poisoned outputs and checked against float64, then timed (median of --repeats after\n")
		fmt.Fprintf(w, "--warmup launches); the fastest correct config is reported as one JSON line per point.\n")
	},
}
