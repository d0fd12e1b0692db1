//go:build gpu

package cuda

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// A hand-edited program's stamps come back through TILEGO_STAMPS: the
// kernel's first thread writes a timer reading and a marker, and the
// download after its launch writes both to the file, one a line.
func TestGPUStamps(t *testing.T) {
	b := openGPU(t)
	fn, err := testprog.RowScale().Build(b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: b.Arch()})
	if err != nil {
		t.Fatal(err)
	}
	const start = "const int tid = threadIdx.x"
	if !strings.Contains(p.Source, start) {
		t.Fatalf("no %q in\n%s", start, p.Source)
	}
	src := strings.Replace(p.Source, "#include \"tilego.cuh\"\n", "#include \"tilego.cuh\"\n__device__ unsigned long long tilego_stamps[2];\n", 1)
	at := strings.Index(src, start)
	at += strings.Index(src[at:], "\n") + 1
	src = src[:at] + "  if (threadIdx.x == 0 && blockIdx.x == 0) { tilego_stamps[0] = tl::globaltimer(); tilego_stamps[1] = 12345; }\n" + src[at:]
	dir := t.TempDir()
	file := filepath.Join(dir, "edited.cu")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TILEGO_SOURCE", p.Name+"="+file)
	t.Setenv("TILEGO_STAMPS", filepath.Join(dir, "run"))
	x := tensor.New(ir.BF16, 32, 64).Rand(1, 1)
	runPoisoned(t, b, b.Arch(), fn, []*tensor.Tensor{x, tensor.New(ir.F32, 32, 64), tensor.New(ir.F32, 1)})
	out, err := os.ReadFile(filepath.Join(dir, "run."+p.Name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || lines[1] != "12345" {
		t.Fatalf("stamps file %q; want a timer reading and 12345", out)
	}
	if v, err := strconv.ParseUint(lines[0], 10, 64); err != nil || v == 0 {
		t.Errorf("timer reading %q: %v", lines[0], err)
	}
}
