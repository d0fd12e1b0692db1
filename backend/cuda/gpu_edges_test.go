//go:build gpu

package cuda

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// The edge programs (internal/testprog/edges.go) give the interpreter's answer on the
// GPU, on both code paths: sums to f32 rounding (the order differs),
// everything else exactly.
func TestGPUEdgePrograms(t *testing.T) {
	b := openGPU(t)
	testProgs(t, b, archs(b), false)
}

// The examples (package examples, internal/testprog/examples.go) at
// sizes off their tiles give the interpreter's answer on the GPU, within
// their outputs' type's tolerance; 8-bit GEMMs on sm_90a only.
func TestGPUExamples(t *testing.T) {
	b := openGPU(t)
	testProgs(t, b, archs(b), true)
}

// testProgs runs internal/testprog's edge programs (examples false) or
// examples on each of archs against the interpreter (againstInterp): the
// edge programs within f32 rounding, the examples within their outputs'
// type's tolerance, 8-bit GEMMs on sm_90a only.
func testProgs(t *testing.T, b *Backend, archs []string, examples bool) {
	t.Helper()
	type prog struct {
		build func() *tl.Func
		tol   float64
	}
	progs := map[string]prog{}
	if examples {
		for name, ex := range testprog.Examples {
			progs[name] = prog{ex.Prog, ex.Tol}
		}
	} else {
		for name, p := range testprog.Edges {
			progs[name] = prog{p, 1e-5}
		}
	}
	for name, p := range progs {
		fn, err := p.build().Build(b.Limits())
		if err != nil {
			t.Fatalf("%s: %v", name, err) // they compile: a refusal is a bug
		}
		for _, arch := range archs {
			if name == "gemm_fp8" && arch != "sm_90a" {
				continue // mma.sync takes no 8-bit floats
			}
			t.Run(fmt.Sprintf("%s/%s", name, arch), func(t *testing.T) { againstInterp(t, b, arch, fn, p.tol) })
		}
	}
}

// againstInterp runs fn on the interpreter and, poisoned, on the GPU for
// arch, on the same seeded inputs, and compares every output within tol.
func againstInterp(t *testing.T, b *Backend, arch string, fn *ir.Func, tol float64) {
	t.Helper()
	var want, got []*tensor.Tensor
	for i, p := range fn.Params {
		shape := make([]int, len(p.Shape))
		for d, e := range p.Shape {
			n, _ := ir.ConstInt(e)
			shape[d] = int(n)
		}
		w, g := tensor.New(p.DType, shape...), tensor.New(p.DType, shape...)
		if !p.Output {
			w.Rand(uint64(i+1), 1)
			copy(g.Data, w.Data)
		}
		want, got = append(want, w), append(got, g)
	}
	if err := interp.Run(fn, want); err != nil {
		t.Fatal(err)
	}
	runPoisoned(t, b, arch, fn, got)
	for i, p := range fn.Params {
		var d ref.Diff
		for j, w := range want[i].Data {
			d.Add(got[i].Data[j], w)
		}
		if p.Output && !(d.Rel() <= tol) {
			t.Errorf("%s: %s", p.Name, &d)
		}
	}
}

// MLA decoding on 64 threads with SplitN (no warpgroup to split: wgSplit
// divided by zero) runs on mma.sync and matches float64.
func TestGPUMLASixtyFourThreads(t *testing.T) {
	b := openGPU(t)
	e, err := kernels.Lookup("mla-decode")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(map[string]string{"heads": "64", "batch": "2", "mean-kv": "300"})
	if err != nil {
		t.Fatal(err)
	}
	c := kernels.MLAConfig{M: 64, Stages: 1, Threads: 64, SplitN: true}
	fn, err := kernels.Build(p, c, b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs(b) {
		t.Run(arch, func(t *testing.T) {
			args := p.Inputs(3)
			runPoisoned(t, b, arch, fn, args)
			if r := p.Check(args, 3); !r.OK() {
				t.Error(r)
			}
		})
	}
}
