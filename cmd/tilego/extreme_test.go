package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tilego/tilego/kernels"
)

// small are shape flags that keep a run that an extreme value leaves
// valid short.
var small = map[string][]string{
	"flash-attention":     {"--seq-q=32", "--heads=1"},
	"flash-attention-bwd": {"--seq-q=32", "--heads=1"},
	"gemm":                {"--m=16", "--n=16", "--k=16"},
	"mla-decode":          {"--batch=1"},
}

// extremes are values for every flag that takes one: out of range, past
// int64, not numbers, and the largest a size flag accepts.
var extremes = []string{"0", "-1", "16777216", "99999999999999999999", "-99999999999999999999", "x", "1.5", ""}

// Every flag of every kernel, at extreme values, on run (the interpreter)
// and emit (CUDA for sm_90a): no panic, no trace; a refusal is one line
// (or a list of build problems, one a line) with exit status 1 or 2; with
// --json stdout is one JSON object.
func TestCLIExtremeValues(t *testing.T) {
	type call struct{ args []string }
	var calls []call
	for _, e := range kernels.Entries {
		for _, f := range e.Flags {
			vals := extremes
			if f.Bool {
				vals = []string{"maybe", "2"}
			}
			for _, v := range vals {
				flag := "--" + f.Name + "=" + v
				calls = append(calls,
					call{append(runArgs(e.Name), flag)},
					call{[]string{"emit", e.Name, flag, "--target", "sm_90a"}})
			}
		}
		for _, own := range [][]string{
			{"--repeats", "99999999999999999999"}, {"--repeats", "-1"}, {"--seed", "-1"},
			{"--max-gflop", "-1"}, {"--max-gflop", "NaN"}, {"--max-gflop", "x"}, {"--repeats", "100000"},
			{"--config", "m=0"}, {"--config", "threads=99999999999999999999"}, {"--config", "bm=-16"},
			{"--config", "threads=64 splitn m=64"}, {"--config", "stages=100"}, {"--config", "=1"}, {"--config", "ws=2"},
			{"--splits", "0", "--sms", "16777216"}, {"--splits", "65536"}, {"--splits", "65537"},
		} {
			calls = append(calls, call{append(runArgs(e.Name), own...)})
			if own[0] != "--repeats" && own[0] != "--seed" && own[0] != "--max-gflop" {
				calls = append(calls, call{append([]string{"emit", e.Name, "--target", "sm_90a"}, own...)})
			}
		}
		calls = append(calls, call{[]string{"emit", e.Name, "--step", "99999999999999999999"}})
	}
	// bench's and tune's own flags, refused before either opens a GPU.
	for _, own := range [][]string{
		{"--warmup", "-1"}, {"--repeats", "0"}, {"--repeats", "99999999999999999999"}, {"--warmup", "x"},
	} {
		calls = append(calls, call{append([]string{"bench"}, own...)}, call{append([]string{"tune", "gemm", "--json"}, own...)})
	}
	for _, own := range [][]string{{"--sms", "-1"}, {"--sms", "99999999999999999999"}, {"stray"}} {
		calls = append(calls, call{append([]string{"bench"}, own...)})
	}
	for _, own := range [][]string{{"--max", "-1"}, {"--patience", "99999999999999999999"}, {"--budget", "-1s"}, {"--budget", "1e99h"}, {"--seed", "-1"}} {
		calls = append(calls, call{append([]string{"tune", "gemm", "--json"}, own...)})
	}
	for _, c := range calls {
		var o, e bytes.Buffer
		t0 := time.Now()
		code := tilego(c.args, &o, &e)
		if d := time.Since(t0); d > time.Second {
			t.Logf("tilego %s: %v", strings.Join(c.args, " "), d)
		}
		cmdline := strings.Join(c.args, " ")
		stderr := strings.TrimSuffix(e.String(), "\n")
		if strings.Contains(stderr, "internal error") || strings.Contains(stderr, "goroutine") {
			t.Errorf("tilego %s: %s", cmdline, stderr)
			continue
		}
		if code == 0 {
			continue // a valid extreme (emit at the largest size)
		}
		if code != 1 && code != 2 {
			t.Errorf("tilego %s: exit %d", cmdline, code)
		}
		lines := strings.Split(stderr, "\n")
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "  ") { // a build's list of problems is indented under its first line
				t.Errorf("tilego %s: not one line:\n%s", cmdline, stderr)
				break
			}
		}
		if stderr == "" {
			t.Errorf("tilego %s: exit %d, nothing on stderr", cmdline, code)
		}
		if code != 2 && (c.args[0] == "bench" || c.args[0] == "tune") {
			t.Errorf("tilego %s: exit %d, want 2 (bad usage)", cmdline, code)
		}
		if c.args[0] == "run" || c.args[0] == "tune" {
			var r jsonError
			if err := json.Unmarshal(o.Bytes(), &r); err != nil || r.OK || r.Error == "" {
				t.Errorf("tilego %s: stdout is not a JSON error: %q", cmdline, o.String())
			}
		}
	}
	t.Logf("%d command lines", len(calls))
}

// runArgs runs kernel small, refusing work past a GFLOP: the extremes a
// machine could hold but the test should not wait for are refused too.
func runArgs(kernel string) []string {
	return append([]string{"run", kernel, "--backend=cpu", "--json", "--max-gflop=1"}, small[kernel]...)
}
