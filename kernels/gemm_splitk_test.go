package kernels_test

import (
	"math"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// gemm --split-k: the partials and their sum on the interpreter against
// float64 at odd sizes, with transposes, more splits than K tiles (empty
// parts), and a 16-bit C; each step compiles for every target, and one
// case's gfx942 programs, emulated, pass the same check.
func TestGemmSplitK(t *testing.T) {
	e, err := kernels.Lookup("gemm")
	if err != nil {
		t.Fatal(err)
	}
	for i, vals := range []map[string]string{
		{"m": "37", "n": "200", "k": "1000", "split-k": "4"},
		{"m": "16", "n": "96", "k": "320", "split-k": "3", "trans-b": "true", "out-dtype": "bf16"},
		{"m": "5", "n": "64", "k": "64", "split-k": "8", "trans-a": "true", "dtype": "f16", "out-dtype": "f16"},
	} {
		p, err := e.Problem(vals)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Shape().String(), func(t *testing.T) {
			ch := p.(kernels.Chain)
			steps, err := ch.Steps(p.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			args := p.Inputs(2)
			if err := kernels.RunSteps(steps, args, ir.DefaultLimits, interp.Run); err != nil {
				t.Fatal(err)
			}
			if r := p.Check(args, 2); !r.OK() {
				t.Errorf("against float64: %s", r)
			}
			for _, arch := range []string{"sm_80", "sm_90a", "gfx942"} {
				steps, err := ch.Steps(kernels.GPUConfigFor(p, arch))
				if err != nil {
					t.Fatal(err)
				}
				for _, st := range steps {
					fn, err := st.Func.Build(cudagen.Limits(arch))
					if err != nil {
						t.Fatalf("%s: %v", arch, err)
					}
					if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
						t.Errorf("%s: %v", arch, err)
					}
				}
			}
			if i != 0 {
				return
			}
			args = p.Inputs(3)
			steps, err = ch.Steps(kernels.GPUConfigFor(p, "gfx942"))
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range args[2:] {
				for j := range x.Data {
					x.Data[j] = math.NaN()
				}
			}
			err = kernels.RunSteps(steps, args, cudagen.Limits("gfx942"), func(fn *ir.Func, ts []*tensor.Tensor) error {
				prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
				if err != nil {
					return err
				}
				return emu.Run(prog, ts)
			})
			if err != nil {
				t.Fatal(err)
			}
			if r := p.Check(args, 3); !r.OK() {
				t.Errorf("gfx942 emulated, against float64: %s", r)
			}
		})
	}
	if _, err := e.Problem(map[string]string{"split-k": "0"}); err == nil {
		t.Error("--split-k 0 accepted")
	}
}
