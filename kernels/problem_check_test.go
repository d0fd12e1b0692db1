package kernels_test

import (
	"maps"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// problemSteps is p at cfg as steps over its inputs' list: a Chain's, or
// its one program taking every input (n of them).
func problemSteps(t *testing.T, p kernels.Problem, cfg kernels.Config, n int) []kernels.Step {
	t.Helper()
	if ch, ok := p.(kernels.Chain); ok {
		steps, err := ch.Steps(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return steps
	}
	f, err := p.Program(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return []kernels.Step{{Func: f, Args: all}}
}

// checkRun runs p at cfg, built against lim, with run on fresh inputs
// (outputs NaN-poisoned by Inputs) and checks them against float64; where
// names the run in the error.
func checkRun(t *testing.T, p kernels.Problem, cfg kernels.Config, lim ir.Limits, seed uint64, where string, run func(*ir.Func, []*tensor.Tensor) error) {
	t.Helper()
	args := p.Inputs(seed)
	if err := kernels.RunSteps(problemSteps(t, p, cfg, len(args)), args, lim, run); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if r := p.Check(args, seed); !r.OK() {
		t.Errorf("%s, against float64: %s", where, r)
	}
}

// checkInterp checks p at its default config on the interpreter.
func checkInterp(t *testing.T, p kernels.Problem, seed uint64) {
	t.Helper()
	checkRun(t, p, p.DefaultConfig(), ir.DefaultLimits, seed, "interpreter", interp.Run)
}

// checkEmulated checks p's gfx942 programs at their GPU config, emulated.
func checkEmulated(t *testing.T, p kernels.Problem, seed uint64) {
	t.Helper()
	checkRun(t, p, kernels.GPUConfigFor(p, "gfx942"), cudagen.Limits("gfx942"), seed, "gfx942 emulated", func(fn *ir.Func, ts []*tensor.Tensor) error {
		prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
		if err != nil {
			return err
		}
		return emu.Run(prog, ts)
	})
}

// compileTargets builds and compiles p's programs at each arch's GPU
// config.
func compileTargets(t *testing.T, p kernels.Problem, archs ...string) {
	t.Helper()
	for _, arch := range archs {
		for _, st := range problemSteps(t, p, kernels.GPUConfigFor(p, arch), 0) { // Args unused here
			fn, err := st.Func.Build(cudagen.Limits(arch))
			if err != nil {
				t.Fatalf("%s: %v", arch, err)
			}
			if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
				t.Errorf("%s: %v", arch, err)
			}
		}
	}
}

// eachProblem runs fn as a subtest (named by the shape) for each case:
// kernel's problem at the case's flag values over defaults (which the
// case's own override).
func eachProblem(t *testing.T, kernel string, defaults map[string]string, cases []map[string]string, fn func(t *testing.T, i int, vals map[string]string, p kernels.Problem)) {
	t.Helper()
	e, err := kernels.Lookup(kernel)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		vals := maps.Clone(defaults)
		if vals == nil {
			vals = map[string]string{}
		}
		maps.Copy(vals, c)
		p, err := e.Problem(vals)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Shape().String(), func(t *testing.T) { fn(t, i, vals, p) })
	}
}
