//go:build gpu

package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/tensor"
)

// Atomic adds of shared f32 tiles into overlapping rows of a tensor
// (testprog.SharedTileAdds: by TMA reduce-adds on sm_90a, the last tile
// past the tensor's end; the threads' atomics elsewhere) leave what the
// interpreter leaves, from the same starting values (not poisoned: the
// adds keep them).
func TestGPUSharedTileAdds(t *testing.T) {
	b := openGPU(t)
	fn, err := testprog.SharedTileAdds().Build(b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs(b) {
		t.Run(arch, func(t *testing.T) {
			want := []*tensor.Tensor{tensor.New(fn.Params[0].DType, 4, 64, 64).Rand(1, 1), tensor.New(fn.Params[1].DType, 100, 64).Rand(2, 1)}
			got := []*tensor.Tensor{tensor.New(want[0].DType, 4, 64, 64), tensor.New(want[1].DType, 100, 64)}
			for i := range got {
				copy(got[i].Data, want[i].Data)
			}
			if err := interp.Run(fn, want); err != nil {
				t.Fatal(err)
			}
			p, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
			if err != nil {
				t.Fatal(err)
			}
			if tma := strings.Contains(p.Source, "tl::tma_reduce_add_2d("); tma != (arch == "sm_90a") {
				t.Fatalf("TMA reduce-adds %v on %s", tma, arch)
			}
			l, err := Prepare(b, p, got)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Free()
			if err := l.Once(); err != nil {
				t.Fatal(err)
			}
			if err := l.Download(got); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range 100 * 64 {
				w, g := want[1].At(i/64, i%64), got[1].At(i/64, i%64)
				if math.Abs(w-g) > 1e-5*(1+math.Abs(w)) {
					if bad++; bad <= 5 {
						t.Errorf("Y[%d][%d] = %g, want %g", i/64, i%64, g, w)
					}
				}
			}
		})
	}
}
