package cudagen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tilego/tilego/backend/hip/codeobj"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// The GEMM kernel, unchanged, compiles for gfx942 to a code object whose
// main loop is MFMA instructions, without spills: both operand types, A
// and B transposed or not, square and full-row wave splits.
func TestAMDGemmCodeObject(t *testing.T) {
	name, text := cudagen.Header("gfx942")
	dir := t.TempDir()
	writeTemp(t, dir, name, text)
	for _, tc := range []struct {
		s kernels.GemmShape
		c kernels.GemmConfig
	}{
		{kernels.GemmShape{M: 256, N: 256, K: 128, DType: tl.BF16, OutDType: tl.BF16}, kernels.GemmConfig{BM: 128, BN: 128, BK: 32, Stages: 2, Threads: 256}},
		{kernels.GemmShape{M: 200, N: 136, K: 96, DType: tl.F16, OutDType: tl.F32, TransA: true, TransB: true}, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 256}},
		{kernels.GemmShape{M: 128, N: 96, K: 64, DType: tl.F16, OutDType: tl.F16, TransB: true}, kernels.GemmConfig{BM: 64, BN: 32, BK: 32, Stages: 1, Threads: 256, Policy: ir.FullRow}},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d_%s_ta%v_tb%v", tc.s.M, tc.s.N, tc.s.K, tc.s.DType, tc.s.TransA, tc.s.TransB), func(t *testing.T) {
			fn, err := kernels.Gemm(tc.s, tc.c).Build(cudagen.Limits("gfx942"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
			if err != nil {
				t.Fatal(err)
			}
			obj, err := codeobj.Build(p.Source, codeobj.Options{Includes: []string{dir}, Flags: []string{"-Wno-parentheses-equality"}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := obj.Report()
			if err != nil {
				t.Fatal(err)
			}
			k, ok := r.Kernel(p.Name)
			if !ok {
				t.Fatalf("no kernel %s in %s", p.Name, r)
			}
			if k.Instr.MFMA == 0 || k.Spills() > 0 || k.ScratchBytes > 0 {
				t.Errorf("%s", k)
			}
			t.Log(k)
		})
	}
}

func writeTemp(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
