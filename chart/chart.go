package chart

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Kind is how values are drawn.
type Kind int

const (
	Bars  Kind = iota // grouped bars: one group per category, one bar per series
	Lines             // one line per series across the categories
)

// Series is one implementation's values in a panel, one per category
// (NaN where it has none).
type Series struct {
	Name   string // the implementation: tilego, sdpa-flash, ...
	Values []float64
}

// Panel is one plot of a grid of small multiples.
type Panel struct {
	Title      string
	Categories []string
	Series     []Series
}

// Chart is a grid of panels sharing a y scale and a legend.
type Chart struct {
	Title    string
	Subtitle string
	XLabel   string
	YLabel   string
	Kind     Kind
	Columns  int // panels per row; 0 picks
	Width    int // pixels; 0 means 1200
	Panels   []*Panel
	Series   []string // every series name, in legend order
}

// Options select and label what FromRecords draws.
type Options struct {
	Suite string // "" takes the first suite of the records (fa-sweep first)
	Title string // "" makes one from the kernel, GPU and date
	GPU   string // for the title: "H200"
	Date  string // for the title: "2026-11-22"
	Kind  Kind
}

// FromRecords builds the chart of one suite: one series per
// implementation (tilego first), each point the fastest good record of that
// implementation at that shape. Failed records leave gaps.
func FromRecords(recs []Record, o Options) (*Chart, error) {
	suite := o.Suite
	if suite == "" {
		ss := Suites(recs)
		if len(ss) == 0 {
			return nil, errors.New("chart: no benchmark records")
		}
		suite = ss[0]
	}
	type point struct {
		s     shape
		impls map[string]Record
	}
	points := map[string]*point{}
	impls := map[string]bool{}
	kernels := map[string]bool{}
	for _, r := range recs {
		if r.Suite != suite || r.Shape == nil {
			continue
		}
		kernel := r.Kernel
		if kernel == "" {
			kernel = "flash-attention"
			if _, ok := r.Shape["m"]; ok {
				kernel = "gemm"
			}
		}
		impl := r.Impl
		if impl == "" {
			impl = "tilego"
		}
		s := normShape(kernel, r.Shape)
		k := kernel + "|" + s.key()
		pt := points[k]
		if pt == nil {
			pt = &point{s: s, impls: map[string]Record{}}
			points[k] = pt
		}
		old, ok := pt.impls[impl]
		if !ok || r.good() && (!old.good() || r.TFLOPs > old.TFLOPs) {
			pt.impls[impl] = r
		}
		impls[impl] = true
		kernels[kernel] = true
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("chart: no records of suite %q (have %s)", suite, strings.Join(Suites(recs), ", "))
	}
	c := &Chart{Kind: o.Kind, Series: sortImpls(impls), YLabel: "TFLOP/s (higher is better)"}

	// Panels and their categories.
	type cat struct {
		label string
		order []int
	}
	type pan struct {
		p     *Panel
		order []int
		cats  map[string]cat // by shape key
		pts   []*point
	}
	pans := map[string]*pan{}
	for _, pt := range points {
		title, order := panelOf(pt.s)
		pn := pans[title]
		if pn == nil {
			pn = &pan{p: &Panel{Title: title}, order: order, cats: map[string]cat{}}
			pans[title] = pn
		}
		pn.pts = append(pn.pts, pt)
	}
	var list []*pan
	for _, pn := range pans {
		long := false // spell out batch and heads when sequences repeat
		seen := map[string]bool{}
		for _, pt := range pn.pts {
			l, _ := categoryOf(pt.s, false)
			long = long || seen[l]
			seen[l] = true
		}
		for _, pt := range pn.pts {
			l, ord := categoryOf(pt.s, long)
			pn.cats[pt.s.key()] = cat{l, ord}
		}
		sort.Slice(pn.pts, func(i, j int) bool {
			return lessInts(pn.cats[pn.pts[i].s.key()].order, pn.cats[pn.pts[j].s.key()].order)
		})
		for _, pt := range pn.pts {
			pn.p.Categories = append(pn.p.Categories, pn.cats[pt.s.key()].label)
		}
		for _, impl := range c.Series {
			sr := Series{Name: impl, Values: make([]float64, len(pn.pts))}
			for i, pt := range pn.pts {
				sr.Values[i] = math.NaN()
				if r, ok := pt.impls[impl]; ok && r.good() {
					sr.Values[i] = r.TFLOPs
				}
			}
			pn.p.Series = append(pn.p.Series, sr)
		}
		list = append(list, pn)
	}
	sort.Slice(list, func(i, j int) bool {
		if !slices.Equal(list[i].order, list[j].order) {
			return lessInts(list[i].order, list[j].order)
		}
		return list[i].p.Title < list[j].p.Title
	})
	dims := map[string]bool{}
	for _, pn := range list {
		c.Panels = append(c.Panels, pn.p)
		if len(pn.order) > 3 {
			dims[fmt.Sprint(pn.order[3:])] = true
		}
	}
	// A grid of mask × head dim when the panels form one.
	if n := len(dims); n >= 2 && n <= 4 && len(list)%n == 0 {
		c.Columns = n
	}

	all := []Record{}
	for _, pt := range points {
		for _, r := range pt.impls {
			all = append(all, r)
		}
	}
	kernelName := "FlashAttention forward"
	c.XLabel = "sequence length"
	if kernels["gemm"] && !kernels["flash-attention"] {
		kernelName, c.XLabel = "GEMM", "M×N×K"
	} else if kernels["gemm"] {
		kernelName, c.XLabel = "FlashAttention forward and GEMM", "shape"
	}
	c.Title = o.Title
	if c.Title == "" {
		c.Title = kernelName
		if o.GPU != "" {
			c.Title += " on " + o.GPU
		}
		if o.Date != "" {
			c.Title += ", " + o.Date
		}
		c.Title += " (" + suite + ")"
	}
	c.Subtitle = subtitle(points2shapes(all))
	return c, nil
}

func points2shapes(rs []Record) []shape {
	var out []shape
	for _, r := range rs {
		kernel := r.Kernel
		if kernel == "" {
			kernel = "flash-attention"
		}
		out = append(out, normShape(kernel, r.Shape))
	}
	return out
}

// subtitle states what the shapes share: dtype, layout, and the FA3
// sweep's constant tokens (batch × seq) and width (heads × dim).
func subtitle(ss []shape) string {
	same := func(f func(shape) string) string {
		v := ""
		for i, s := range ss {
			x := f(s)
			if i > 0 && x != v {
				return ""
			}
			v = x
		}
		return v
	}
	var parts []string
	if d := same(func(s shape) string { return s.str("dtype") }); d != "" {
		parts = append(parts, d)
	}
	attn := same(func(s shape) string { return fmt.Sprint(s.gemm) }) == "false"
	if l := same(func(s shape) string { return s.str("layout") }); attn && l != "" {
		parts = append(parts, strings.ToUpper(l))
	}
	if attn {
		if t := same(func(s shape) string { return fmt.Sprint(s.int("batch") * s.int("seq_q")) }); t != "" {
			n := ss[0].int("batch") * ss[0].int("seq_q")
			parts = append(parts, "batch × seq = "+seqText(n)+" tokens")
		}
		if w := same(func(s shape) string { return fmt.Sprint(s.int("heads") * s.int("dim")) }); w != "" {
			parts = append(parts, "heads × dim = "+w)
		}
	}
	return strings.Join(parts, ", ")
}

var runDirRE = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})-([A-Za-z0-9]+)`)

// DateGPU reads a run's date and GPU from a path like
// docs/bench/2026-11-22-h200/tilego.jsonl: "2026-11-22", "H200".
func DateGPU(path string) (date, gpu string) {
	m := runDirRE.FindStringSubmatch(path)
	if m == nil {
		return "", ""
	}
	return m[1], strings.ToUpper(m[2])
}
