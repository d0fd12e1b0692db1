package ref

import (
	"math"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Diffs counted apart and merged equal one diff over all the elements.
func TestDiffMerge(t *testing.T) {
	pairs := [][2]float64{{1, 1.5}, {-2, -2}, {3, 2}, {math.NaN(), 1}, {0.5, 0.25}}
	var whole, a, b Diff
	for i, p := range pairs {
		whole.Add(p[0], p[1])
		if i%2 == 0 {
			a.Add(p[0], p[1])
		} else {
			b.Add(p[0], p[1])
		}
	}
	a.Merge(b)
	if a != whole {
		t.Errorf("merged %+v, want %+v", a, whole)
	}
}

// Vec reads the same elements as At, for row-major, BSHD-like and
// column-major strides (a copy when the last dim is not contiguous), and
// panics on an index At would refuse.
func TestVec(t *testing.T) {
	shape := []int{2, 3, 4, 5}
	for name, strides := range map[string][]int{
		"row-major":    {60, 20, 5, 1},
		"bshd":         {60, 5, 15, 1},
		"column-major": {1, 2, 6, 24},
	} {
		x := tensor.NewStrided(ir.F32, shape, strides).Rand(3, 1)
		for a := range 2 {
			for b := range 3 {
				for c := range 4 {
					row := Vec(x, a, b, c)
					if len(row) != 5 {
						t.Fatalf("%s: %d elements, want 5", name, len(row))
					}
					for d, v := range row {
						if v != x.At(a, b, c, d) {
							t.Fatalf("%s [%d %d %d %d]: %v, At %v", name, a, b, c, d, v, x.At(a, b, c, d))
						}
					}
				}
			}
		}
	}
	c := tensor.New(ir.F32, 3, 7).Rand(4, 1) // any rank: MLA's cache rows
	for d, v := range Vec(c, 2) {
		if v != c.At(2, d) {
			t.Fatalf("rank 2 [2 %d]: %v, At %v", d, v, c.At(2, d))
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Vec(x, 0, 3, 0) of a [2 3 4 5] tensor did not panic")
		}
	}()
	Vec(tensor.New(ir.F32, shape...), 0, 3, 0)
}
