package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const runDir = "../docs/bench/2026-11-22-h200"

func realRecords(t *testing.T) []Record {
	t.Helper()
	recs, err := ReadFiles(filepath.Join(runDir, "tilego.jsonl"), filepath.Join(runDir, "peers.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// svgInfo parses an SVG with encoding/xml and collects what the tests
// look at.
type svgInfo struct {
	series  map[string]int // data-series -> bars or points
	legend  []string
	panels  []string
	texts   []string
	title   string
	lines   int
	rootTag string
}

func parseSVG(t *testing.T, data []byte) svgInfo {
	t.Helper()
	info := svgInfo{series: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []string
	cur := ""
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				info.rootTag = tok.Name.Local
			}
			stack = append(stack, tok.Name.Local)
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "data-series":
					cur = a.Value
					info.series[cur] += 0
				case "data-legend":
					info.legend = append(info.legend, a.Value)
				case "data-panel":
					info.panels = append(info.panels, a.Value)
				}
			}
			if (tok.Name.Local == "rect" || tok.Name.Local == "circle") && cur != "" {
				info.series[cur]++
			}
			if tok.Name.Local == "polyline" {
				info.lines++
			}
		case xml.EndElement:
			depth--
			if tok.Name.Local == "g" && cur != "" && len(stack) > 0 {
				cur = ""
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "text" {
				info.texts = append(info.texts, string(tok))
			}
			if len(stack) == 2 && stack[1] == "title" {
				info.title = string(tok)
			}
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced document")
	}
	return info
}

func TestRealRecordsChart(t *testing.T) {
	recs := realRecords(t)
	if got := Suites(recs); !slices.Equal(got, []string{"fa-sweep", "extra", "gemm"}) {
		t.Errorf("suites %v", got)
	}
	date, gpu := DateGPU(runDir + "/tilego.jsonl")
	if date != "2026-11-22" || gpu != "H200" {
		t.Errorf("DateGPU: %q %q", date, gpu)
	}
	c, err := FromRecords(recs, Options{GPU: gpu, Date: date})
	if err != nil {
		t.Fatal(err)
	}
	impls := []string{"tilego", "sdpa-flash", "sdpa-cudnn", "flex"}
	if !slices.Equal(c.Series, impls) || len(c.Panels) != 6 || c.Columns != 3 {
		t.Fatalf("series %v, %d panels, %d columns", c.Series, len(c.Panels), c.Columns)
	}
	wantPanels := []string{"head dim 64, non-causal", "head dim 128, non-causal", "head dim 256, non-causal",
		"head dim 64, causal", "head dim 128, causal", "head dim 256, causal"}
	for i, p := range c.Panels {
		if p.Title != wantPanels[i] || !slices.Equal(p.Categories, []string{"512", "1k", "2k", "4k", "8k", "16k"}) || len(p.Series) != 4 {
			t.Errorf("panel %d: %q %v", i, p.Title, p.Categories)
		}
	}
	// d64 non-causal 512: tilego 280, FA2 262 (table.py's numbers).
	if v := c.Panels[0].Series[0].Values[0]; math.Abs(v-279.98) > 0.01 {
		t.Errorf("tilego d64 512: %v", v)
	}
	if v := c.Panels[0].Series[1].Values[0]; math.Round(v) != 262 {
		t.Errorf("FA2 d64 512: %v", v)
	}
	if c.Subtitle != "bf16, BSHD, batch × seq = 16k tokens, heads × dim = 2048" {
		t.Errorf("subtitle %q", c.Subtitle)
	}
	for _, kind := range []Kind{Bars, Lines} {
		c.Kind = kind
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		info := parseSVG(t, b.Bytes())
		if info.rootTag != "svg" || !strings.Contains(info.title, "H200") || !strings.Contains(info.title, "2026-11-22") {
			t.Errorf("root %q, title %q", info.rootTag, info.title)
		}
		got := []string{}
		for s, n := range info.series {
			got = append(got, s)
			if n != 36 {
				t.Errorf("kind %d: series %s has %d marks, want 36", kind, s, n)
			}
		}
		slices.Sort(got)
		want := slices.Clone(impls)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("kind %d: series %v, want one per implementation %v", kind, got, want)
		}
		if !slices.Equal(info.legend, impls) || !slices.Equal(info.panels, wantPanels) {
			t.Errorf("legend %v, panels %v", info.legend, info.panels)
		}
		all := strings.Join(info.texts, "|")
		for _, w := range []string{"TFLOP/s", "sequence length", "FlashAttention-2 (SDPA flash)", "cuDNN (SDPA)", "FlexAttention", "|800|", "|16k|"} {
			if !strings.Contains(all, w) {
				t.Errorf("kind %d: no text %q", kind, w)
			}
		}
		if kind == Lines && info.lines != 24 {
			t.Errorf("%d lines, want 24", info.lines)
		}
	}
}

// The chart in the docs is what the records give today.
func TestDocsChartUpToDate(t *testing.T) {
	path := "../docs/fa-sweep-2026-11-22-h200.svg"
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	date, gpu := DateGPU(runDir)
	c, err := FromRecords(realRecords(t), Options{Date: date, GPU: gpu})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s is stale; regenerate it:\n  go run ./chart/cmd %s/tilego.jsonl %s/peers.jsonl -o docs/fa-sweep-2026-11-22-h200.svg", path, runDir[3:], runDir[3:])
	}
}

func TestJoinAndGaps(t *testing.T) {
	in := `not json
{"suite":"s","kernel":"flash-attention","impl":"tilego","shape":{"batch":2,"heads":8,"heads_kv":8,"seq_q":1024,"seq_kv":1024,"dim":64,"dim_v":64,"causal":false,"dtype":"bf16","layout":"bshd","scale":0.125},"tflops":100}
{"suite":"s","kernel":"flash-attention","impl":"tilego","shape":{"batch":2,"heads":8,"seq_q":1024,"dim":64,"causal":false,"dtype":"bf16","layout":"bshd"},"tflops":120}
{"suite": "s", "kernel": "flash-attention", "impl": "a<b&c", "shape": {"batch": "2", "heads": 8.0, "seq_q": 1024, "dim": 64, "causal": "false", "dtype": "bf16", "layout": "bshd"}, "tflops": 90}
{"suite": "s", "kernel": "flash-attention", "impl": "sdpa-flash", "shape": {"batch": 2, "heads": 8, "seq_q": 1024, "dim": 64, "causal": false, "dtype": "bf16", "layout": "bshd"}, "error": "OOM"}
{"suite": "s", "kernel": "flash-attention", "impl": "sdpa-flash", "shape": {"batch": 1, "heads": 8, "seq_q": 2048, "dim": 64, "causal": false, "dtype": "bf16", "layout": "bshd"}, "tflops": 80}
{"suite": "s", "kernel": "flash-attention", "impl": "tilego", "shape": {"batch": 1, "heads": 8, "seq_q": 2048, "dim": 64, "causal": true, "dtype": "bf16", "layout": "bshd"}, "tflops": 70}
{"suite": "peak", "impl": "d2d-copy", "gbps": 4000}
{"suite": "other", "kernel": "gemm", "impl": "tilego", "shape": {"m": 64, "n": 64, "k": 64, "dtype": "bf16"}, "tflops": 1}
`
	recs, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromRecords(recs, Options{Suite: "s", Title: `A "title" <with> & marks`})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Series, []string{"tilego", "sdpa-flash", "a<b&c"}) || len(c.Panels) != 2 {
		t.Fatalf("series %v, %d panels", c.Series, len(c.Panels))
	}
	p := c.Panels[0] // non-causal: 1k and 2k
	if p.Title != "head dim 64, non-causal" || !slices.Equal(p.Categories, []string{"1k", "2k"}) {
		t.Fatalf("panel %q %v", p.Title, p.Categories)
	}
	tilego, flash, odd := p.Series[0].Values, p.Series[1].Values, p.Series[2].Values
	if tilego[0] != 120 || !math.IsNaN(tilego[1]) || !math.IsNaN(flash[0]) || flash[1] != 80 || odd[0] != 90 {
		t.Errorf("values %v %v %v", tilego, flash, odd)
	}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	info := parseSVG(t, b.Bytes())
	if info.series["tilego"] != 2 || info.series["sdpa-flash"] != 1 || info.series["a<b&c"] != 1 {
		t.Errorf("marks %v", info.series)
	}
	if info.title != `A "title" <with> & marks` {
		t.Errorf("title %q", info.title)
	}
	if _, err := FromRecords(recs, Options{Suite: "nope"}); err == nil || !strings.Contains(err.Error(), "have other, s") {
		t.Errorf("unknown suite: %v", err)
	}
	if _, err := FromRecords(nil, Options{}); err == nil {
		t.Error("no records, no error")
	}
	c, _ = FromRecords(recs, Options{Suite: "other"})
	if c.Panels[0].Title != "GEMM" || c.Panels[0].Categories[0] != "64×64×64" || c.XLabel != "M×N×K" {
		t.Errorf("gemm: %+v", c.Panels[0])
	}
}

func TestNiceScale(t *testing.T) {
	for _, tt := range []struct{ max, top, step float64 }{
		{684, 800, 200}, {521, 600, 100}, {794, 1000, 200}, {9.5, 10, 2}, {9.7, 12, 2}, {0, 1, 0.2}, {100, 120, 20},
	} {
		top, step := niceScale(tt.max)
		if top != tt.top || step != tt.step {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tt.max, top, step, tt.top, tt.step)
		}
	}
	if d, g := DateGPU("x/y.jsonl"); d != "" || g != "" {
		t.Errorf("DateGPU of a plain path: %q %q", d, g)
	}
}
