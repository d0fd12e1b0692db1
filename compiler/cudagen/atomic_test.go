package cudagen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/tl"
)

// A Gemm's accumulator added atomically into global memory goes two
// columns a vector reduction where its register pairs are adjacent,
// aligned columns of the destination; elsewhere one atomicAdd an element.
func TestAtomicPairs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cols     int // the destination's row length
		col0     int // the region's first column
		want, no string
	}{
		{"even", 64, 0, "tl::red_add_f32x2(", "atomicAdd(&"},
		{"odd row length", 65, 0, "atomicAdd(&", "red_add_f32x2("},
		{"odd first column", 80, 1, "atomicAdd(&", "red_add_f32x2("},
	} {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, arch), func(t *testing.T) {
				f := tl.NewFunc("atomic_pairs")
				A := f.In("A", tl.BF16, 128, 64)
				B := f.In("B", tl.BF16, 64, 64)
				C := f.Out("C", tl.F32, 128, tc.cols)
				f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
					bx, _, _ := k.Idx()
					as := k.Shared(tl.BF16, 64, 64)
					bs := k.Shared(tl.BF16, 64, 64)
					acc := k.Fragment(tl.F32, 64, 64)
					k.Copy(A.Sub(tl.Tile(bx, 64), tl.All), as)
					k.Copy(B, bs)
					k.Gemm(as, bs, acc, tl.ClearAccum)
					k.AtomicAdd(acc, C.Sub(tl.Tile(bx, 64), tl.Range(tc.col0, 64)))
				})
				fn, err := f.Build()
				if err != nil {
					t.Fatal(err)
				}
				p, err := Compile(fn, Options{Arch: arch})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(p.Source, tc.want) || strings.Contains(p.Source, tc.no) {
					t.Errorf("want %q and no %q in:\n%s", tc.want, tc.no, p.Source[strings.Index(p.Source, "__global__"):])
				}
			})
		}
	}
}
