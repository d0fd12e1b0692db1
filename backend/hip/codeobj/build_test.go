package codeobj

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requireTools fails the test when a tool is missing: CI installs them, so
// their absence is a broken setup, not a reason to skip.
func requireTools(t *testing.T) {
	t.Helper()
	for _, names := range [][]string{clangNames, readelfNames, objdumpNames} {
		if _, err := findTool("", names); err != nil {
			t.Fatalf("%v (or run .ci/run, which installs them)", err)
		}
	}
}

var testOpts = Options{Timeout: 2 * time.Minute}

func TestBuildReport(t *testing.T) {
	requireTools(t)
	obj, err := Build(testSource(), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Code) < 4 || string(obj.Code[1:4]) != "ELF" {
		t.Fatalf("code object is not ELF (%d bytes)", len(obj.Code))
	}
	r, err := obj.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Arch != "gfx942" || len(r.Kernels) != len(testKernels) {
		t.Fatalf("arch %q, %d kernels; want gfx942, %d:\n%s", r.Arch, len(r.Kernels), len(testKernels), r)
	}
	for _, tk := range testKernels {
		t.Run(tk.name, func(t *testing.T) {
			k, ok := r.Kernel(tk.name)
			if !ok {
				t.Fatalf("no kernel %s in\n%s", tk.name, r)
			}
			checkKernel(t, k, tk.want)
		})
	}
	t.Logf("\n%s", r)
}

// TestCompilerOccupancy checks want.llvm against the occupancy the
// compiler prints in its assembly, so the table's reasoning about the
// hardware rules stays tied to LLVM's own arithmetic.
func TestCompilerOccupancy(t *testing.T) {
	requireTools(t)
	clang, _ := findTool("", clangNames)
	dir := t.TempDir()
	in := filepath.Join(dir, "kernel.hip")
	if err := os.WriteFile(in, []byte(testSource()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(compileArgs(DefaultArch, testOpts), "-S", "-o", "-", in)
	asm, stderr, err := run(context.Background(), testOpts.Timeout, clang, args...)
	if err != nil {
		t.Fatal(toolError(clang, err, stderr))
	}
	got := map[string]int{}
	var fn string
	for _, line := range strings.Split(asm, "\n") {
		if _, name, ok := strings.Cut(line, "; -- Begin function "); ok {
			fn = strings.TrimSpace(name)
		}
		if v, ok := strings.CutPrefix(line, "; Occupancy: "); ok && fn != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: %q", fn, line)
			}
			got[fn] = n
		}
	}
	for _, tk := range testKernels {
		if n, ok := got[tk.name]; !ok || n != tk.want.llvm {
			t.Errorf("%s: compiler occupancy %d (found: %v), want %d", tk.name, n, ok, tk.want.llvm)
		}
	}
}

func TestBuildOptions(t *testing.T) {
	requireTools(t)
	inc := t.TempDir()
	if err := os.WriteFile(filepath.Join(inc, "tile.h"), []byte("#define TILE 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := prelude + `#include "tile.h"
KERNEL WG(64) void k(float* out) {
  __attribute__((shared)) float buf[TILE * SCALE];
  int unused;
  int t = TID();
  buf[t] = out[t];
  __builtin_amdgcn_s_barrier();
  out[t] = buf[TILE * SCALE - 1 - t];
}
`
	opts := testOpts
	opts.Arch = "gfx90a"
	opts.Includes = []string{inc}
	opts.Flags = []string{"-DSCALE=3", "-Wall"}
	obj, err := Build(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obj.Diagnostics, "unused") {
		t.Errorf("diagnostics lack the -Wall warning: %q", obj.Diagnostics)
	}
	r, err := obj.Report()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := r.Kernel("k")
	if r.Arch != "gfx90a" || !ok || k.LDSBytes != 64*3*4 {
		t.Fatalf("arch %q, kernel k %v, LDS %d B; want gfx90a, 768 B\n%s", r.Arch, ok, k.LDSBytes, r)
	}
}

func TestBuildErrors(t *testing.T) {
	requireTools(t)
	_, err := Build(prelude+"KERNEL void k(float* out) { out[0] = undeclared_thing; }\n", testOpts)
	if err == nil || !strings.Contains(err.Error(), "undeclared_thing") || !strings.Contains(err.Error(), "error:") {
		t.Errorf("compile error does not quote the compiler: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BuildContext(ctx, testSource(), testOpts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: %v, want context.Canceled", err)
	}
	_, err = Build(testSource(), Options{Timeout: time.Nanosecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("build past its timeout: %v", err)
	}
}

func TestToolErrorLinkerHint(t *testing.T) {
	out := `clang: error: unable to execute command: Executable "ld.lld" doesn't exist!`
	err := toolError("/usr/bin/clang-19", errors.New("exit status 1"), out)
	if !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("error %q lacks the compiler's words or the install hint", err)
	}
}

func TestMissingCompiler(t *testing.T) {
	_, err := Build("", Options{Clang: "clang-19-not-installed"})
	if err == nil || !strings.Contains(err.Error(), "clang-19-not-installed not found: "+InstallHint) {
		t.Errorf("error does not name the tool and the install command: %v", err)
	}
	if _, err := findTool("", []string{"llvm-readelf-0", "llvm-readelf-00"}); err == nil || !strings.Contains(err.Error(), "llvm-readelf-0 not found: "+InstallHint) {
		t.Errorf("lookup error: %v", err)
	}
}
