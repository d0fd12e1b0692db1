package ref

import (
	"math"
	"testing"
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
