package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tilego/tilego/ir"
)

func TestRoundKnownValues(t *testing.T) {
	cases := []struct {
		dt   ir.DType
		in   float64
		want float64
	}{
		{ir.BF16, 1.0, 1.0},
		{ir.BF16, 1 + 1.0/256, 1.0},                // tie: round to even (down)
		{ir.BF16, 1 + 3.0/256, 1 + 4.0/256},        // tie: round to even (up)
		{ir.BF16, 1 + 1.0/256 + 1e-9, 1 + 1.0/128}, // just past the tie
		{ir.F16, 65504, 65504},
		{ir.F16, 65520, math.Inf(1)}, // rounds past the largest finite
		{ir.F16, 1e-8, 0},            // below half the smallest subnormal
		{ir.F16, 6e-8, 0x1p-24},      // smallest subnormal
		{ir.F8E4M3, 448, 448},
		{ir.F8E4M3, 1000, 448}, // saturates, as cvt.rn.satfinite
		{ir.F8E4M3, math.Inf(-1), -448},
		{ir.F8E4M3, 0.3, 0.3125},
		{ir.F8E5M2, 0.3, 0.3125},
		{ir.F8E5M2, 1e6, 57344},
		{ir.F8E5M2, math.Inf(1), 57344},
		{ir.F8E4M3, math.NaN(), math.NaN()},
		{ir.I32, -2.7, -2},
	}
	for _, c := range cases {
		got := Round(c.dt, c.in)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("Round(%s, %g) = %g, want %g", c.dt, c.in, got, c.want)
		}
	}
}

// Encoding then decoding any value must give back its rounded value, and
// the bits must agree with the Go standard library where it has the format.
func TestBitsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []ir.DType{ir.F32, ir.F16, ir.BF16, ir.F8E4M3, ir.F8E5M2} {
		for range 20000 {
			x := r.NormFloat64() * math.Pow(2, float64(r.IntN(30)-15))
			want := Round(dt, x)
			got := FromBits(dt, Bits(dt, x))
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s: %g rounds to %g but round-trips to %g (bits %#x)", dt, x, want, got, Bits(dt, x))
			}
		}
	}
	for range 10000 {
		x := float32(r.NormFloat64() * 100)
		if b := Bits(ir.BF16, float64(x)); FromBits(ir.BF16, b) != float64(math.Float32frombits(uint32(b)<<16)) {
			t.Fatalf("bf16 bits of %g disagree with the f32 upper half", x)
		}
	}
	if b := Bits(ir.F16, 1); b != 0x3c00 {
		t.Errorf("f16 bits of 1 = %#x, want 0x3c00", b)
	}
	if b := Bits(ir.F8E4M3, -2); b != 0xc0 {
		t.Errorf("e4m3 bits of -2 = %#x, want 0xc0", b)
	}
}
