// Package chart draws benchmark results as SVG (pure Go, no dependencies):
// TFLOP/s per shape for tilego and each peer, from the JSON lines that
// `tilego bench` and scripts/peers.py write. Records are joined on (suite,
// kernel, shape) as scripts/table.py joins them, and a shape's panel and
// category come from its fields: for attention one panel per head dim,
// mask and head grouping, one category per sequence length.
package chart

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Record is one benchmark result line.
type Record struct {
	Suite  string         `json:"suite"`
	Kernel string         `json:"kernel"`
	Impl   string         `json:"impl"`
	Shape  map[string]any `json:"shape"`
	MS     float64        `json:"ms"`
	TFLOPs float64        `json:"tflops"`
	Error  any            `json:"error"`
	Note   any            `json:"note"`
}

// good reports whether r ran and has a speed.
func (r Record) good() bool {
	return !truthy(r.Error) && r.TFLOPs > 0 && !math.IsInf(r.TFLOPs, 0) && !math.IsNaN(r.TFLOPs)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	}
	return true
}

// Read parses JSON lines; lines that are not JSON objects (logs, blank
// lines) are skipped, as table.py skips them.
func Read(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			continue
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// ReadFiles reads the records of every file.
func ReadFiles(paths ...string) ([]Record, error) {
	var out []Record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		recs, err := Read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, recs...)
	}
	return out, nil
}

// The join keys, as scripts/table.py's.
var (
	attnKeys = []string{"batch", "heads", "heads_kv", "seq_q", "seq_kv", "dim", "dim_v", "causal", "dtype", "layout"}
	gemmKeys = []string{"m", "n", "k", "dtype"}
)

// shape is a record's shape reduced to the join keys, values normalized
// (integral floats and numeric strings to int, "true"/"false" to bool).
type shape struct {
	gemm bool
	v    map[string]any
}

func normVal(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case string:
		t := strings.ToLower(strings.TrimSpace(x))
		if t == "true" || t == "false" {
			return t == "true"
		}
		if n, err := strconv.Atoi(t); err == nil {
			return n
		}
		return strings.TrimSpace(x)
	}
	return v
}

func normShape(kernel string, raw map[string]any) shape {
	s := map[string]any{}
	for k, v := range raw {
		s[k] = normVal(v)
	}
	_, hasM := s["m"]
	_, hasHeads := s["heads"]
	if kernel == "gemm" || hasM && !hasHeads {
		out := shape{gemm: true, v: map[string]any{}}
		for _, k := range gemmKeys {
			out.v[k] = s[k]
		}
		return out
	}
	def := func(k, from string) {
		if _, ok := s[k]; !ok {
			s[k] = s[from]
		}
	}
	def("heads_kv", "heads")
	def("seq_kv", "seq_q")
	def("dim_v", "dim")
	out := shape{v: map[string]any{}}
	for _, k := range attnKeys {
		out.v[k] = s[k]
	}
	return out
}

func (s shape) key() string {
	keys := attnKeys
	if s.gemm {
		keys = gemmKeys
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v;", k, s.v[k])
	}
	return b.String()
}

func (s shape) int(k string) int {
	n, _ := s.v[k].(int)
	return n
}

func (s shape) str(k string) string {
	if s.v[k] == nil {
		return ""
	}
	return fmt.Sprint(s.v[k])
}

func (s shape) bool(k string) bool {
	b, _ := s.v[k].(bool)
	return b
}

// seqText writes 1024 as 1k, as table.py does.
func seqText(n int) string {
	if n > 0 && n%1024 == 0 {
		return fmt.Sprintf("%dk", n/1024)
	}
	return strconv.Itoa(n)
}

// panelOf is the panel a shape belongs to: its title and a sort key.
func panelOf(s shape) (title string, order []int) {
	if s.gemm {
		t := "GEMM"
		if d := s.str("dtype"); d != "" && d != "bf16" {
			t += " " + d
		}
		return t, []int{2}
	}
	d, dv := s.int("dim"), s.int("dim_v")
	t := fmt.Sprintf("head dim %d", d)
	if dv != d {
		t = fmt.Sprintf("head dims %d/%d", d, dv)
	}
	if s.bool("causal") {
		t += ", causal"
	} else {
		t += ", non-causal"
	}
	h, hkv := s.int("heads"), s.int("heads_kv")
	group := 0
	if hkv != h && hkv > 0 {
		t += fmt.Sprintf(", GQA %d/%d", h, hkv)
		group = h / hkv
	}
	if dt := s.str("dtype"); dt != "" && dt != "bf16" {
		t += ", " + dt
	}
	if l := s.str("layout"); l != "" && l != "bshd" {
		t += ", " + strings.ToUpper(l)
	}
	causal := 0
	if s.bool("causal") {
		causal = 1
	}
	return t, []int{0, group, causal, d, dv}
}

// categoryOf is a shape's label within its panel; long spells out batch
// and heads too, for panels where the sequence alone repeats.
func categoryOf(s shape, long bool) (label string, order []int) {
	if s.gemm {
		return fmt.Sprintf("%s×%s×%s", seqText(s.int("m")), seqText(s.int("n")), seqText(s.int("k"))), []int{s.int("m"), s.int("n"), s.int("k")}
	}
	sq, skv := s.int("seq_q"), s.int("seq_kv")
	l := seqText(sq)
	if skv != sq {
		l += "/" + seqText(skv)
	}
	if long {
		l += fmt.Sprintf(" b%dh%d", s.int("batch"), s.int("heads"))
	}
	return l, []int{sq, skv, s.int("batch"), s.int("heads")}
}

// implOrder puts tilego first, then the peers table.py knows, then the
// rest by name.
var implOrder = []string{"tilego", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flex", "cublas"}

// Names are the legend's names of the implementations.
var Names = map[string]string{
	"tilego":         "tilego",
	"sdpa-flash":     "FlashAttention-2 (SDPA flash)",
	"sdpa-cudnn":     "cuDNN (SDPA)",
	"sdpa-efficient": "SDPA mem-efficient",
	"flex":           "FlexAttention",
	"cublas":         "cuBLAS",
}

func sortImpls(seen map[string]bool) []string {
	var out []string
	for _, i := range implOrder {
		if seen[i] {
			out = append(out, i)
		}
	}
	var rest []string
	for i := range seen {
		if !contains(implOrder, i) {
			rest = append(rest, i)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func lessInts(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// Suites lists the suites the records hold, in table.py's order.
func Suites(recs []Record) []string {
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Suite != "" && r.Suite != "peak" && r.Shape != nil {
			seen[r.Suite] = true
		}
	}
	var out []string
	for _, s := range []string{"fa-sweep", "extra", "gemm"} {
		if seen[s] {
			out = append(out, s)
			delete(seen, s)
		}
	}
	var rest []string
	for s := range seen {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
