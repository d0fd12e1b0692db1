package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
	"github.com/tilego/tilego/tl"
)

// A fragment that only element-wise loops use and that is copied whole
// from and to global memory gets a seeded layout of 16-byte runs, one row
// a thread where the threads divide the rows (layout.Rows), and its
// copies become vector loads and stores; where the tile's width or first
// column breaks the 16-byte alignment, they stay element by element.
func TestVectorCopies(t *testing.T) {
	for _, tc := range []struct {
		name         string
		dt           tl.DType
		width, start int // the tensors' columns, the tile's first
		loads        int // 16-byte loads in the source (one loop each)
		rowStat      bool
	}{
		{"bf16", tl.BF16, 512, 0, 1, true},
		{"f32", tl.F32, 512, 0, 1, true},
		{"from column 256", tl.BF16, 768, 256, 1, true},
		{"from column 4", tl.BF16, 516, 4, 0, true},
		{"odd width", tl.BF16, 500, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("vec")
			X := f.In("X", tc.dt, 8, tc.width)
			Y := f.Out("Y", tc.dt, 8, tc.width)
			S := f.Out("S", tl.F32, 8)
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				x := k.Fragment(tc.dt, 8, 256)
				acc := k.Fragment(tl.F32, 8, 256)
				s := k.Fragment(tl.F32, 8).Named("s")
				k.Copy(X.Sub(tl.All, tl.Range(tc.start, 256)), x)
				k.Parallel(func(i tl.Expr) { s.Set(i.Add(1), i) }, 8) // seeded by the wider loop below
				k.Parallel(func(i, j tl.Expr) { acc.Set(x.At(i, j).Mul(s.At(i)), i, j) }, 8, 256)
				k.Copy(acc, Y.Sub(tl.All, tl.Range(tc.start, 256)))
				k.Copy(s, S)
			})
			src := compileFunc(t, f, "sm_90a").Source
			loads, stores := strings.Count(src, "vec = *(const uint4*)("), strings.Count(src, "*(uint4*)(&Y[")
			if loads != tc.loads || stores != tc.loads {
				t.Errorf("%d vector loads and %d stores, want %d of each:\n%s", loads, stores, tc.loads, src)
			}
			// One row a thread: the row statistic is one register.
			if got := strings.Contains(src, "float s_[1];"); got != tc.rowStat {
				t.Errorf("row statistic in one register: %v, want %v:\n%s", got, tc.rowStat, src)
			}
		})
	}
}

// A layout whose threads start their runs off a 16-byte boundary (runs of
// 8 bf16 at columns 4, 12, ...: a thread digit of stride 4) keeps the copy
// element by element, though each register run is long enough; here from
// a tensor of more dims than the fragment, as MLA's partials are.
func TestVectorCopiesNeedAlignedRuns(t *testing.T) {
	l := layout.Rows(8, 256, 128, 8)
	l.Thread[0].Stride = 4 // 16 threads a row, 4 columns apart: overlapping runs, never aligned
	c := &compilation{}
	e := &emitter{c: c}
	f := tl.NewFunc("vec")
	X := f.In("X", tl.BF16, 2, 8, 256)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		x := k.Fragment(tl.BF16, 8, 256)
		k.Copy(X.Sub(1, tl.All, tl.All), x)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	cp := fn.Kernel.Body[len(fn.Kernel.Body)-1].(*ir.Copy)
	if e.copyVectors(cp.Dst, cp.Src, l, false) {
		t.Error("vector copy of runs that start off 16-byte boundaries")
	}
}
