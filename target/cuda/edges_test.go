package cuda

import (
	"testing"

	"github.com/tilego/tilego/tl"
)

// edgePrograms are small programs at the edges of what the emitter once
// lowered (issue 50): single elements, 0-d tiles, reductions of fragments
// no loop or Gemm lays out. Each writes every element of its outputs; the
// GPU test (gpu_edges_test.go) checks them against the interpreter.
var edgePrograms = map[string]func() *tl.Func{
	// vecWidth indexed the innermost dim of single elements.
	"single_elements": func() *tl.Func {
		f := tl.NewFunc("single_elements")
		X, Y := f.In("X", tl.F16, 64, 64), f.Out("Y", tl.F16, 2)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			s := k.Shared(tl.F16, 8, 8)
			k.Copy(X.Sub(3, 5), s.Sub(1, 2))
			k.Copy(X.Sub(60, 63), s.Sub(7, 7))
			k.Copy(s.Sub(1, 2), Y.Sub(0))
			k.Copy(s.Sub(7, 7), Y.Sub(1))
		})
		return f
	},
	"scalar_fragment_and_local": func() *tl.Func {
		f := tl.NewFunc("scalars")
		X, Y := f.In("X", tl.F32, 4), f.Out("Y", tl.F32, 2)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, l := k.Fragment(tl.F32), k.Local(tl.F32)
			k.Copy(X.Sub(1), fr)
			k.Copy(X.Sub(2), l)
			k.Copy(fr, Y.Sub(0))
			k.Copy(l, Y.Sub(1))
		})
		return f
	},
	// Source and result took a spread each, which did not match.
	"reduce_rows": func() *tl.Func {
		f := tl.NewFunc("reduce_rows")
		X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64)
			k.Copy(X, fr)
			k.ReduceSum(fr, o, 1)
			k.Copy(o, Y)
		})
		return f
	},
	"reduce_cols": func() *tl.Func {
		f := tl.NewFunc("reduce_cols")
		X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 64, 64), k.Fragment(tl.F32, 64)
			k.Copy(X, fr)
			k.ReduceMax(fr, o, 0)
			k.Copy(o, Y)
		})
		return f
	},
	"reduce_middle_of_3": func() *tl.Func {
		f := tl.NewFunc("reduce_middle")
		X, Y := f.In("X", tl.F32, 4, 8, 16), f.Out("Y", tl.F32, 4, 16)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr, o := k.Fragment(tl.F32, 4, 8, 16), k.Fragment(tl.F32, 4, 16)
			k.Copy(X, fr)
			k.ReduceSum(fr, o, 1)
			k.Copy(o, Y)
		})
		return f
	},
}

// Every edge program builds with each target's limits, so compiles.
func TestEdgeProgramsBuild(t *testing.T) {
	for name, prog := range edgePrograms {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			if _, err := prog().Build(Limits(arch)); err != nil {
				t.Errorf("%s on %s: %v", name, arch, err)
			}
		}
	}
}
