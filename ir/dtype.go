package ir

import "fmt"

// DType is the element type of a buffer or the type of a scalar expression.
// The 8- and 16-bit floats are storage types: expressions that read them
// compute in F32, and stores round back to the buffer's type.
type DType uint8

const (
	Invalid DType = iota
	Bool
	I32
	I64
	F16
	BF16
	F32
	F8E4M3
	F8E5M2
)

var dtypeInfo = [...]struct {
	name string
	bits int
}{
	Invalid: {"invalid", 0},
	Bool:    {"bool", 8},
	I32:     {"i32", 32},
	I64:     {"i64", 64},
	F16:     {"f16", 16},
	BF16:    {"bf16", 16},
	F32:     {"f32", 32},
	F8E4M3:  {"f8e4m3", 8},
	F8E5M2:  {"f8e5m2", 8},
}

func (d DType) String() string {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Bits is the storage width in bits (0 for an invalid DType).
func (d DType) Bits() int {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].bits
	}
	return 0
}

// Valid reports whether d is one of the DTypes above other than Invalid.
func (d DType) Valid() bool { return d != Invalid && int(d) < len(dtypeInfo) }

// Bytes is the storage width in bytes.
func (d DType) Bytes() int { return (d.Bits() + 7) / 8 }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool {
	switch d {
	case F16, BF16, F32, F8E4M3, F8E5M2:
		return true
	}
	return false
}

// IsInt reports whether d is an integer type.
func (d DType) IsInt() bool { return d == I32 || d == I64 }

// Compute is the type an expression that reads d computes in.
func (d DType) Compute() DType {
	if d.IsFloat() {
		return F32
	}
	return d
}

// ParseDType maps a name such as "bf16" to its DType.
func ParseDType(s string) (DType, error) {
	for d := range dtypeInfo {
		if d != int(Invalid) && dtypeInfo[d].name == s {
			return DType(d), nil
		}
	}
	return Invalid, fmt.Errorf("unknown dtype %q (want f32, f16, bf16, f8e4m3, f8e5m2, i32, i64)", s)
}

// WrapInt is v as an integer of type t holds it: two's complement, the low
// 32 bits for I32 (the GPU's integer arithmetic wraps; see
// docs/language.md). Other types keep v.
func WrapInt(t DType, v int64) int64 {
	if t == I32 {
		return int64(int32(v))
	}
	return v
}
