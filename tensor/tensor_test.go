package tensor

import (
	"testing"

	"github.com/tilego/tilego/ir"
)

// Bytes and SetBytes round-trip a tensor bigger than one parallel chunk,
// element for element, in every storage width.
func TestBytesRoundTripLarge(t *testing.T) {
	for _, dt := range []ir.DType{ir.BF16, ir.F32, ir.I32} {
		x := New(dt, 3<<20+5)
		for i := range x.Data {
			x.Data[i] = Round(dt, float64(i%1000)-500.5)
		}
		y := New(dt, len(x.Data))
		if err := y.SetBytes(x.Bytes()); err != nil {
			t.Fatal(err)
		}
		for i := range x.Data {
			if x.Data[i] != y.Data[i] {
				t.Fatalf("%s[%d]: %g -> %g", dt, i, x.Data[i], y.Data[i])
			}
		}
	}
}

// An index outside its dim, or the wrong number of them, panics rather
// than reading a neighbor.
func TestOffsetBounds(t *testing.T) {
	x := New(ir.F32, 2, 3)
	for _, idx := range [][]int{{0, 3}, {2, 0}, {-1, 0}, {1}, {0, 0, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("At%v on shape [2 3] did not panic", idx)
				}
			}()
			x.At(idx...)
		}()
	}
	if x.Offset(1, 2) != 5 {
		t.Errorf("Offset(1, 2) = %d, want 5", x.Offset(1, 2))
	}
}
