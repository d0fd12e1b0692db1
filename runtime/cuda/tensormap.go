package cuda

// Hopper TMA descriptors. cuTensorMapEncodeTiled is a host-side encoder (no
// context needed); the result goes to kernels by value as a TensorMap.

import (
	"fmt"
	"runtime"
	"unsafe"
)

// TensorDataType is a CUtensorMapDataType.
type TensorDataType int

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

// TensorInterleave is a CUtensorMapInterleave.
type TensorInterleave int

const (
	InterleaveNone TensorInterleave = 0
	Interleave16B  TensorInterleave = 1
	Interleave32B  TensorInterleave = 2
)

// TensorSwizzle is a CUtensorMapSwizzle: the shared-memory layout TMA writes,
// chosen to match the bank-conflict-free layout the consumer (e.g. wgmma)
// expects.
type TensorSwizzle int

const (
	SwizzleNone TensorSwizzle = 0
	Swizzle32B  TensorSwizzle = 1
	Swizzle64B  TensorSwizzle = 2
	Swizzle128B TensorSwizzle = 3
)

// TensorL2Promotion is a CUtensorMapL2promotion.
type TensorL2Promotion int

const (
	L2PromotionNone TensorL2Promotion = 0
	L2Promotion64B  TensorL2Promotion = 1
	L2Promotion128B TensorL2Promotion = 2
	L2Promotion256B TensorL2Promotion = 3
)

// TensorOOBFill is a CUtensorMapFloatOOBfill: what out-of-bounds box
// elements read as (zero, or NaN for floats).
type TensorOOBFill int

const (
	OOBFillNone              TensorOOBFill = 0
	OOBFillNaNRequestZeroFMA TensorOOBFill = 1
)

// checkTiled validates the shape arguments before they reach the driver,
// whose only answer to a mistake is CUDA_ERROR_INVALID_VALUE.
func checkTiled(rank int, globalDims, globalStrides []uint64, boxDims, elemStrides []uint32) error {
	switch {
	case rank < 1 || rank > 5:
		return fmt.Errorf("rank %d, want 1..5", rank)
	case len(globalDims) != rank:
		return fmt.Errorf("%d global dims for rank %d", len(globalDims), rank)
	case len(globalStrides) != rank-1:
		return fmt.Errorf("%d global strides for rank %d, want rank-1 (the innermost stride is the element size)", len(globalStrides), rank)
	case len(boxDims) != rank:
		return fmt.Errorf("%d box dims for rank %d", len(boxDims), rank)
	case elemStrides != nil && len(elemStrides) != rank:
		return fmt.Errorf("%d element strides for rank %d", len(elemStrides), rank)
	}
	for i, s := range globalStrides {
		if s%16 != 0 {
			return fmt.Errorf("global stride %d is %d bytes, want a multiple of 16", i, s)
		}
	}
	for i, b := range boxDims {
		if b == 0 || b > 256 {
			return fmt.Errorf("box dim %d is %d, want 1..256", i, b)
		}
	}
	return nil
}

// EncodeTiled builds a tiled TMA descriptor for the tensor at globalAddr.
// Dimensions run innermost first; globalStrides are in bytes and give the
// rank-1 outer strides; elemStrides may be nil for all ones.
func EncodeTiled(dtype TensorDataType, rank int, globalAddr uint64, globalDims, globalStrides []uint64,
	boxDims, elemStrides []uint32, interleave TensorInterleave, swizzle TensorSwizzle,
	l2 TensorL2Promotion, oob TensorOOBFill) (TensorMap, error) {
	var tm TensorMap
	if err := checkTiled(rank, globalDims, globalStrides, boxDims, elemStrides); err != nil {
		return tm, fmt.Errorf("cuda: EncodeTiled: %w", err)
	}
	api, err := driver()
	if err != nil {
		return tm, err
	}
	if api.cuTensorMapEncodeTiled == nil {
		return tm, missing("cuTensorMapEncodeTiled")
	}
	if elemStrides == nil {
		elemStrides = make([]uint32, rank)
		for i := range elemStrides {
			elemStrides[i] = 1
		}
	}
	// A zero-length stride slice still needs a valid pointer.
	strides := append(append([]uint64(nil), globalStrides...), 0)

	// The driver writes the descriptor to 64-byte-aligned memory.
	raw := make([]byte, len(tm)+64)
	off := int(-uintptr(unsafe.Pointer(&raw[0])) & 63)
	out := raw[off : off+len(tm)]
	var pin runtime.Pinner
	pin.Pin(&raw[0])
	defer pin.Unpin()

	r := api.cuTensorMapEncodeTiled(unsafe.Pointer(&out[0]), int32(dtype), uint32(rank), uintptr(globalAddr),
		unsafe.Pointer(&globalDims[0]), unsafe.Pointer(&strides[0]),
		unsafe.Pointer(&boxDims[0]), unsafe.Pointer(&elemStrides[0]),
		int32(interleave), int32(swizzle), int32(l2), int32(oob))
	runtime.KeepAlive(globalDims)
	runtime.KeepAlive(strides)
	runtime.KeepAlive(boxDims)
	runtime.KeepAlive(elemStrides)
	if err := api.check("cuTensorMapEncodeTiled", r); err != nil {
		e := err.(*Error)
		e.Detail = fmt.Sprintf("dtype %d, dims %v, strides %v, box %v, elem strides %v, swizzle %d",
			dtype, globalDims, globalStrides, boxDims, elemStrides, swizzle)
		return tm, e
	}
	copy(tm[:], out)
	return tm, nil
}
