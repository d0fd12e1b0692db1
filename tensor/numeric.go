// Package tensor holds host tensors and the number formats of tilego's
// dtypes: rounding to f16, bf16 and f8 as the GPU does, and their bits.
package tensor

import (
	"math"

	"github.com/tilego/tilego/ir"
)

// format describes a binary floating-point format narrower than f64.
type format struct {
	mant    int     // explicit mantissa bits
	exp     int     // exponent bits
	bias    int     // exponent bias
	maxVal  float64 // largest finite value
	hasInf  bool    // false: no infinities (e4m3fn)
	nanBits uint64
	// satFinite: a store saturates overflow and infinities to the largest
	// finite value, as the GPU's f8 conversions (cvt.rn.satfinite) do;
	// NaN stays NaN.
	satFinite bool
}

var formats = map[ir.DType]format{
	ir.F32:    {mant: 23, exp: 8, bias: 127, maxVal: math.MaxFloat32, hasInf: true, nanBits: 0x7fc00000},
	ir.F16:    {mant: 10, exp: 5, bias: 15, maxVal: 65504, hasInf: true, nanBits: 0x7e00},
	ir.BF16:   {mant: 7, exp: 8, bias: 127, maxVal: 0x1.fep127, hasInf: true, nanBits: 0x7fc0},
	ir.F8E4M3: {mant: 3, exp: 4, bias: 7, maxVal: 448, hasInf: false, nanBits: 0x7f, satFinite: true},
	ir.F8E5M2: {mant: 2, exp: 5, bias: 15, maxVal: 57344, hasInf: true, nanBits: 0x7e, satFinite: true},
}

// Round returns x rounded to the nearest value of dt (ties to even), as a
// store to a buffer of that type does. Integers truncate toward zero.
func Round(dt ir.DType, x float64) float64 {
	switch dt {
	case ir.Bool:
		if x != 0 {
			return 1
		}
		return 0
	case ir.I32:
		return float64(int32(math.Trunc(x)))
	case ir.I64:
		return math.Trunc(x)
	case ir.F32:
		return float64(float32(x))
	case ir.BF16:
		if float64(float32(x)) == x { // exactly an f32: round its bits (fast path)
			return FromBits(ir.BF16, bf16Bits(float32(x)))
		}
	}
	f, ok := formats[dt]
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		if math.IsInf(x, 0) && ok && f.satFinite {
			return math.Copysign(f.maxVal, x)
		}
		return x
	}
	// Round via f32 first only where the hardware does (none here): convert
	// straight from the exact value.
	_, e := math.Frexp(math.Abs(x)) // |x| = m * 2^e, m in [0.5, 1)
	e--                             // now |x| = m' * 2^e with m' in [1, 2)
	minExp := 1 - f.bias
	if e < minExp {
		e = minExp
	}
	q := math.Ldexp(1, e-f.mant)
	r := math.RoundToEven(x/q) * q
	if math.Abs(r) > f.maxVal {
		if f.satFinite {
			return math.Copysign(f.maxVal, x)
		}
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

// Bits encodes x (first rounded to dt) in dt's storage format.
func Bits(dt ir.DType, x float64) uint64 {
	switch dt {
	case ir.Bool:
		if x != 0 {
			return 1
		}
		return 0
	case ir.I32:
		return uint64(uint32(int32(math.Trunc(x))))
	case ir.I64:
		return uint64(int64(math.Trunc(x)))
	case ir.F32:
		return uint64(math.Float32bits(float32(x)))
	case ir.BF16:
		if float64(float32(x)) == x {
			return bf16Bits(float32(x))
		}
	}
	f := formats[dt]
	x = Round(dt, x)
	width := 1 + f.exp + f.mant
	var sign uint64
	if math.Signbit(x) {
		sign = 1 << (width - 1)
	}
	ax := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return f.nanBits
	case math.IsInf(x, 0):
		return sign | uint64((1<<f.exp)-1)<<f.mant
	case ax == 0:
		return sign
	}
	_, e := math.Frexp(ax)
	e--
	if e < 1-f.bias { // subnormal
		return sign | uint64(ax/math.Ldexp(1, 1-f.bias-f.mant))
	}
	m := ax/math.Ldexp(1, e) - 1
	return sign | uint64(e+f.bias)<<f.mant | uint64(m*float64(uint64(1)<<f.mant))
}

// FromBits decodes a value of dt stored as bits.
func FromBits(dt ir.DType, b uint64) float64 {
	switch dt {
	case ir.Bool:
		if b&0xff != 0 {
			return 1
		}
		return 0
	case ir.I32:
		return float64(int32(uint32(b)))
	case ir.I64:
		return float64(int64(b))
	case ir.F32:
		return float64(math.Float32frombits(uint32(b)))
	case ir.BF16:
		return float64(math.Float32frombits(uint32(b) << 16))
	}
	f := formats[dt]
	width := 1 + f.exp + f.mant
	neg := b>>(width-1)&1 == 1
	e := int(b>>f.mant) & (1<<f.exp - 1)
	m := float64(b & (1<<f.mant - 1))
	var v float64
	switch {
	case f.hasInf && e == 1<<f.exp-1:
		if m != 0 {
			return math.NaN()
		}
		v = math.Inf(1)
	case !f.hasInf && e == 1<<f.exp-1 && int(m) == 1<<f.mant-1:
		return math.NaN()
	case e == 0:
		v = m * math.Ldexp(1, 1-f.bias-f.mant)
	default:
		v = (1 + m/float64(uint64(1)<<f.mant)) * math.Ldexp(1, e-f.bias)
	}
	if neg {
		v = -v
	}
	return v
}

// bf16Bits rounds an f32 to bf16 (ties to even) on its bits.
func bf16Bits(f float32) uint64 {
	u := math.Float32bits(f)
	if f != f {
		return 0x7fc0 | uint64(u>>16)&0x8000
	}
	return uint64((u + 0x7fff + (u>>16)&1) >> 16)
}
