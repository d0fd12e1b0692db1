//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/examples"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// softmaxRef is each row's softmax in float64.
func softmaxRef(x *tensor.Tensor, rows, cols int) []float64 {
	out := make([]float64, rows*cols)
	for i := range rows {
		m := math.Inf(-1)
		for j := range cols {
			m = math.Max(m, x.At(i, j))
		}
		s := 0.0
		for j := range cols {
			s += math.Exp(x.At(i, j) - m)
		}
		for j := range cols {
			out[i*cols+j] = math.Exp(x.At(i, j)-m) / s
		}
	}
	return out
}

// TestGPUSoftmax runs the row softmax a newcomer writes: a shared tile
// rewritten in place and stored whole. With 16-bit tiles of fewer than 8
// rows over several 128-byte panels, the TMA store read the odd panels
// with another swizzle than the threads wrote them (hardwareSwizzled).
func TestGPUSoftmax(t *testing.T) {
	b := openGPU(t)
	type shape struct{ rows, cols, bm, bn, threads int }
	shapes := []shape{
		{4, 1024, 4, 1024, 128}, // the report's
		{37, 1024, 4, 256, 128}, // a partial last block
		{13, 640, 4, 128, 128},  // 5 panels
		{64, 512, 8, 256, 256},  // 8 rows: the TMA store stays
		{24, 384, 12, 128, 128}, // 12 rows
		{4096, 8192, 4, 1024, 128},
	}
	for _, dt := range []ir.DType{ir.BF16, ir.F16, ir.F32} {
		for _, s := range shapes {
			fn, err := examples.Softmax(s.rows, s.cols, dt, s.bm, s.bn, s.threads).Build(b.Limits())
			if err != nil {
				t.Fatal(err)
			}
			x := tensor.New(dt, s.rows, s.cols).Rand(uint64(s.rows*s.cols), 2)
			want := softmaxRef(x, s.rows, s.cols)
			var interpOut *tensor.Tensor
			if s.rows*s.cols <= 1<<16 {
				interpOut = tensor.New(dt, s.rows, s.cols)
				if err := interp.Run(fn, []*tensor.Tensor{x, interpOut}); err != nil {
					t.Fatal(err)
				}
			}
			tol := map[ir.DType]float64{ir.BF16: 1e-2, ir.F16: 2e-3, ir.F32: 1e-5}[dt]
			for _, arch := range archs(b) {
				t.Run(fmt.Sprintf("%s/%v/%dx%d/bm%d", arch, dt, s.rows, s.cols, s.bm), func(t *testing.T) {
					y := tensor.New(dt, s.rows, s.cols)
					runPoisoned(t, b, arch, fn, []*tensor.Tensor{x, y})
					var d ref.Diff
					for i := range want {
						d.Add(y.Data[i], want[i])
					}
					if !(d.Rel() <= tol) {
						t.Errorf("against float64: %s, over %g", &d, tol)
					}
					if interpOut != nil {
						var di ref.Diff
						for i := range y.Data {
							di.Add(y.Data[i], interpOut.Data[i])
						}
						if !(di.Rel() <= tol) {
							t.Errorf("against the interpreter: %s", &di)
						}
					}
				})
			}
		}
	}
}
