package kernels_test

import (
	"math"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Varlen FlashAttention through the registry on the interpreter against
// float64, every row of every sequence: lengths from 1 to past a tile,
// causal, GQA, key lengths other than the query's, f16, Dv ≠ Dqk; each
// compiles for every target at its GPU config.
func TestVarlenInterp(t *testing.T) {
	eachProblem(t, "flash-attention-varlen", map[string]string{"heads": "2"}, []map[string]string{
		{"lens": "1,17,100,257"},
		{"lens": "1,17,1000,4097", "causal": "true", "heads": "1", "dim": "32"},
		{"lens": "70,5,129", "lens-kv": "90,5,64", "causal": "true", "heads": "4", "heads-kv": "2"},
		{"lens": "33,64", "lens-kv": "200,1", "dtype": "f16", "dim-v": "32"},
		{"lens": "100,5"}, // the short last sequence's tiles start past the tensors' end
	}, func(t *testing.T, i int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 9)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		if i == 2 {
			checkEmulated(t, p, 10)
		}
	})
}

// A sequence's last tile does not store past the sequence's end: with the
// second sequence one row shorter at run time than the packed tensors
// hold, that row of O and LSE stays NaN, on the interpreter and emulated
// on gfx942 (whose blocks run in another order).
func TestVarlenStoresStopAtSequenceEnd(t *testing.T) {
	e, err := kernels.Lookup("flash-attention-varlen")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(map[string]string{"lens": "17,23", "heads": "2", "dim": "64"})
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"", "gfx942"} {
		args := p.Inputs(1)
		args[3].Data[2] = 39 // CuQ: the second sequence ends a row early
		args[4].Data[2] = 39 // CuK
		run := func(fn *ir.Func) error { return interp.Run(fn, args) }
		lim := ir.DefaultLimits
		cfg := p.DefaultConfig()
		if arch != "" {
			lim, cfg = cudagen.Limits(arch), kernels.GPUConfigFor(p, arch)
			run = func(fn *ir.Func) error {
				prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
				if err != nil {
					return err
				}
				return emu.Run(prog, args)
			}
		}
		fn, err := kernels.Build(p, cfg, lim)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(fn); err != nil {
			t.Fatal(err)
		}
		o, lse := args[5], args[6]
		for h := range 2 {
			for d := range 64 {
				if x := o.At(39, h, d); !math.IsNaN(x) {
					t.Fatalf("%s: O[39, %d, %d] = %g, written past the sequence", arch, h, d, x)
				}
			}
			if x := lse.At(h, 39); !math.IsNaN(x) {
				t.Errorf("%s: LSE[%d, 39] = %g, written past the sequence", arch, h, x)
			}
			if x := o.At(38, h, 0); math.IsNaN(x) {
				t.Errorf("%s: O[38, %d, 0], the sequence's last row, not written", arch, h)
			}
		}
	}
}

// The varlen backward through the registry on the interpreter against
// float64's gradients, every row of every sequence: lengths from 1 to
// past a tile, a short last sequence, causal with key lengths other than
// the query's, GQA and MQA, f16, Dv ≠ Dqk; each builds for both CUDA
// targets and gfx942, and the GQA one runs emulated on gfx942.
func TestVarlenBwdInterp(t *testing.T) {
	eachProblem(t, "flash-attention-varlen-bwd", map[string]string{"heads": "2", "dim": "32"}, []map[string]string{
		{"lens": "1,17,100,70", "heads": "4", "heads-kv": "1", "dim": "64", "dim-v": "32"},
		{"lens": "5,40,100", "lens-kv": "17,40,80", "heads": "4", "heads-kv": "2", "causal": "true"},
		{"lens": "33,64", "dtype": "f16"},
	}, func(t *testing.T, i int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 4)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		if i == 1 {
			checkEmulated(t, p, 5)
		}
	})
}
