package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tilego/tilego/fuzz"
	"github.com/tilego/tilego/ir"
)

// A few programs on the CPU: JSON summary, no findings, exit 0.
func TestFuzzJSON(t *testing.T) {
	out, _ := tilegoOut(t, 0, "fuzz", "--n", "12", "--seed", "7", "--json", "--out", t.TempDir())
	var s fuzzSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s.Programs != 12 || s.Passed+s.Refused != 12 || s.Rejected != 0 || len(s.Reports) != 0 || s.Backend != "cpu" || len(s.Targets) != 2 || s.EmitMs <= 0 {
		t.Errorf("%+v", s)
	}
}

// Findings (here a synthetic fault: every program with a sum reduction)
// exit 1, each listed with its seed, the first of each class shrunk into
// a Go reproducer.
func TestFuzzFindings(t *testing.T) {
	fuzzFault = func(fn *ir.Func) string {
		sum := false
		ir.Walk(fn.Kernel.Body, func(s ir.Stmt) {
			r, ok := s.(*ir.Reduce)
			sum = sum || ok && r.Kind == ir.ReduceSum
		})
		if sum {
			return "synthetic: a sum"
		}
		return ""
	}
	defer func() { fuzzFault = nil }()
	dir := t.TempDir()
	out, _ := tilegoOut(t, 1, "fuzz", "--n", "40", "--shrink", "30", "--out", dir)
	if !strings.Contains(out, "emit error") || !strings.Contains(out, dir+"/seed-") {
		t.Fatalf("no finding reported with its reproducer:\n%s", out)
	}
	files, _ := os.ReadDir(dir)
	if len(files) == 0 {
		t.Fatal("no reproducer written")
	}
	src, _ := os.ReadFile(dir + "/" + files[0].Name())
	for _, want := range []string{"// seed ", "package repro", "tl.NewFunc(", "f.Kernel("} {
		if !strings.Contains(string(src), want) {
			t.Errorf("reproducer lacks %q:\n%s", want, src)
		}
	}
}

func TestFuzzUsage(t *testing.T) {
	out, _ := tilegoOut(t, 0, "help", "fuzz")
	for _, want := range []string{"-backend", "-target", "-with", "gemm-k8", "seed-N.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("help fuzz lacks %q", want)
		}
	}
	for _, args := range [][]string{{"fuzz", "--with", "nope"}, {"fuzz", "--target", "sm_70"}, {"fuzz", "--backend", "tpu"}, {"fuzz", "extra"}} {
		tilegoOut(t, 2, args...)
	}
}

// --replay checks one saved program and prints its outcome as JSON.
func TestFuzzReplay(t *testing.T) {
	path := t.TempDir() + "/p.gob"
	if err := fuzz.SaveProg(path, fuzz.Generate(11, fuzz.Defaults())); err != nil {
		t.Fatal(err)
	}
	out, _ := tilegoOut(t, 0, "fuzz", "--backend", "cpu", "--replay", path)
	var o fuzz.Outcome
	if err := json.Unmarshal([]byte(out), &o); err != nil || o.Seed != 11 || o.Finding() {
		t.Errorf("%v: %+v from %s", err, o, out)
	}
	tilegoOut(t, 1, "fuzz", "--replay", t.TempDir()+"/missing.gob")
}
