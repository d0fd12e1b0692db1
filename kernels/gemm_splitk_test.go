package kernels_test

import (
	"testing"

	"github.com/tilego/tilego/kernels"
)

// gemm --split-k: the partials and their sum on the interpreter against
// float64 at odd sizes, with transposes, more splits than K tiles (empty
// parts), and a 16-bit C; each step compiles for every target, and one
// case's gfx942 programs, emulated, pass the same check.
func TestGemmSplitK(t *testing.T) {
	eachProblem(t, "gemm", nil, []map[string]string{
		{"m": "37", "n": "200", "k": "1000", "split-k": "4"},
		{"m": "16", "n": "96", "k": "320", "split-k": "3", "trans-b": "true", "out-dtype": "bf16"},
		{"m": "5", "n": "64", "k": "64", "split-k": "8", "trans-a": "true", "dtype": "f16", "out-dtype": "f16"},
	}, func(t *testing.T, i int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 2)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		if i == 0 {
			checkEmulated(t, p, 3)
		}
	})
	e, err := kernels.Lookup("gemm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Problem(map[string]string{"split-k": "0"}); err == nil {
		t.Error("--split-k 0 accepted")
	}
}
