package main

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/bench"
	drv "github.com/tilego/tilego/runtime/cuda"
)

func tilegoOut(t *testing.T, wantCode int, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	if code := tilego(args, &o, &e); code != wantCode {
		t.Fatalf("tilego %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, o.String(), e.String())
	}
	return o.String(), e.String()
}

func TestList(t *testing.T) {
	out, _ := tilegoOut(t, 0, "list")
	for _, want := range []string{"flash-attention:", "--heads-kv N", "--causal ", "gemm:", "--trans-b"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}

func TestRunJSON(t *testing.T) {
	out, stderr := tilegoOut(t, 0, "run", "gemm", "--m", "40", "--n", "24", "--k", "50", "--trans-b", "--json")
	if !strings.Contains(stderr, "no CUDA driver") { // this machine has no GPU
		t.Errorf("auto did not say why it fell back: %q", stderr)
	}
	var r struct {
		Kernel, Backend, Checked string
		OK                       bool
		Shape                    map[string]any
		Errors                   map[string]float64
		TFLOPS                   float64
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Kernel != "gemm" || r.Backend != "cpu" || r.Checked != "all" || !r.OK || r.Shape["trans_b"] != true ||
		r.Errors["c_rel"] > 1e-4 || r.TFLOPS <= 0 {
		t.Errorf("%+v", r)
	}
}

// --flush-l2 flushes a GPU's L2; the interpreter has none, so it runs as
// without the flag and its JSON says nothing of a flush.
func TestRunFlushL2OnCPU(t *testing.T) {
	out, _ := tilegoOut(t, 0, "run", "gemm", "--m", "16", "--n", "16", "--k", "16", "--backend", "cpu", "--flush-l2", "--json")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, ok := r["flush"]; ok || r["ok"] != true {
		t.Errorf("flush %v, ok %v; want no flush on the interpreter, a checked result", r["flush"], r["ok"])
	}
}

func TestRunText(t *testing.T) {
	out, _ := tilegoOut(t, 0, "run", "flash-attention", "--backend", "cpu", "--heads", "2", "--heads-kv", "1", "--seq-q", "40", "--causal")
	for _, want := range []string{"backend  cpu: CPU interpreter", "O rel", "LSE rel", "checked  all", "TFLOP/s", "GB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// run --backend hip-emu runs the gfx942 programs in the emulator and checks
// them against float64 like any backend: FlashAttention, GEMM, and MLA
// decoding (its cache blocks in halves), single and split with its
// combine.
func TestRunHIPEmu(t *testing.T) {
	for _, args := range [][]string{
		{"flash-attention", "--heads", "2", "--heads-kv", "1", "--seq-q", "70", "--seq-kv", "90", "--causal"},
		{"gemm", "--m", "100", "--n", "72", "--k", "48"},
		{"mla-decode", "--batch", "3", "--mean-kv", "100"},
		{"mla-decode", "--splits", "2", "--heads", "32", "--seq-q", "2", "--batch", "2", "--mean-kv", "150", "--dtype", "f16"},
	} {
		out, _ := tilegoOut(t, 0, append(append([]string{"run"}, args...), "--backend", "hip-emu")...)
		for _, want := range []string{"backend  hip-emu: gfx942 HIP, emulated", "ok)", "checked  all"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// emit --standalone inlines the device library: no include is left, for
// the CUDA and the HIP targets alike.
func TestEmitStandalone(t *testing.T) {
	for _, target := range []string{"sm_90a", "gfx942"} {
		out, _ := tilegoOut(t, 0, "emit", "gemm", "--target", target, "--standalone")
		if strings.Contains(out, "#include") || !strings.Contains(out, "namespace tl {") || !strings.Contains(out, "extern \"C\" __global__") {
			t.Errorf("%s: not a standalone source:\n%.400s", target, out)
		}
	}
}

// emit --resources prints ptxas's report where NVRTC loads, and says how
// to get one where it does not; gfx942 is a usage error.
func TestEmitResources(t *testing.T) {
	_, _, nvrtcErr := drv.NVRTCVersion()
	code := 0
	if nvrtcErr != nil {
		code = 1
	}
	out, errs := tilegoOut(t, code, "emit", "gemm", "--m", "256", "--n", "256", "--k", "128", "--target", "sm_90a", "--resources")
	switch {
	case nvrtcErr == nil && (!strings.Contains(out, "gemm for sm_90a, NVRTC") || !strings.Contains(out, "registers")):
		t.Errorf("no report:\n%s", out)
	case nvrtcErr != nil && (!strings.Contains(errs, "--resources needs NVRTC") || !strings.Contains(errs, "fetch-nvrtc.sh")):
		t.Errorf("without NVRTC: %s", errs)
	}
	tilegoOut(t, 2, "emit", "gemm", "--target", "gfx942", "--resources")
}

// fuzz --backend hip-emu runs gfx942's programs in the emulator and says
// so; without gfx942 among the targets it is a usage error.
func TestFuzzHIPEmu(t *testing.T) {
	out, _ := tilegoOut(t, 0, "fuzz", "--backend", "hip-emu", "--target", "gfx942", "--n", "6", "--seed", "3")
	if !strings.Contains(out, "backend hip-emu") || !strings.Contains(out, "0 findings") {
		t.Errorf("output:\n%s", out)
	}
	tilegoOut(t, 2, "fuzz", "--backend", "hip-emu", "--target", "both", "--n", "1")
}

func TestErrors(t *testing.T) {
	cases := []struct {
		code int
		want string
		args []string
	}{
		{2, "--heads 3 is not a multiple of --heads-kv 2", []string{"run", "flash-attention", "--heads", "3", "--heads-kv", "2"}},
		{2, "flag provided but not defined: -bogus", []string{"run", "gemm", "--bogus"}},
		{2, `unknown kernel "attn"`, []string{"run", "attn"}},
		{2, "name a kernel", []string{"run"}},
		{2, `unknown backend "tpu"`, []string{"run", "gemm", "--backend", "tpu"}},
		{1, "no CUDA driver", []string{"run", "gemm", "--backend", "gpu"}},
		{1, "no AMD GPU runtime", []string{"run", "gemm", "--backend", "hip"}},
		{2, `unknown target "ptx"`, []string{"emit", "gemm", "--target", "ptx"}},
		{1, "does not build: flash.go:", []string{"run", "flash-attention", "--dim", "1024", "--backend", "cpu"}},
		{2, `unknown command "frobnicate"`, []string{"frobnicate"}},
		{2, "name a kernel", []string{"tune"}},
		{1, "tune needs a GPU", []string{"tune", "flash-attention"}},
		{1, "bench needs a GPU", []string{"bench"}},
		{2, "--sms -4: must be at least 0", []string{"bench", "--suite", "fa-tail", "--sms", "-4"}},
		{1, `unknown suite "fa-swep" (have extra, fa-bwd, fa-mods, fa-mods-bwd, fa-short, fa-sweep, fa-tail, fa-varlen, fa-varlen-bwd, gemm, gemm-fp8, gemm-llm, mla, rows)`, []string{"bench", "--suite", "mla,fa-swep"}},
		{1, "--shape: error parsing regexp", []string{"bench", "--shape", "dim=(64"}},
		{1, "--match: error parsing regexp", []string{"bench", "--match", "m=[64"}},
		{2, "config n=7: must be a positive multiple of 16", []string{"emit", "flash-attention", "--target", "sm_90a", "--config", "m=64 n=7 threads=128"}},
		{2, "config m=0: must be a positive multiple of 16", []string{"run", "flash-attention", "--config", "m=0"}},
		{2, "config splitn with threads=64", []string{"emit", "mla-decode", "--target", "sm_80", "--config", "threads=64 splitn=true m=64"}},
		{2, "--m 99999999999999999999: too large (at most 16777216)", []string{"run", "gemm", "--m", "99999999999999999999"}},
		{2, "--repeats 99999999999999999999: too large (at most 100000)", []string{"run", "gemm", "--repeats", "99999999999999999999"}},
		{2, "--heads \"\": empty", []string{"run", "flash-attention", "--heads="}},
		{1, "GiB of host memory (its tensors as float64, their copies and the check)", []string{"run", "gemm", "--m", "1000000", "--n", "100000", "--k", "64", "--backend", "cpu", "--max-gflop", "0"}},
		{1, "over --max-gflop 100", []string{"run", "flash-attention", "--seq-q", "1000000", "--backend", "cpu"}},
		{2, "--step 1: gemm runs as one program", []string{"emit", "gemm", "--step", "1"}},
		{2, "--step 3: this shape runs as 2 program(s); want 1 to 2", []string{"emit", "mla-decode", "--splits", "2", "--step", "3"}},
		{1, "emit --step 1 or 2", []string{"emit", "mla-decode", "--splits", "2"}},
		{2, `--splits: "-1" is not 0`, []string{"run", "flash-attention", "--splits", "-1"}},
		{2, "--scale: -1 is negative; want a positive softmax scale", []string{"run", "flash-attention", "--scale", "-1"}},
		{2, "--scale: -0.5 is negative", []string{"emit", "mla-decode", "--scale", "-0.5"}},
		{2, "--sms must be at least 1, got 0", []string{"run", "flash-attention", "--splits", "0", "--sms", "0"}},
		{1, "shaped for 128-row tiles; config m=64", []string{"run", "flash-attention", "--backend", "cpu", "--heads", "5", "--seq-q", "128", "--seq-kv", "1024", "--splits", "3", "--sms", "4", "--config", "m=64"}},
		{2, "--step 3: this shape runs as 2 program(s)", []string{"emit", "flash-attention", "--splits", "2", "--step", "3"}},
		{1, "the split kernels run without clusters; config cluster=2", []string{"emit", "flash-attention", "--dim", "128", "--seq-kv", "8192", "--splits", "2", "--step", "1", "--config", "ws cluster=2"}},
	}
	for _, c := range cases {
		_, stderr := tilegoOut(t, c.code, c.args...)
		if !strings.Contains(stderr, c.want) {
			t.Errorf("tilego %s: stderr %q, want %q", strings.Join(c.args, " "), stderr, c.want)
		}
	}
}

func TestEmitAndHelp(t *testing.T) {
	out, _ := tilegoOut(t, 0, "emit", "gemm", "--m", "100", "--n", "40")
	if !strings.HasPrefix(out, "func gemm(A bf16[100, 512], B bf16[512, 40], C f32[100, 40] out)") {
		t.Errorf("emit:\n%s", out)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "run"}, {"help", "emit"}, {"help", "list"},
		{"help", "gemm"}, {"run", "--help"}, {"run", "flash-attention", "--help"}, {"emit", "gemm", "-h"}} {
		if out, _ := tilegoOut(t, 0, args...); !strings.Contains(out, "--") && !strings.Contains(out, "Usage") {
			t.Errorf("tilego %s: %s", strings.Join(args, " "), out)
		}
	}
	out, _ = tilegoOut(t, 0, "run", "flash-attention", "--help")
	for _, want := range []string{"--seq-kv N", "--backend auto|cpu|gpu", "--repeats N", "--json"} {
		if !strings.Contains(out, want) {
			t.Errorf("run flash-attention --help lacks %q:\n%s", want, out)
		}
	}
}

// emit --target writes CUDA with no GPU present.
func TestEmitCUDA(t *testing.T) {
	for _, tgt := range []string{"sm_80", "sm_90a"} {
		var out, errb strings.Builder
		if code := tilego([]string{"emit", "flash-attention", "--target", tgt, "--causal"}, &out, &errb); code != 0 {
			t.Fatalf("emit --target %s: exit %d: %s", tgt, code, errb.String())
		}
		wants := []string{"__global__", "mma_bf16_16816", "ldmatrix", "cp_async16"}
		if tgt == "sm_90a" { // Hopper: warpgroup MMA from shared-memory descriptors
			wants = []string{"__global__", "wgmma.mma_async", "tl::desc(", "cp_async16"}
		}
		for _, want := range wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("emit --target %s: no %s in the generated code", tgt, want)
			}
		}
	}
}

// emit --config changes fields of the target's config; a bad one is a
// usage error (exit 2) naming the fields there are.
func TestEmitConfig(t *testing.T) {
	plain, _ := tilegoOut(t, 0, "emit", "flash-attention", "--target", "sm_90a")
	out, _ := tilegoOut(t, 0, "emit", "flash-attention", "--target", "sm_90a", "--config", "n=64 threads=256 ws overlap pingpong")
	if strings.Contains(plain, "// the other's turn") || !strings.Contains(out, "// the other's turn") || !strings.Contains(out, "const int k0_late") {
		t.Errorf("--config did not turn on the producer, deferred P·V and ping-pong")
	}
	_, stderr := tilegoOut(t, 2, "emit", "flash-attention", "--config", "q=1")
	if !strings.Contains(stderr, `no field "q"`) || !strings.Contains(stderr, "overlap") {
		t.Errorf("bad --config: %s", stderr)
	}
}

// run --config changes fields of the config it picked, and says so; the
// changed config is the one that runs (and is checked).
func TestRunConfig(t *testing.T) {
	out, _ := tilegoOut(t, 0, "run", "flash-attention", "--backend", "cpu", "--seq-q", "100", "--causal", "--json", "--config", "m=32 n=32 persistent")
	var r struct {
		Config map[string]any
		From   string `json:"config_source"`
		OK     bool
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Config["m"] != 32.0 || r.Config["persistent"] != true || r.From != "default, changed by --config" || !r.OK {
		t.Errorf("%+v", r)
	}
	_, stderr := tilegoOut(t, 2, "run", "flash-attention", "--backend", "cpu", "--config", "m=x")
	if !strings.Contains(stderr, `config m="x"`) || !strings.Contains(stderr, "whole number") {
		t.Errorf("bad --config: %s", stderr)
	}
}

// run takes MLA's split path (the split kernel, then the combine) at the
// scheduler's splits and at uniform ones, s_q 2 among them, and checks the
// combined O and LSE: both steps ran. A short batch declines the split.
func TestRunSplitChain(t *testing.T) {
	for _, args := range [][]string{
		{"--splits", "0", "--batch", "1", "--mean-kv", "2000", "--sms", "16"}, // one long request: the scheduler's parts pay
		{"--splits", "3", "--batch", "2", "--seq-q", "2", "--mean-kv", "200"},
	} {
		out, _ := tilegoOut(t, 0, append([]string{"run", "mla-decode", "--backend", "cpu", "--json"}, args...)...)
		var r struct {
			Shape   map[string]any
			Checked string
			OK      bool
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !r.OK || r.Checked != "all" || r.Shape["splits"].(float64) < 2 {
			t.Errorf("%v: %+v", args, r)
		}
	}
	out, _ := tilegoOut(t, 0, "run", "mla-decode", "--backend", "cpu", "--json", "--splits", "0", "--batch", "3", "--mean-kv", "300", "--sms", "16")
	if !strings.Contains(out, `"splits":1`) || !strings.Contains(out, `"split_note":"declined`) {
		t.Errorf("3 short requests on 16 SMs: want the single program and why: %s", out)
	}
}

// run takes FlashAttention's split paths: every block's keys cut for a
// grid of one wave, the last wave's for a longer one (two waves and a
// block: on 4 SMs at d64, two blocks an SM; on 4 at d128, one), at the
// cost model's count and at a given one; O and LSE are checked whole. The
// default shape on 132 SMs declines the split.
func TestRunAttnSplit(t *testing.T) {
	for _, c := range []struct {
		args   []string
		splits string
	}{
		{[]string{"--heads", "2", "--seq-q", "256", "--seq-kv", "2048", "--splits", "0", "--sms", "16"}, "every block's keys cut in 8"},
		{[]string{"--heads", "9", "--seq-q", "128", "--seq-kv", "1024", "--causal", "--splits", "0", "--sms", "4"}, "the last wave's 1 of 9 blocks cut in 8"},
		{[]string{"--heads", "5", "--seq-q", "128", "--seq-kv", "1024", "--dim", "128", "--splits", "3", "--sms", "4", "--layout", "bshd"}, "the last wave's 1 of 5 blocks cut in 3"},
	} {
		out, _ := tilegoOut(t, 0, append([]string{"run", "flash-attention", "--backend", "cpu", "--json"}, c.args...)...)
		var r struct {
			Checked string
			OK      bool
			Split   string `json:"split_note"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !r.OK || r.Checked != "all" || !strings.Contains(r.Split, c.splits) {
			t.Errorf("%v: %+v, want a checked run whose split note says %q", c.args, r, c.splits)
		}
	}
	out, _ := tilegoOut(t, 0, "run", "flash-attention", "--backend", "cpu", "--json", "--splits", "0")
	if !strings.Contains(out, `"split_note":"declined`) {
		t.Errorf("the default shape on 132 SMs: want the single program and why: %s", out)
	}
}

// bench --match keeps the matching configs of every point and refuses an
// expression that leaves a point nothing to time.
func TestMatchConfigs(t *testing.T) {
	mk := func() []bench.Point {
		ps, err := bench.Suites["mla"](bench.SuiteOptions{Quick: true})
		if err != nil {
			t.Fatal(err)
		}
		return ps[:1]
	}
	for _, c := range []struct {
		expr string
		want int // configs kept; -1: an error
	}{
		{"", len(bench.MLAConfigs(128, 1)) + 1}, // and the split path's default, Early on
		{"splitn=true", 6},
		{"ws=true", 4},
		{"roles=true", 3},
		{"handoff=true", 2},
		{"early=true", 1},
		{"^m=32 ", 2},
		{"nosuchfield", -1},
		{"(", -1},
	} {
		ps, err := matchConfigs(mk(), c.expr)
		switch {
		case c.want < 0 && err == nil:
			t.Errorf("%q: no error", c.expr)
		case c.want >= 0 && err != nil:
			t.Errorf("%q: %v", c.expr, err)
		case c.want >= 0 && len(ps[0].Configs) != c.want:
			t.Errorf("%q kept %d configs, want %d", c.expr, len(ps[0].Configs), c.want)
		}
	}
}

// bench --shape keeps the points whose shape matches, each with the points
// that share its inputs (a split path and its single program).
func TestMatchShapes(t *testing.T) {
	all, err := bench.Suites["mla"](bench.SuiteOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		expr  string
		heads []string // the kept points' heads, in order; nil: an error
	}{
		{"", []string{"128", "128", "128", "128", "128", "128", "16", "16"}},
		{"heads=16 ", []string{"16", "16"}},
		{"mean_kv=8192", []string{"128", "128", "16", "16"}},
		{"nosuchshape", []string{}},
		{"(", nil},
	} {
		ps, err := matchShapes(slices.Clone(all), c.expr)
		if c.heads == nil {
			if err == nil {
				t.Errorf("%q: no error", c.expr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		var heads []string
		for i, p := range ps {
			h, _, _ := strings.Cut(strings.SplitAfter(p.Problem.Shape().String(), "heads=")[1], " ")
			heads = append(heads, h)
			if p.SameInputs != (i%2 == 1) {
				t.Errorf("%q: point %d SameInputs %v: a pair was split", c.expr, i, p.SameInputs)
			}
		}
		if !slices.Equal(heads, c.heads) {
			t.Errorf("%q kept heads %v, want %v", c.expr, heads, c.heads)
		}
	}
}

// emit --step prints one program of a shape that runs several: MLA's
// split kernel, then its combine.
func TestEmitStep(t *testing.T) {
	for step, want := range map[string]string{"1": "func mla_decode(", "2": "func mla_combine("} {
		out, _ := tilegoOut(t, 0, "emit", "mla-decode", "--splits", "2", "--step", step)
		if !strings.HasPrefix(out, want) {
			t.Errorf("--step %s: want %s..., got\n%.200s", step, want, out)
		}
	}
	out, _ := tilegoOut(t, 0, "emit", "mla-decode", "--heads", "128", "--splits", "2", "--step", "1", "--target", "sm_90a")
	if !strings.Contains(out, "O_partial[") || !strings.Contains(out, "wgmma_m64n64k16_ss_bf16") {
		t.Errorf("the sm_90a split kernel (Roles, by default):\n%.300s", out)
	}
}

// With --json every failure is one JSON object on stdout, {"ok":false,
// "error":...}, with the exit status and the stderr line kept.
func TestJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
		args []string
	}{
		{2, "flag provided but not defined: -bogus", []string{"run", "gemm", "--bogus", "--json"}},
		{2, "config m=0: must be a positive multiple of 16", []string{"run", "flash-attention", "--json=true", "--config", "m=0"}},
		{2, "--m must be at least 1, got -5", []string{"run", "gemm", "--json", "--m", "-5"}},
		{1, "does not build", []string{"run", "flash-attention", "--dim", "1024", "--backend", "cpu", "-json"}},
		{1, "over --max-gflop 1 ", []string{"run", "gemm", "--m", "8192", "--backend", "cpu", "--json", "--max-gflop", "1"}},
		{2, "unknown backend", []string{"run", "gemm", "--backend", "tpu", "--json"}},
		{1, "tune needs a GPU", []string{"tune", "gemm", "--json"}},
		{2, "--repeats 0: must be at least 1", []string{"tune", "gemm", "--repeats", "0", "--json"}},
	} {
		out, stderr := tilegoOut(t, tc.code, tc.args...)
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Errorf("tilego %s: stdout %q is not one JSON object: %v", strings.Join(tc.args, " "), out, err)
			continue
		}
		if msg, _ := r["error"].(string); r["ok"] != false || !strings.Contains(msg, tc.want) || len(r) != 2 {
			t.Errorf("tilego %s: %v, want ok false and an error with %q", strings.Join(tc.args, " "), r, tc.want)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("tilego %s: stderr %q lacks %q", strings.Join(tc.args, " "), stderr, tc.want)
		}
	}
	// Without --json (or with --json=false) stdout stays empty.
	for _, args := range [][]string{{"run", "gemm", "--bogus"}, {"run", "gemm", "--json=false", "--m", "0"}} {
		if out, _ := tilegoOut(t, 2, args...); out != "" {
			t.Errorf("tilego %s: stdout %q", strings.Join(args, " "), out)
		}
	}
}

// A panic in a command is one line, exit status 1 (and a JSON object
// with --json), not a Go trace.
func TestPanicIsOneLine(t *testing.T) {
	boom := &command{name: "boom", json: true, main: func([]string, io.Writer, io.Writer) int { panic("boom") }}
	var o, e bytes.Buffer
	if code := runCommand(boom, []string{"--json"}, &o, &e); code != 1 {
		t.Errorf("exit %d", code)
	}
	if got := e.String(); !strings.HasPrefix(got, "tilego boom: internal error") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q", got)
	}
	if !strings.Contains(o.String(), `"ok":false`) {
		t.Errorf("stdout %q", o.String())
	}
}
