package kernels_test

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// gemm's epilogue (scales, bias, activation, residual) on the interpreter
// against float64 at sizes that are not multiples of the tiles, compiled
// for every target at its GPU config (8-bit inputs: for sm_90a and
// gfx942); two cases emulated on gfx942. The check applies the epilogue in
// float64: the tests fail without it in the kernel.
func TestGemmEpilogue(t *testing.T) {
	eachProblem(t, "gemm", nil, []map[string]string{
		{"m": "100", "n": "72", "k": "48", "bias": "true", "act": "gelu", "out-dtype": "bf16"},
		{"m": "130", "n": "200", "k": "64", "act": "silu", "trans-a": "true"},
		{"m": "37", "n": "136", "k": "96", "bias": "true", "act": "relu", "residual": "true", "trans-b": "true", "dtype": "f16", "out-dtype": "f16"},
		{"m": "64", "n": "64", "k": "32", "residual": "true"},
		{"m": "100", "n": "72", "k": "96", "scale-a": "row", "scale-b": "col", "dtype": "f8e4m3", "trans-b": "true", "out-dtype": "bf16"},
		{"m": "130", "n": "40", "k": "160", "scale-a": "tensor", "scale-b": "tensor", "bias": "true", "act": "gelu", "dtype": "f8e5m2", "trans-b": "true"},
		{"m": "70", "n": "200", "k": "64", "scale-b": "col", "residual": "true"},
	}, func(t *testing.T, i int, vals map[string]string, p kernels.Problem) {
		checkInterp(t, p, 6)
		if strings.HasPrefix(vals["dtype"], "f8") {
			compileTargets(t, p, "sm_90a", "gfx942") // sm_80's mma.sync takes no 8-bit floats
		} else {
			compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		}
		if i == 0 || i == 4 {
			checkEmulated(t, p, 7)
		}
	})
	e, err := kernels.Lookup("gemm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vals map[string]string
		want string
	}{
		{map[string]string{"act": "tanh"}, "want relu, gelu or silu"},
		{map[string]string{"bias": "true", "split-k": "2"}, "runs with the single program only"},
		{map[string]string{"scale-a": "col"}, "want tensor or row"},
		{map[string]string{"scale-b": "row"}, "want tensor or col"},
	} {
		if _, err := e.Problem(c.vals); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.vals, err, c.want)
		}
	}
}

// Promote (a partial accumulator a K tile, added into acc in f32) on the
// interpreter against float64 with an epilogue, at sizes off the tiles;
// and compiled for Hopper's 8-bit wgmma and for sm_80.
func TestGemmPromote(t *testing.T) {
	eachProblem(t, "gemm", nil, []map[string]string{
		{"m": "100", "n": "72", "k": "200", "scale-a": "row", "scale-b": "col", "dtype": "f8e4m3", "trans-b": "true"},
		{"m": "70", "n": "40", "k": "90", "bias": "true", "dtype": "f16"},
	}, func(t *testing.T, i int, vals map[string]string, p kernels.Problem) {
		c := p.DefaultConfig().(kernels.GemmConfig)
		c.Promote = true
		checkRun(t, p, c, ir.DefaultLimits, 3, "interpreter", interp.Run)
		archs := []string{"sm_90a"}
		if i == 1 {
			archs = append(archs, "sm_80")
		}
		for _, arch := range archs {
			g := kernels.GPUConfigFor(p, arch).(kernels.GemmConfig)
			g.Promote = true
			fn, err := kernels.Build(p, g, cudagen.Limits(arch))
			if err != nil {
				t.Fatalf("%s: %v", arch, err)
			}
			if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
				t.Errorf("%s: %v", arch, err)
			}
		}
	})
}
