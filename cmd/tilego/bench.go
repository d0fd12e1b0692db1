package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/chart"
	"github.com/tilego/tilego/kernels"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// cmdBench runs benchmark suites on the GPU: one JSON line per point on
// stdout (or --out), a one-line summary per point on stderr.
func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error is printed in one line by the caller
	suites := fs.String("suite", "fa-sweep,extra,gemm", "comma-separated suites: "+suiteNames())
	quick := fs.Bool("quick", false, "fewer points (smoke test)")
	warmup, repeats, sms := new(int), new(int), new(int)
	boundedInt(fs, warmup, "warmup", 10, 0, maxRepeats, "launches before timing")
	boundedInt(fs, repeats, "repeats", 30, 1, maxRepeats, "timed launches; the median is reported")
	out := fs.String("out", "", "write JSON lines here instead of stdout")
	seed := fs.Uint64("seed", 1, "seed of the random inputs")
	flushName := fs.String("flush", "", "keep the L2 cache cold between timed launches: l2 (a memset before every launch, as triton's do_bench times the peers), rotate (cycle through copies of the inputs), auto (l2 when the inputs fit in twice the L2, else none) or none; default: each suite's (rotate for mla, l2 for the others)")
	chartOut := fs.String("chart", "", "also draw TFLOP/s per shape as an SVG chart here (one file per suite: FILE, FILE-SUITE.svg)")
	peers := fs.String("peers", "", "JSON lines of peers (scripts/peers.py) to draw beside tilego in --chart")
	match := fs.String("match", "", "keep only the configs whose fields, as the results print them (\"m=64 stages=2 threads=256 ws=true\"), match this regular expression")
	shape := fs.String("shape", "", "keep only the points whose shape, as the results print it (\"batch=128 heads=16 ...\"), matches this regular expression (a split path and its single program stay together)")
	boundedInt(fs, sms, "sms", 0, 0, 1<<16, "SM count the split-KV decisions are made for (mla, fa-tail); 0: the device's")
	if err := fs.Parse(args); err != nil {
		return usageErr(fmt.Errorf("%v (tilego bench --help lists the flags)", flagErr(fs, err)))
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Errorf("unexpected argument %q (flags are --name value)", fs.Arg(0)))
	}
	var flush bench.Flush
	var err error
	if *flushName != "" {
		if flush, err = bench.ParseFlush(*flushName); err != nil {
			return fmt.Errorf("--flush: %w", err)
		}
	}
	// Mistyped suites and expressions are reported before the GPU is
	// opened, so that they show on a machine without one too.
	names := strings.Split(*suites, ",")
	for _, name := range names {
		if _, ok := bench.Suites[name]; !ok {
			return fmt.Errorf("unknown suite %q (have %s)", name, suiteNames())
		}
	}
	for _, f := range [][2]string{{"shape", *shape}, {"match", *match}} {
		if _, err := flagRegexp(f[0], f[1]); err != nil {
			return err
		}
	}
	var peerRecs []chart.Record
	if *peers != "" {
		if peerRecs, err = chart.ReadFiles(*peers); err != nil {
			return err
		}
	}
	b, err := openGPU()
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
	if *sms == 0 {
		if *sms, err = deviceSMs(); err != nil {
			return err
		}
	}
	var records bytes.Buffer // for --chart
	var ran []string
	for _, name := range names {
		points, err := bench.Suites[name](bench.SuiteOptions{Quick: *quick, SMs: *sms})
		if err != nil {
			return err
		}
		if points, err = matchShapes(points, *shape); err != nil {
			return err
		}
		if len(points) == 0 {
			continue
		}
		if points, err = matchConfigs(points, *match); err != nil {
			return err
		}
		var werr error
		f := flush
		if *flushName == "" {
			f = bench.SuiteFlush(name)
		}
		opt := bench.Options{Warmup: *warmup, Repeats: *repeats, Seed: *seed, Flush: f,
			Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
		lost := bench.RunSuite(b, points, opt, func(r bench.Result) {
			fmt.Fprintln(stderr, r.Line())
			if err := bench.Write(w, r); err != nil && werr == nil {
				werr = err
			}
			bench.Write(&records, r) //nolint:errcheck // a bytes.Buffer
		})
		if werr != nil {
			return werr
		}
		if lost != nil { // the device is gone: the later suites cannot run
			return fmt.Errorf("suite %s: %w", name, lost)
		}
		ran = append(ran, name)
	}
	if *chartOut == "" {
		return nil
	}
	recs, err := chart.Read(&records)
	if err != nil {
		return err
	}
	gpu, _, _ := strings.Cut(b.Device(), " (")
	paths, err := writeCharts(*chartOut, append(recs, peerRecs...), ran, gpu, time.Now().Format("2006-01-02"))
	for _, p := range paths {
		fmt.Fprintf(stderr, "chart: %s\n", p)
	}
	return err
}

// deviceSMs is device 0's SM count.
func deviceSMs() (int, error) {
	d, err := drv.Open(0)
	if err != nil {
		return 0, fmt.Errorf("the SM count (pass --sms): %w", err)
	}
	defer d.Close()
	return d.SMCount, nil
}

// writeCharts draws one chart per suite that has records: the first at
// path, the others beside it as PATH-SUITE.svg.
func writeCharts(path string, recs []chart.Record, suites []string, gpu, date string) ([]string, error) {
	var paths []string
	for _, suite := range suites {
		c, err := chart.FromRecords(recs, chart.Options{Suite: suite, GPU: gpu, Date: date})
		if err != nil {
			continue // no records of this suite (e.g. fa-short's are fa-sweep's)
		}
		p := path
		if len(paths) > 0 {
			p = strings.TrimSuffix(path, ".svg") + "-" + suite + ".svg"
		}
		var buf bytes.Buffer
		if err := c.WriteSVG(&buf); err != nil {
			return paths, err
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--chart: no records to draw")
	}
	return paths, nil
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
		for _, a := range args {
			if isHelp(a) {
				benchUsage(stdout)
				return 0
			}
		}
		if err := cmdBench(args, stdout, stderr); err != nil {
			return report(stderr, "bench", err)
		}
		return 0
	},
	usage: benchUsage,
}

func benchUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: tilego bench [--suite %s] [--quick] [--warmup N] [--repeats N] [--flush l2|rotate|auto|none]\n", suiteNames())
	fmt.Fprintf(w, "                    [--sms N] [--out FILE] [--chart FILE.svg [--peers PEERS.jsonl]]\n\n")
	fmt.Fprintf(w, "Runs each suite's points on the GPU: every candidate config is built, run once on\n")
	fmt.Fprintf(w, "poisoned outputs and checked against float64, then timed (median of --repeats after\n")
	fmt.Fprintf(w, "--warmup launches); the fastest correct config is reported as one JSON line per point.\n")
	fmt.Fprintf(w, "Each suite is timed as scripts/peers.py times its peers: with the L2 flushed before every\n")
	fmt.Fprintf(w, "launch (--flush l2, triton's do_bench), or for mla on rotated copies of the inputs\n")
	fmt.Fprintf(w, "(--flush rotate; a flush leaves the L2 full of dirty lines that a memory-bound launch\n")
	fmt.Fprintf(w, "then writes back). The spread (max - min) and, where the\n")
	fmt.Fprintf(w, "kernel declares its bytes, GB/s are reported too. --chart draws TFLOP/s per shape as\n")
	fmt.Fprintf(w, "SVG (with --peers beside).\n")
	fmt.Fprintf(w, "mla (MLA decoding) and fa-tail (FlashAttention's tail split) time a split path, a split\n")
	fmt.Fprintf(w, "kernel then its combine (impl tilego-split, timed from the first start to the last end),\n")
	fmt.Fprintf(w, "and the single program (impl tilego) on the same inputs; --sms sets the SM count the\n")
	fmt.Fprintf(w, "splits are chosen for (default: the device's). fa-bwd times the FlashAttention backward's\n")
	fmt.Fprintf(w, "three programs together; its inputs' O and LSE come from a float64 forward on the host.\n")
}

// flagRegexp compiles the regular expression of flag --name.
func flagRegexp(name, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return re, nil
}

// matchShapes keeps the points whose shape matches expr (all of them
// when expr is empty), with the points that share their inputs.
func matchShapes(points []bench.Point, expr string) ([]bench.Point, error) {
	if expr == "" {
		return points, nil
	}
	re, err := flagRegexp("shape", expr)
	if err != nil {
		return nil, err
	}
	var keep []bench.Point
	for i := 0; i < len(points); {
		j := i + 1 // points[i:j] share their inputs: kept or dropped together
		for j < len(points) && points[j].SameInputs {
			j++
		}
		for _, p := range points[i:j] {
			if re.MatchString(p.Problem.Shape().String()) {
				keep = append(keep, points[i:j]...)
				break
			}
		}
		i = j
	}
	return keep, nil
}

// matchConfigs keeps the configs of each point whose fields match expr
// (all of them when expr is empty); a point left with none is an error,
// since it would time nothing.
func matchConfigs(points []bench.Point, expr string) ([]bench.Point, error) {
	if expr == "" {
		return points, nil
	}
	re, err := flagRegexp("match", expr)
	if err != nil {
		return nil, err
	}
	for i, p := range points {
		var keep []kernels.Config
		for _, c := range p.Configs {
			if re.MatchString(kernels.ConfigFields(c).String()) {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("--match %q: no config of %s %s matches", expr, p.Suite, p.Problem.Shape())
		}
		points[i].Configs = keep
	}
	return points, nil
}
