// Command chart draws benchmark records as an SVG chart of TFLOP/s per
// shape, one series per implementation:
//
//	go run ./chart/cmd docs/bench/2026-11-22-h200/tilego.jsonl docs/bench/2026-11-22-h200/peers.jsonl -o out.svg
//
// Records are joined on (suite, kernel, shape) as scripts/table.py joins
// them; the title takes the date and GPU from a path like
// .../2026-11-22-h200/... unless -title, -gpu or -date say otherwise.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tilego/tilego/chart"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the SVG here (- for stdout)")
	suite := fs.String("suite", "", "the suite to draw (default: the first of fa-sweep, extra, gemm in the records)")
	title := fs.String("title", "", "the chart's title (default: from the kernel, GPU and date)")
	gpu := fs.String("gpu", "", "the GPU named in the title (default: from the path, e.g. 2026-11-22-h200 gives H200)")
	date := fs.String("date", "", "the date in the title (default: from the path)")
	kind := fs.String("kind", "bars", "bars or lines")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./chart/cmd RECORDS.jsonl... -o OUT.svg [flags]\n\n")
		fs.PrintDefaults()
	}
	// Flags may follow the files.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 || *out == "" {
		fs.Usage()
		return 2
	}
	o := chart.Options{Suite: *suite, Title: *title, GPU: *gpu, Date: *date}
	switch *kind {
	case "bars":
	case "lines":
		o.Kind = chart.Lines
	default:
		fmt.Fprintf(stderr, "chart: -kind %q: want bars or lines\n", *kind)
		return 2
	}
	if d, g := chart.DateGPU(files[0]); o.Date == "" || o.GPU == "" {
		o.Date, o.GPU = cmp(o.Date, d), cmp(o.GPU, g)
	}
	recs, err := chart.ReadFiles(files...)
	if err != nil {
		fmt.Fprintf(stderr, "chart: %v\n", err)
		return 1
	}
	c, err := chart.FromRecords(recs, o)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	var w io.Writer = stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "chart: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if err := c.WriteSVG(w); err != nil {
		fmt.Fprintf(stderr, "chart: %v\n", err)
		return 1
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "wrote %s: %d panels, series %v\n", *out, len(c.Panels), c.Series)
	}
	return 0
}

// cmp is a if set, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
