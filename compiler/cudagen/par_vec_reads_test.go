package cudagen_test

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// A Parallel loop that scales rows by a per-column vector, held in shared
// memory or read from global memory, reads the vector 16 bytes at a time
// where the index is the loop's run variable; other reads stay element by
// element. Emulated on gfx942,
// every variant gives the interpreter's answer.
func TestParallelVectorReads(t *testing.T) {
	const rows, cols = 5, 256
	for _, tc := range []struct {
		name string
		dt   tl.DType
		read func(w *tl.Tensor, i, j tl.Expr) tl.Expr
		vecs int // vector reads in the CUDA source
		glob bool
	}{
		{"bf16 by column", tl.BF16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j) }, 1, false},
		{"f16 by column", tl.F16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j) }, 1, false},
		{"f32 by column", tl.F32, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j) }, 1, false},
		{"shifted column", tl.BF16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j.Add(1).Mod(cols)) }, 0, false},
		{"by row", tl.BF16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(i) }, 0, false},
		{"global bf16 by column", tl.BF16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j) }, 1, true},
		{"global f32 by column", tl.F32, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j) }, 1, true},
		{"global shifted column", tl.F16, func(w *tl.Tensor, i, j tl.Expr) tl.Expr { return w.At(j.Add(1).Mod(cols)) }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("scale_cols")
			X := f.In("X", tc.dt, rows, cols)
			W := f.In("W", tc.dt, cols)
			Y := f.Out("Y", tl.F32, rows, cols)
			f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
				x := k.Fragment(tl.F32, rows, cols)
				ws := W
				if !tc.glob {
					ws = k.Shared(tc.dt, cols)
					k.Copy(W, ws)
				}
				k.Copy(X, x)
				k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(tc.read(ws, i, j)), i, j) }, rows, cols)
				k.Copy(x, Y)
			})
			p := compileHopper(t, f)
			if got := strings.Count(p.Source, "if (r % "); got != tc.vecs {
				t.Errorf("%d vector reads, want %d:\n%s", got, tc.vecs, p.Source)
			}
			// No TMA and no wgmma: no plain write needs a proxy fence.
			if strings.Contains(p.Source, "fence_proxy_async") {
				t.Errorf("a proxy fence in a kernel without TMA or wgmma:\n%s", p.Source)
			}
			// X's 16-byte loads unpack each 32-bit pair by a shift and a mask.
			if want := "tl::" + tc.dt.String() + "_lo(((const uint32_t*)&vec)"; tc.dt != tl.F32 && !strings.Contains(p.Source, want) {
				t.Errorf("X's vector loads do not unpack pairs (%s):\n%s", want, p.Source)
			}
			args := []*tensor.Tensor{tensor.New(tc.dt, rows, cols).Rand(1, 1), tensor.New(tc.dt, cols).Rand(2, 1), tensor.New(tl.F32, rows, cols)}
			emulateAgainstInterp(t, f, args)
		})
	}
}

// A fragment copied only to and from a shared tile gets 16-byte runs of the
// tile's element (seedLayout), so the copies are vector shared loads and
// stores; a loop whose body ends on the store's barrier does not add a
// second. Emulated on gfx942, it gives the interpreter's answer.
func TestSharedVectorCopies(t *testing.T) {
	const rows, cols, bn = 2, 1024, 256
	for _, dt := range []tl.DType{tl.BF16, tl.F32} {
		t.Run(dt.String(), func(t *testing.T) {
			f := tl.NewFunc("chunks")
			X := f.In("X", dt, rows, cols)
			Y := f.Out("Y", dt, rows, cols)
			f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
				xs := k.Shared(dt, rows, cols)
				xf := k.Fragment(tl.F32, rows, bn)
				k.Copy(X, xs)
				k.Serial(cols/bn, func(j tl.Expr) {
					k.Copy(xs.Sub(tl.All, tl.Tile(j, bn)), xf)
					k.Parallel(func(i, c tl.Expr) { xf.Set(xf.At(i, c).Mul(j.Add(2)), i, c) }, rows, bn)
					k.Copy(xf, xs.Sub(tl.All, tl.Tile(j, bn)))
				})
				k.Copy(xs, Y)
			})
			p := compileHopper(t, f)
			if !strings.Contains(p.Source, "vec = *(const uint4*)((smem") || !strings.Contains(p.Source, "*(uint4*)((smem") {
				t.Errorf("the chunk copies are not vector shared loads and stores:\n%s", p.Source)
			}
			if strings.Contains(p.Source, "__syncthreads();\n    __syncthreads();") {
				t.Errorf("two barriers in a row at the loop's end:\n%s", p.Source)
			}
			args := []*tensor.Tensor{tensor.New(dt, rows, cols).Rand(3, 1), tensor.New(dt, rows, cols)}
			emulateAgainstInterp(t, f, args)
		})
	}
}

// compileHopper builds f and compiles it for sm_90a.
func compileHopper(t *testing.T, f *tl.Func) *cudagen.Program {
	t.Helper()
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
