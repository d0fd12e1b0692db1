package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChartCommand(t *testing.T) {
	dir := "../../docs/bench/2026-11-22-h200"
	out := filepath.Join(t.TempDir(), "fa.svg")
	var o, e bytes.Buffer
	// Flags may follow the files, as in the docs.
	if code := run([]string{dir + "/tilego.jsonl", dir + "/peers.jsonl", "-o", out, "-kind", "lines"}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte("FlashAttention forward on H200, 2026-11-22 (fa-sweep)")) || !bytes.Contains(b, []byte("<polyline")) {
		t.Errorf("%v: %.300s", err, b)
	}
	if !strings.Contains(e.String(), "6 panels, series [tilego sdpa-flash sdpa-cudnn flex]") {
		t.Errorf("stderr %q", e.String())
	}
	o.Reset()
	if code := run([]string{"-o", "-", "-suite", "gemm", "-title", "T", dir + "/tilego.jsonl"}, &o, &e); code != 0 || !strings.Contains(o.String(), "<title>T</title>") {
		t.Errorf("exit %d, stdout %.200s", code, o.String())
	}
	for _, tt := range []struct {
		code int
		args []string
	}{
		{2, []string{dir + "/tilego.jsonl"}},
		{2, []string{"-o", out}},
		{2, []string{dir + "/tilego.jsonl", "-o", out, "-kind", "pie"}},
		{1, []string{"nope.jsonl", "-o", out}},
		{1, []string{dir + "/tilego.jsonl", "-o", out, "-suite", "nope"}},
	} {
		if code := run(tt.args, &o, &e); code != tt.code {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.code)
		}
	}
}
