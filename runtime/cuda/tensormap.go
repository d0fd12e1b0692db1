package cuda

// Hopper TMA descriptors. cuTensorMapEncodeTiled is a host-side encoder; the
// result goes to kernels by value as a TensorMap (see params.go), declared
// on the device as `const __grid_constant__ tl::TensorMap`.
//
// The driver's only answer to a bad argument is CUDA_ERROR_INVALID_VALUE, so
// every documented requirement is checked here first and reported in words.

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// TensorDataType is a CUtensorMapDataType: the element type TMA moves. TMA
// copies bits; the type fixes the element size and which out-of-bounds
// fills are allowed.
type TensorDataType int

// The CUtensorMapDataType values (cuda.h, CUDA 12.0 on). The packed 4- and
// 6-bit types of CUDA 12.8 (13..15) are not supported here.
const (
	TensorUint8       TensorDataType = 0
	TensorUint16      TensorDataType = 1
	TensorUint32      TensorDataType = 2
	TensorInt32       TensorDataType = 3
	TensorUint64      TensorDataType = 4
	TensorInt64       TensorDataType = 5
	TensorFloat16     TensorDataType = 6
	TensorFloat32     TensorDataType = 7
	TensorFloat64     TensorDataType = 8
	TensorBFloat16    TensorDataType = 9
	TensorFloat32FTZ  TensorDataType = 10
	TensorTFloat32    TensorDataType = 11
	TensorTFloat32FTZ TensorDataType = 12
)

var tensorTypeInfo = [...]struct {
	name  string
	size  int
	float bool
}{
	TensorUint8:       {"uint8", 1, false},
	TensorUint16:      {"uint16", 2, false},
	TensorUint32:      {"uint32", 4, false},
	TensorInt32:       {"int32", 4, false},
	TensorUint64:      {"uint64", 8, false},
	TensorInt64:       {"int64", 8, false},
	TensorFloat16:     {"float16", 2, true},
	TensorFloat32:     {"float32", 4, true},
	TensorFloat64:     {"float64", 8, true},
	TensorBFloat16:    {"bfloat16", 2, true},
	TensorFloat32FTZ:  {"float32_ftz", 4, true},
	TensorTFloat32:    {"tfloat32", 4, true},
	TensorTFloat32FTZ: {"tfloat32_ftz", 4, true},
}

func (t TensorDataType) valid() bool { return t >= 0 && int(t) < len(tensorTypeInfo) }

// Size is the element size in bytes, 0 for an unknown type.
func (t TensorDataType) Size() int {
	if !t.valid() {
		return 0
	}
	return tensorTypeInfo[t].size
}

func (t TensorDataType) String() string {
	if !t.valid() {
		return fmt.Sprintf("TensorDataType(%d)", int(t))
	}
	return tensorTypeInfo[t].name
}

// TensorSwizzle is a CUtensorMapSwizzle: how TMA permutes the 16-byte chunks
// of each box row in shared memory, so that the consumer (ldmatrix, wgmma)
// reads without bank conflicts. Swizzle128B on a 128-byte-wide box is the
// layout tl::swz<128, ROWS, EB, 8, 1> computes; 64B is swz<64, ROWS, EB, 4, 2>
// and 32B swz<32, ROWS, EB, 2, 4> (with the buffer 1024-byte aligned).
type TensorSwizzle int

const (
	SwizzleNone TensorSwizzle = 0
	Swizzle32B  TensorSwizzle = 1
	Swizzle64B  TensorSwizzle = 2
	Swizzle128B TensorSwizzle = 3
)

// Span is the swizzle's width in bytes (0 for none): the most a box row may
// hold.
func (s TensorSwizzle) Span() int {
	switch s {
	case Swizzle32B:
		return 32
	case Swizzle64B:
		return 64
	case Swizzle128B:
		return 128
	}
	return 0
}

func (s TensorSwizzle) String() string {
	switch s {
	case SwizzleNone:
		return "none"
	case Swizzle32B, Swizzle64B, Swizzle128B:
		return fmt.Sprintf("%dB", s.Span())
	}
	return fmt.Sprintf("TensorSwizzle(%d)", int(s))
}

// TensorL2Promotion is a CUtensorMapL2promotion: the granularity at which L2
// fetches the lines a box touches.
type TensorL2Promotion int

const (
	L2PromotionNone TensorL2Promotion = 0
	L2Promotion64B  TensorL2Promotion = 1
	L2Promotion128B TensorL2Promotion = 2
	L2Promotion256B TensorL2Promotion = 3
)

// TensorOOBFill is a CUtensorMapFloatOOBfill: what box elements outside the
// tensor read as. OOBFillNone fills zeros, which is what masked tiles want.
type TensorOOBFill int

const (
	OOBFillNone              TensorOOBFill = 0
	OOBFillNaNRequestZeroFMA TensorOOBFill = 1 // floating-point types only
)

// TiledSpec describes a tiled TMA descriptor: a tensor in global memory and
// the box one TMA instruction moves. Every dimension list runs innermost
// (contiguous) dimension first, as CUDA has them; the rank is len(Dims).
// Interleave is always CU_TENSOR_MAP_INTERLEAVE_NONE.
type TiledSpec struct {
	DType  TensorDataType
	Global Buffer // the allocation holding the tensor; its Size bounds the tensor
	Offset int    // bytes from Global.Ptr to the element at index 0; the sum must be 16-byte aligned
	// Dims are the tensor's extents in elements, 1..5 of them.
	Dims []uint64
	// Strides are the byte strides of dims 1..rank-1 (dim 0 is contiguous,
	// so rank-1 values), each a multiple of 16.
	Strides []uint64
	// Box is the extent of one copy in elements; Box[0] times the element
	// size must be a multiple of 16 bytes, and at most the swizzle span.
	Box []uint32
	// ElemStrides are the traversal steps per dim (1..8); nil means all 1.
	ElemStrides []uint32
	Swizzle     TensorSwizzle
	L2          TensorL2Promotion
	OOB         TensorOOBFill
}

const (
	maxTensorRank   = 5
	maxTensorDim    = 1 << 32
	maxTensorStride = 1 << 40
	maxBoxDim       = 256
	maxElemStride   = 8
)

// Rank is the number of dimensions.
func (s TiledSpec) Rank() int { return len(s.Dims) }

// elemStrides returns ElemStrides, or all ones when it is nil.
func (s TiledSpec) elemStrides() []uint32 {
	if s.ElemStrides != nil {
		return s.ElemStrides
	}
	es := make([]uint32, len(s.Dims))
	for i := range es {
		es[i] = 1
	}
	return es
}

// BoxBytes is the number of bytes one load of a box writes to shared
// memory, which is also the transaction count it completes on its mbarrier
// (the argument of tl::mbar_arrive_expect_tx). Boxes partly or wholly
// outside the tensor still deliver all of them, filled. It is 0 when the
// spec is invalid.
func (s TiledSpec) BoxBytes() int {
	if s.Validate() != nil {
		return 0
	}
	es := s.elemStrides()
	n := s.DType.Size() * int(s.Box[0]) // dim 0 ignores its element stride
	for i := 1; i < len(s.Box); i++ {
		n *= int((s.Box[i] + es[i] - 1) / es[i])
	}
	return n
}

// Validate checks s against the requirements cuTensorMapEncodeTiled
// documents, plus that the tensor lies inside Global. It needs no GPU.
func (s TiledSpec) Validate() error {
	rank := len(s.Dims)
	if rank < 1 || rank > maxTensorRank {
		return fmt.Errorf("rank %d (len(Dims)), want 1..%d", rank, maxTensorRank)
	}
	if !s.DType.valid() {
		return fmt.Errorf("unknown data type %d", int(s.DType))
	}
	esize := uint64(s.DType.Size())
	switch {
	case len(s.Strides) != rank-1:
		return fmt.Errorf("%d strides for rank %d, want %d (the byte strides of dims 1..rank-1; dim 0 is contiguous)",
			len(s.Strides), rank, rank-1)
	case len(s.Box) != rank:
		return fmt.Errorf("%d box dims for rank %d", len(s.Box), rank)
	case s.ElemStrides != nil && len(s.ElemStrides) != rank:
		return fmt.Errorf("%d element strides for rank %d", len(s.ElemStrides), rank)
	}
	if s.Global.Ptr == 0 {
		return fmt.Errorf("global buffer is nil")
	}
	if s.Offset < 0 || s.Offset >= s.Global.Size {
		return fmt.Errorf("offset %d outside the %d-byte global buffer", s.Offset, s.Global.Size)
	}
	if addr := s.Global.Ptr + uint64(s.Offset); addr%16 != 0 {
		return fmt.Errorf("global address %#x (buffer %#x + offset %d) is not 16-byte aligned", addr, s.Global.Ptr, s.Offset)
	}
	for i, d := range s.Dims {
		if d == 0 || d > maxTensorDim {
			return fmt.Errorf("dim %d is %d, want 1..2^32", i, d)
		}
	}
	for i, st := range s.Strides {
		if st%16 != 0 {
			return fmt.Errorf("stride of dim %d is %d bytes, want a multiple of 16", i+1, st)
		}
		if st >= maxTensorStride {
			return fmt.Errorf("stride of dim %d is %d bytes, want less than 2^40", i+1, st)
		}
	}
	for i, b := range s.Box {
		if b == 0 || b > maxBoxDim {
			return fmt.Errorf("box dim %d is %d, want 1..%d", i, b, maxBoxDim)
		}
	}
	inner := uint64(s.Box[0]) * esize
	if inner%16 != 0 {
		return fmt.Errorf("box inner dim is %d %s elements = %d bytes, want a multiple of 16", s.Box[0], s.DType, inner)
	}
	for i, e := range s.ElemStrides {
		if e == 0 || e > maxElemStride {
			return fmt.Errorf("element stride %d is %d, want 1..%d", i, e, maxElemStride)
		}
	}
	switch s.Swizzle {
	case SwizzleNone:
	case Swizzle32B, Swizzle64B, Swizzle128B:
		if span := uint64(s.Swizzle.Span()); inner > span {
			return fmt.Errorf("box inner dim is %d bytes (%d %s), more than the %s swizzle span",
				inner, s.Box[0], s.DType, s.Swizzle)
		}
	default:
		return fmt.Errorf("unknown swizzle %d", int(s.Swizzle))
	}
	if s.L2 < L2PromotionNone || s.L2 > L2Promotion256B {
		return fmt.Errorf("unknown L2 promotion %d", int(s.L2))
	}
	switch s.OOB {
	case OOBFillNone:
	case OOBFillNaNRequestZeroFMA:
		if !tensorTypeInfo[s.DType].float {
			return fmt.Errorf("NaN out-of-bounds fill needs a floating-point type, not %s", s.DType)
		}
	default:
		return fmt.Errorf("unknown out-of-bounds fill %d", int(s.OOB))
	}
	// The last byte the tensor reaches must lie in the buffer: TMA reads
	// whatever the descriptor says, with no bounds but the tensor's own.
	// Products are checked against 2^63 so no overflow goes unnoticed.
	end := s.Dims[0] * esize
	for i := 1; i < rank; i++ {
		reach, ok := mulNoOverflow(s.Dims[i]-1, s.Strides[i-1])
		if !ok || end+reach < end {
			return fmt.Errorf("tensor extent overflows 64 bits")
		}
		end += reach
	}
	if room := uint64(s.Global.Size - s.Offset); end > room {
		return fmt.Errorf("tensor reaches %d bytes past offset %d, beyond the %d-byte global buffer",
			end, s.Offset, s.Global.Size)
	}
	return nil
}

func mulNoOverflow(a, b uint64) (uint64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && p < 1<<63
}

func (s TiledSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s dims %v strides %v box %v", s.DType, s.Dims, s.Strides, s.Box)
	if s.ElemStrides != nil {
		fmt.Fprintf(&b, " elem strides %v", s.ElemStrides)
	}
	fmt.Fprintf(&b, " swizzle %s at %#x+%d", s.Swizzle, s.Global.Ptr, s.Offset)
	if s.L2 != L2PromotionNone {
		fmt.Fprintf(&b, " L2 promotion %d", s.L2)
	}
	if s.OOB != OOBFillNone {
		b.WriteString(" NaN OOB fill")
	}
	return b.String()
}

// EncodeTiled builds the tiled TMA descriptor s describes, on d's context.
// Arguments are validated first (see Validate); a rejection by the driver
// comes back as an *Error for cuTensorMapEncodeTiled that names the spec.
// Pass the result to Launch as a TensorMap or *TensorMap argument.
func (d *Device) EncodeTiled(s TiledSpec) (TensorMap, error) {
	var tm TensorMap
	if err := s.Validate(); err != nil {
		return tm, fmt.Errorf("cuda: EncodeTiled: %w", err)
	}
	if d == nil {
		return tm, fmt.Errorf("cuda: EncodeTiled: nil device")
	}
	return d.encodeTiled(s.DType, s.Global.Ptr+uint64(s.Offset), s.Dims, s.Strides, s.Box, s.elemStrides(),
		s.Swizzle, s.L2, s.OOB, s.String())
}

// encodeTiled calls the driver without validating, so tests can check that
// it rejects what Validate does.
func (d *Device) encodeTiled(dtype TensorDataType, addr uint64, dims, strides []uint64, box, elemStrides []uint32,
	swizzle TensorSwizzle, l2 TensorL2Promotion, oob TensorOOBFill, what string) (TensorMap, error) {
	var tm TensorMap
	if d.api.cuTensorMapEncodeTiled == nil {
		return tm, missing("cuTensorMapEncodeTiled")
	}
	rank := len(dims)
	// Our own copies: C reads rank-1 strides and rank of the rest, and a
	// rank-1 tensor still needs a valid strides pointer.
	cdims := append([]uint64(nil), dims...)
	cstrides := append(append([]uint64(nil), strides...), 0)
	cbox := append([]uint32(nil), box...)
	ces := append([]uint32(nil), elemStrides...)
	if len(cdims) == 0 || len(cbox) == 0 || len(ces) == 0 {
		return tm, fmt.Errorf("cuda: EncodeTiled: empty dims")
	}
	// The driver writes the descriptor to 64-byte-aligned memory.
	raw := make([]byte, len(tm)+64)
	off := int(-uintptr(unsafe.Pointer(&raw[0])) & 63)
	out := raw[off : off+len(tm)]
	var pin runtime.Pinner
	for _, p := range []unsafe.Pointer{unsafe.Pointer(&raw[0]), unsafe.Pointer(&cdims[0]),
		unsafe.Pointer(&cstrides[0]), unsafe.Pointer(&cbox[0]), unsafe.Pointer(&ces[0])} {
		pin.Pin(p)
	}
	defer pin.Unpin()
	err := d.do(func() error {
		r := d.api.cuTensorMapEncodeTiled(unsafe.Pointer(&out[0]), int32(dtype), uint32(rank), uintptr(addr),
			unsafe.Pointer(&cdims[0]), unsafe.Pointer(&cstrides[0]),
			unsafe.Pointer(&cbox[0]), unsafe.Pointer(&ces[0]),
			0 /* CU_TENSOR_MAP_INTERLEAVE_NONE */, int32(swizzle), int32(l2), int32(oob))
		return d.api.check("cuTensorMapEncodeTiled", r)
	})
	runtime.KeepAlive(raw)
	runtime.KeepAlive(cdims)
	runtime.KeepAlive(cstrides)
	runtime.KeepAlive(cbox)
	runtime.KeepAlive(ces)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Call == "cuTensorMapEncodeTiled" {
			if e.Detail != "" {
				what = e.Detail + "; " + what
			}
			e.Detail = what
		}
		return tm, err
	}
	copy(tm[:], out)
	return tm, nil
}
