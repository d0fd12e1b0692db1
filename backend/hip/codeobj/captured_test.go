package codeobj

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata from the installed clang-19 and llvm-19")

// Captured tool output for testSource; the parsers run on it without the
// tools installed.
var (
	notesFile  = filepath.Join("testdata", "kernels.notes.txt")
	disasmFile = filepath.Join("testdata", "kernels.objdump.txt")
	reportFile = filepath.Join("testdata", "kernels.report.txt") // Report.String
)

func TestCaptured(t *testing.T) {
	if *update {
		capture(t)
	}
	notes, err := os.ReadFile(notesFile)
	if err != nil {
		t.Fatal(err)
	}
	disasm, err := os.ReadFile(disasmFile)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseReport(string(notes), string(disasm))
	if err != nil {
		t.Fatal(err)
	}
	if r.Target != "amdgcn-amd-amdhsa--gfx942" || r.Arch != "gfx942" {
		t.Errorf("target %q, arch %q", r.Target, r.Arch)
	}
	if len(r.Kernels) != len(testKernels) {
		t.Fatalf("%d kernels, want %d", len(r.Kernels), len(testKernels))
	}
	for i, tk := range testKernels {
		t.Run(tk.name, func(t *testing.T) {
			k := r.Kernels[i]
			if k.Name != tk.name {
				t.Fatalf("kernel %d is %s, want %s", i, k.Name, tk.name)
			}
			checkKernel(t, k, tk.want)
		})
	}
	// vgpr_201 cannot run 1024-thread workgroups, but 512-thread ones fit
	// once per CU: 8 waves, 2 per SIMD.
	if k, _ := r.Kernel("vgpr_201"); k.OccupancyAt(512, 0).WavesPerSIMD != 2 {
		t.Errorf("vgpr_201 at 512 threads: %+v, want 2 waves/SIMD", k.OccupancyAt(512, 0))
	}
	if got := r.String(); got != string(golden) {
		t.Errorf("report:\n%s\nwant (%s):\n%s", got, reportFile, golden)
	}
}

// capture compiles testSource and writes the tools' output to testdata.
func capture(t *testing.T) {
	requireTools(t)
	obj, err := Build(testSource(), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	readelf, _ := findTool("", readelfNames)
	objdump, _ := findTool("", objdumpNames)
	path := filepath.Join(t.TempDir(), "kernel.hsaco")
	if err := os.WriteFile(path, obj.Code, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	notes, stderr, err := run(ctx, testOpts.Timeout, readelf, "--notes", path)
	if err != nil {
		t.Fatal(toolError(readelf, err, stderr))
	}
	disasm, stderr, err := run(ctx, testOpts.Timeout, objdump, "-d", path)
	if err != nil {
		t.Fatal(toolError(objdump, err, stderr))
	}
	// objdump names the file it read: a temporary path.
	disasm = strings.ReplaceAll(disasm, path, "kernel.hsaco")
	r, err := ParseReport(notes, disasm)
	if err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{notesFile: notes, disasmFile: disasm, reportFile: r.String()} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
