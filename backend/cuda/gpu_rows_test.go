//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// TestGPURowKernels runs the example row kernels (RMSNorm, LayerNorm,
// softmax) through the registry at sizes that are not multiples of the
// tile, on both code paths, in each dtype and in a few tilings: against
// float64 (kernels' Check) and, where small, against the interpreter.
func TestGPURowKernels(t *testing.T) {
	b := openGPU(t)
	type point struct {
		rows, cols int
		cfg        kernels.RowsConfig
	}
	points := []point{
		{37, 96, kernels.RowsConfig{BM: 4, BN: 96, Threads: 128}},
		{29, 160, kernels.RowsConfig{BM: 2, BN: 32, Threads: 64}},
		{13, 640, kernels.RowsConfig{BM: 1, BN: 128, Threads: 256}},
		{1001, 3072, kernels.RowsConfig{BM: 4, BN: 768, Threads: 256}},
		{333, 2048, kernels.RowsConfig{BM: 8, BN: 1024, Threads: 512}},
	}
	for _, name := range []string{"rmsnorm", "layernorm", "softmax"} {
		e, err := kernels.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []string{"bf16", "f16", "f32"} {
			for _, pt := range points {
				p, err := e.Problem(map[string]string{"rows": fmt.Sprint(pt.rows), "cols": fmt.Sprint(pt.cols), "dtype": dt})
				if err != nil {
					t.Fatal(err)
				}
				fn, err := kernels.Build(p, pt.cfg, b.Limits())
				if err != nil {
					t.Fatal(err)
				}
				args := p.Inputs(uint64(pt.rows))
				var interpOut *tensor.Tensor
				if pt.rows*pt.cols <= 1<<16 {
					ia := p.Inputs(uint64(pt.rows))
					if err := interp.Run(fn, ia); err != nil {
						t.Fatal(err)
					}
					interpOut = ia[len(ia)-1]
				}
				for _, arch := range archs(b) {
					t.Run(fmt.Sprintf("%s/%s/%s/%dx%d/%s", name, arch, dt, pt.rows, pt.cols, kernels.ConfigFields(pt.cfg)), func(t *testing.T) {
						runPoisoned(t, b, arch, fn, args)
						if r := p.Check(args, 1); !r.OK() {
							t.Errorf("against float64: %s", r)
						}
						if interpOut != nil {
							var d ref.Diff
							y := args[len(args)-1]
							for i := range y.Data {
								d.Add(y.Data[i], interpOut.Data[i])
							}
							if tol := kernels.Tolerance(y.DType); !(d.Rel() <= tol) {
								t.Errorf("against the interpreter: %s, over %g", &d, tol)
							}
						}
					})
				}
			}
		}
	}
}

// TestGPUMath applies each of the language's math functions to a tile of
// f32 values spread over their useful range and compares every element
// with float64 within docs/language.md's error: a few ulps (relative), or
// for sin and cos an absolute bound near their roots.
func TestGPUMath(t *testing.T) {
	b := openGPU(t)
	const rows, cols = 48, 200 // not a multiple of the tile's columns
	fns := []struct {
		name   string
		op     func(x any) tl.Expr
		ref    func(float64) float64
		scale  float64 // the inputs are scale·N(0, 1)
		rel    float64
		absMax float64 // an absolute error accepted anywhere (sin, cos)
	}{
		{"tanh", tl.Tanh, math.Tanh, 3, 4e-7, 0},
		{"erf", tl.Erf, math.Erf, 2, 4e-7, 0},
		{"sigmoid", tl.Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 8, 8e-7, 0},
		{"log1p", func(x any) tl.Expr { return tl.Log1p(tl.Abs(x)) }, func(x float64) float64 { return math.Log1p(math.Abs(x)) }, 1, 4e-7, 0},
		{"expm1", tl.Expm1, math.Expm1, 4, 4e-7, 0},
		{"sin", tl.Sin, math.Sin, 50, 0, 2e-6},
		{"cos", tl.Cos, math.Cos, 50, 0, 2e-6},
		{"pow", func(x any) tl.Expr { return tl.Pow(tl.Abs(x), 2.5) }, func(x float64) float64 { return math.Pow(math.Abs(x), 2.5) }, 3, 8e-7, 0},
		{"pow_odd", func(x any) tl.Expr { return tl.Pow(x, 3) }, func(x float64) float64 { return math.Pow(x, 3) }, 3, 8e-7, 0},
	}
	for _, fc := range fns {
		f := tl.NewFunc("math_" + fc.name)
		X := f.In("X", tl.F32, rows, cols)
		Y := f.Out("Y", tl.F32, rows, cols)
		f.Kernel(tl.Grid(tl.CeilDiv(rows, 16)), 128, func(k *tl.Block) {
			bx, _, _ := k.Idx()
			x := k.Fragment(tl.F32, 16, 256)
			k.Copy(X.Sub(tl.Tile(bx, 16), tl.Tile(0, 256)), x)
			k.Parallel(func(i, j tl.Expr) { x.Set(fc.op(x.At(i, j)), i, j) }, 16, 256)
			k.Copy(x, Y.Sub(tl.Tile(bx, 16), tl.Tile(0, 256)))
		})
		fn, err := f.Build(b.Limits())
		if err != nil {
			t.Fatal(err)
		}
		x := tensor.New(ir.F32, rows, cols).Rand(uint64(len(fc.name)), fc.scale)
		for _, arch := range archs(b) {
			t.Run(fc.name+"/"+arch, func(t *testing.T) {
				y := tensor.New(ir.F32, rows, cols)
				runPoisoned(t, b, arch, fn, []*tensor.Tensor{x, y})
				bad := 0
				for i, v := range x.Data {
					want := fc.ref(v)
					err := math.Abs(y.Data[i] - want)
					if !(err <= fc.rel*math.Abs(want) || err <= fc.absMax || err <= 1e-30) {
						if bad++; bad <= 5 {
							t.Errorf("%s(%g) = %g, want %g (error %.3g)", fc.name, v, y.Data[i], want, err)
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d elements off", bad, len(x.Data))
				}
			})
		}
	}
}

// CopyRate measures a copy at a bandwidth a GPU has: between 100 GB/s and
// 20 TB/s for 256 MiB (an H200 copies at about 4 TB/s).
func TestGPUCopyRate(t *testing.T) {
	b := openGPU(t)
	for _, flush := range []int{0, 256 << 20} {
		rate, err := b.CopyRate(256<<20, backend.RunOptions{Warmup: 2, Repeats: 10, FlushBytes: flush})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("flush %d: %.0f GB/s", flush, rate/1e9)
		if rate < 100e9 || rate > 20e12 {
			t.Errorf("flush %d: %.3g bytes/s", flush, rate)
		}
	}
}
