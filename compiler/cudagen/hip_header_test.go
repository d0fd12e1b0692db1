package cudagen

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// The AMD device library's conversions (include/tilego_hip.h, built for
// the host by clang++-19) round as the interpreter does (tensor.Round):
// f16, bf16 and the two OCP f8 formats, nearest even, the f8 ones
// saturating; and they decode back to the same values. The output
// rounding modes (Options.Rounding) round f16 and bf16 toward zero (rz)
// and to nearest with ties away (ra), as the neighbours of the
// nearest-even result say. The f32 inputs are
// random bit patterns, the values either side of every dtype's rounding
// boundaries, and the special values.
func TestHIPConversions(t *testing.T) {
	prog := `#include "tilego_hip.h"
#include <cstdio>
int main() {
  unsigned u;
  while (scanf("%x", &u) == 1) {
    float f = __uint_as_float(u);
    uint16_t h = tl::f32_to_f16(f), b = tl::f32_to_bf16(f);
    uint8_t e4 = tl::f32_to_e4m3(f), e5 = tl::f32_to_e5m2(f);
    printf("%x %x %x %x %x %x %x %x %x %x %x %x %x\n", u, h, b, e4, e5,
           __float_as_uint(tl::f16_to_f32(h)), __float_as_uint(tl::bf16_to_f32(b)),
           __float_as_uint(tl::e4m3_to_f32(e4)), __float_as_uint(tl::e5m2_to_f32(e5)),
           tl::f32_to_f16_rz(f), tl::f32_to_bf16_rz(f), tl::f32_to_f16_ra(f), tl::f32_to_bf16_ra(f));
  }
}
`
	var in strings.Builder
	inputs := conversionInputs()
	for _, u := range inputs {
		fmt.Fprintf(&in, "%x\n", u)
	}
	out := runHost(t, prog, in.String())
	dts := []ir.DType{ir.F16, ir.BF16, ir.F8E4M3, ir.F8E5M2}
	sc := bufio.NewScanner(strings.NewReader(out))
	n, bad := 0, 0
	for sc.Scan() {
		var w [13]uint64
		for i, f := range strings.Fields(sc.Text()) {
			w[i], _ = strconv.ParseUint(f, 16, 32)
		}
		x := float64(math.Float32frombits(uint32(w[0])))
		for i, dt := range dts {
			got := float64(math.Float32frombits(uint32(w[5+i])))
			want := tensor.Round(dt, x)
			if math.IsNaN(want) && math.IsNaN(got) {
				continue
			}
			wantBits := tensor.Bits(dt, x)
			if got != want || w[1+i] != wantBits {
				if bad++; bad <= 10 {
					t.Errorf("%s(%g = %#x): bits %#x (%g), want %#x (%g)", dt, x, w[0], w[1+i], got, wantBits, want)
				}
			}
		}
		for i, dt := range dts[:2] {
			for j, mode := range []string{"rz", "ra"} {
				got := w[9+2*j+i]
				if want, ok := roundMode(dt, float32(x), mode); ok && got != want {
					if bad++; bad <= 10 {
						t.Errorf("%s %s(%g = %#x): bits %#x, want %#x", dt, mode, x, w[0], got, want)
					}
				}
			}
		}
		n++
	}
	if n != len(inputs) {
		t.Fatalf("%d results for %d inputs", n, len(inputs))
	}
	if bad > 0 {
		t.Errorf("%d mismatches in %d inputs", bad, n)
	}
}

// conversionInputs are f32 bit patterns: specials, the values next to
// every representable value's rounding boundaries in the 16- and 8-bit
// formats (ties, one ulp either side), and random patterns.
func conversionInputs() []uint32 {
	us := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 1, 0x807fffff, 0x7f7fffff}
	for _, dt := range []ir.DType{ir.F16, ir.BF16, ir.F8E4M3, ir.F8E5M2} {
		for b := uint64(0); b < 1<<(8*dt.Bytes()); b += 1 + uint64(dt.Bytes()-1)*37 {
			v := float32(tensor.FromBits(dt, b))
			if v != v || math.IsInf(float64(v), 0) {
				continue
			}
			next := float32(tensor.FromBits(dt, b+1))
			for _, x := range []float32{v, (v + next) / 2} {
				u := math.Float32bits(x)
				us = append(us, u, u+1, u-1)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		us = append(us, r.Uint32())
	}
	return us
}

// roundMode is x in dt's bits rounded toward zero (rz) or to nearest with
// ties away from zero (ra), found among the nearest-even result's
// neighbours; ok is false for NaN, whose bits are the library's choice.
// ra keeps tilego.cuh's rule for f16 results outside the normal range
// (nearest even there).
func roundMode(dt ir.DType, x float32, mode string) (uint64, bool) {
	v := float64(x)
	if math.IsNaN(v) {
		return 0, false
	}
	if math.IsInf(v, 0) {
		return tensor.Bits(dt, v), true
	}
	if mode == "ra" && dt == ir.F16 && !(math.Abs(v) < 65520 && math.Abs(v) >= 6.103515625e-05) {
		return tensor.Bits(dt, v), true
	}
	rn := tensor.Bits(dt, v)
	if mode == "ra" && math.IsInf(tensor.FromBits(dt, rn), 0) { // past the largest finite value and half an ulp: overflows either way
		return rn, true
	}
	best, found := rn, false
	var bestErr float64
	for _, b := range []uint64{rn - 1, rn, rn + 1} {
		y := tensor.FromBits(dt, b)
		if math.IsNaN(y) || math.IsInf(y, 0) && !math.IsInf(tensor.FromBits(dt, rn), 0) {
			continue
		}
		if math.Signbit(y) != math.Signbit(v) && y != 0 && v != 0 {
			continue
		}
		switch mode {
		case "rz":
			if math.Abs(y) <= math.Abs(v) && (!found || math.Abs(y) > math.Abs(tensor.FromBits(dt, best))) {
				best, found = b, true
			}
		case "ra":
			d := math.Abs(y - v)
			if !found || d < bestErr || d == bestErr && math.Abs(y) > math.Abs(tensor.FromBits(dt, best)) {
				best, bestErr, found = b, d, true
			}
		}
	}
	return best, found
}

// The AMD device library's math functions (tanh, erf, log1p, expm1 and
// sigmoid, written from exp and log), built for the host, against float64
// on magnitudes from 1e-30 to 100 of both signs: the largest error in
// units of the f32 result's precision (2^-24 relative) stays under the
// bound each one documents (docs/language.md).
func TestHIPMath(t *testing.T) {
	prog := `#include "tilego_hip.h"
#include <cstdio>
int main() {
  float x;
  while (scanf("%a", &x) == 1) {
    printf("%a %a %a %a %a %a %a %a\n", x, tl::tanh_(x), tl::erf_(x), tl::log1p_(x), tl::expm1_(x), tl::sigmoid_(x), tl::sin_(x), tl::cos_(x));
  }
}
`
	var in strings.Builder
	for e := -30.0; e <= 3; e += 0.01 { // to 1000
		for _, s := range []float64{1, -1} {
			fmt.Fprintf(&in, "%x\n", float32(s*math.Pow(10, e)))
		}
	}
	nearRoots := 0 // the floats nearest k·π/2, where sin or cos is small and its relative error large
	for k := 1; k <= 600; k++ {
		fmt.Fprintf(&in, "%x\n", float32(float64(k)*math.Pi/2))
		nearRoots++
	}
	out := runHost(t, prog, in.String())
	fns := []struct {
		name  string
		ref   func(float64) float64
		bound float64 // in ulps of the result (2^-24 relative)
	}{
		{"tanh", math.Tanh, 4},
		{"erf", math.Erf, 4},
		{"log1p", math.Log1p, 4},
		{"expm1", math.Expm1, 4},
		{"sigmoid", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 4},
		{"sin", math.Sin, 4},
		{"cos", math.Cos, 4},
	}
	worst, at := make([]float64, len(fns)), make([]float64, len(fns))
	var trigAbs float64 // sin's and cos's largest absolute error
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		x, _ := strconv.ParseFloat(f[0], 64)
		for i, fn := range fns {
			got, err := strconv.ParseFloat(f[1+i], 64)
			if err != nil && strings.Contains(f[1+i], "nan") { // "-nan": printf's, not Go's
				got, err = math.NaN(), nil
			}
			if err != nil {
				t.Fatal(err)
			}
			want := fn.ref(x)
			if math.IsNaN(want) || math.IsNaN(got) {
				if !math.IsNaN(want) || !math.IsNaN(got) {
					t.Errorf("%s(%g) = %g, want %g", fn.name, x, got, want)
				}
				continue
			}
			if math.IsInf(want, 0) || math.IsInf(got, 0) {
				if got != want && float64(float32(want)) != got {
					t.Errorf("%s(%g) = %g, want %g", fn.name, x, got, want)
				}
				continue
			}
			if fn.name == "sin" || fn.name == "cos" {
				trigAbs = math.Max(trigAbs, math.Abs(got-want))
				if math.Abs(want) < 1e-3 { // near a root: judged by the absolute error below
					continue
				}
			}
			ulps := math.Abs(got-want) / math.Max(math.Abs(want), 0x1p-126) * 0x1p24
			if ulps > worst[i] {
				worst[i], at[i] = ulps, x
			}
		}
		n++
	}
	if n < 6000+nearRoots {
		t.Fatalf("%d results", n)
	}
	t.Logf("sin, cos: at most %.3g absolute error over |x| <= 1000, roots included", trigAbs)
	if trigAbs > 1e-7 {
		t.Errorf("sin, cos: absolute error %.3g, over 1e-7", trigAbs)
	}
	for i, fn := range fns {
		t.Logf("%s: at most %.2f ulps over %d inputs (at %g)", fn.name, worst[i], n, at[i])
		if worst[i] > fn.bound {
			t.Errorf("%s: %.2f ulps, over its bound of %g", fn.name, worst[i], fn.bound)
		}
	}
}

// runHost builds prog, C++ that includes the AMD device library, for the
// host with clang++-19 and returns what it prints for input on stdin.
func runHost(t *testing.T, prog, input string) string {
	t.Helper()
	clang, err := exec.LookPath("clang++-19")
	if err != nil {
		t.Fatalf("clang++-19 not found (apt-get install clang-19 lld-19 llvm-19): %v", err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "prog.cc"), filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-O2", "-ffp-model=strict", "-Iinclude", src, "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("building the host program: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The AMD library's pow, built for the host, against float64: C's special
// cases exactly, and elsewhere within a few ulps plus the growth of exp2's
// argument error with |y·log2 x| (2^-24 of it, relative).
func TestHIPPow(t *testing.T) {
	prog := `#include "tilego_hip.h"
#include <cstdio>
int main() {
  float x, y;
  while (scanf("%a %a", &x, &y) == 2) printf("%a %a %a\n", x, y, tl::pow_(x, y));
}
`
	inf, nan := math.Inf(1), math.NaN()
	special := [][2]float64{{2, 0}, {nan, 0}, {1, nan}, {-1, inf}, {-1, -inf}, {0, -1}, {math.Copysign(0, -1), -1}, {math.Copysign(0, -1), 2},
		{-2, 3}, {-2, 2}, {-2, 0.5}, {-inf, 3}, {-inf, 0.5}, {-inf, -0.5}, {inf, -2}, {0.5, inf}, {2, -inf}, {nan, 2}}
	var in strings.Builder
	for _, p := range special {
		fmt.Fprintf(&in, "%x %x\n", float32(p[0]), float32(p[1]))
	}
	for _, x := range []float64{1e-30, 1e-5, 0.3, 0.999, 1.001, 2, 7.5, 1e3, 1e20, -3, -0.5} {
		for _, y := range []float64{-7, -2.5, -1, -0.5, 0.25, 0.5, 1, 2, 3, 3.7, 11} {
			if x < 0 && y != math.Trunc(y) {
				continue
			}
			fmt.Fprintf(&in, "%x %x\n", float32(x), float32(y))
		}
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(runHost(t, prog, in.String())), "\n") {
		f := strings.Fields(line)
		var v [3]float64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseFloat(f[i], 64); err != nil && strings.Contains(f[i], "nan") {
				v[i], err = math.NaN(), nil
			} else if err != nil {
				t.Fatal(err)
			}
		}
		x, y, got := v[0], v[1], v[2]
		want := float64(float32(math.Pow(x, y)))
		n++
		switch {
		case math.IsNaN(want) || math.IsNaN(got):
			if math.IsNaN(want) != math.IsNaN(got) {
				t.Errorf("pow(%g, %g) = %g, want %g", x, y, got, want)
			}
		case math.IsInf(want, 0) || want == 0:
			if got != want || math.Signbit(got) != math.Signbit(want) {
				t.Errorf("pow(%g, %g) = %g, want %g", x, y, got, want)
			}
		default:
			bound := (4 + math.Abs(y*math.Log2(math.Abs(x)))) * 0x1p-24
			if rel := math.Abs(got-want) / math.Abs(want); rel > bound {
				t.Errorf("pow(%g, %g) = %g, want %g: relative error %.3g over %.3g", x, y, got, want, rel, bound)
			}
		}
	}
	if n < len(special)+100 {
		t.Fatalf("%d results", n)
	}
}
