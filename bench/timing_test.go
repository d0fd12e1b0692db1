package bench

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

func TestParseFlush(t *testing.T) {
	for _, f := range []Flush{FlushAuto, FlushNone, FlushL2, FlushRotate} {
		g, err := ParseFlush(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFlush(%q) = %v, %v", f, g, err)
		}
	}
	if f, err := ParseFlush(" OFF "); err != nil || f != FlushNone {
		t.Errorf("off: %v %v", f, err)
	}
	if _, err := ParseFlush("l3"); err == nil || !strings.Contains(err.Error(), "want auto, none, l2 or rotate") {
		t.Errorf("bad flush: %v", err)
	}
}

// Each suite is timed as its peers are: mla (and the copy it is held to)
// on rotated inputs, the attention and GEMM suites after do_bench's flush.
func TestSuiteFlush(t *testing.T) {
	want := map[string]Flush{"fa-sweep": FlushL2, "fa-short": FlushL2, "extra": FlushL2, "gemm": FlushL2, "mla": FlushRotate, "fa-tail": FlushL2, "fa-bwd": FlushL2, "rows": FlushRotate, "fa-mods": FlushL2,
		"fa-mods-bwd": FlushL2, "gemm-llm": FlushL2, "gemm-fp8": FlushL2, "fa-varlen": FlushL2, "fa-varlen-bwd": FlushL2}
	for name := range Suites {
		w, ok := want[name]
		if !ok {
			t.Errorf("suite %s: no flush expected here; add it", name)
			continue
		}
		if got := SuiteFlush(name); got != w {
			t.Errorf("SuiteFlush(%s) = %v, want %v", name, got, w)
		}
	}
}

func TestResolveFlush(t *testing.T) {
	const l2 = 50 << 20
	tests := []struct {
		f     Flush
		bytes int
		want  Flush
	}{
		{FlushAuto, 1 << 20, FlushL2},
		{FlushAuto, 2*l2 - 1, FlushL2},
		{FlushAuto, 2 * l2, FlushNone},
		{FlushAuto, 1 << 30, FlushNone},
		{FlushNone, 1 << 20, FlushNone},
		{FlushRotate, 1 << 30, FlushRotate},
		{FlushL2, 1 << 30, FlushL2},
	}
	for _, tt := range tests {
		if got := tt.f.Resolve(tt.bytes, l2); got != tt.want {
			t.Errorf("%v.Resolve(%d) = %v, want %v", tt.f, tt.bytes, got, tt.want)
		}
	}
	if FlushBytes(50<<20) != 256<<20 || FlushBytes(200<<20) != 400<<20 {
		t.Errorf("FlushBytes: %d %d", FlushBytes(50<<20), FlushBytes(200<<20))
	}
	for _, tt := range []struct{ in, want int }{{10 << 20, 11}, {1 << 10, 16}, {0, 16}, {200 << 20, 2}, {100 << 20, 2}, {99 << 20, 3}} {
		if got := RotateCopies(tt.in, 50<<20); got != tt.want {
			t.Errorf("RotateCopies(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	ts := []time.Duration{ms(3), ms(1), ms(2), ms(10)}
	orig := slices.Clone(ts)
	s := Summarize(ts, FlushL2)
	if s.Median != ms(3) || s.Spread != ms(9) || s.N != 4 || s.Flush != FlushL2 || s.MS() != 3 {
		t.Errorf("%+v", s)
	}
	if !slices.Equal(ts, orig) {
		t.Error("Summarize sorted its argument")
	}
	if !slices.Equal(s.Times, orig) || !slices.Equal(msList(s.Times), []float64{3, 1, 2, 10}) {
		t.Errorf("times %v, want the launches in their order", s.Times)
	}
	if s := Summarize(ts[:3], FlushNone); s.Median != ms(2) || s.Spread != ms(2) {
		t.Errorf("odd: %+v", s)
	}
	if s := Summarize(nil, FlushNone); s.N != 0 || s.Median != 0 {
		t.Errorf("empty: %+v", s)
	}
}

func attnProblem(t *testing.T) kernels.Problem {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(map[string]string{"batch": "2", "heads": "4", "heads-kv": "2", "seq-q": "64", "seq-kv": "128"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInputBytesAndRates(t *testing.T) {
	p := attnProblem(t)
	fn, err := kernels.Build(p, p.DefaultConfig(), ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	args := p.Inputs(1)
	want := (2*4*64*64 + 2*2*2*128*64) * 2 // Q, then K and V, bf16
	if got := InputBytes(fn, args); got != want {
		t.Errorf("InputBytes = %d, want %d", got, want)
	}
	tf, gb := Rates(p, 0.5)
	if math.Abs(tf-p.FLOPs()/0.5e-3/1e12) > 1e-12 {
		t.Errorf("TFLOP/s %v", tf)
	}
	if b := p.(Byter).Bytes(); math.Abs(gb-b/0.5e-3/1e9) > 1e-9 || gb <= 0 {
		t.Errorf("GB/s %v for %v bytes", gb, b)
	}
	if tf, gb := Rates(p, 0); tf != 0 || gb != 0 {
		t.Errorf("zero time: %v %v", tf, gb)
	}
}

func TestResultFields(t *testing.T) {
	p := attnProblem(t)
	r := Result{Suite: "s", Kernel: p.Kernel(), Impl: "tilego", Shape: p.Shape(), MS: 0.5, Spread: 0.02, Flush: "l2"}
	r.TFLOPs, r.GBps = Rates(p, r.MS)
	var b strings.Builder
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil {
		t.Fatal(err)
	}
	if m["spread_ms"] != 0.02 || m["flush"] != "l2" || m["gbps"].(float64) <= 0 || m["tflops"].(float64) <= 0 {
		t.Errorf("%s", b.String())
	}
	if l := r.Line(); !strings.Contains(l, "GB/s") || !strings.Contains(l, "±0.010") {
		t.Errorf("line %q", l)
	}
	// A split path's record says so.
	r.Impl, r.Steps, r.Splits = "tilego-split", 2, 3
	b.Reset()
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	m = nil
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil || m["steps"] != 2.0 || m["splits"] != 3.0 || m["impl"] != "tilego-split" {
		t.Errorf("%s (%v)", b.String(), err)
	}
	if l := r.Line(); !strings.Contains(l, "s tilego-split") || !strings.Contains(l, "(2 programs, 3 splits)") {
		t.Errorf("line %q", l)
	}
}
