package hip

// Device memory. Buffers are plain values (pointer + size) so they can be
// stored in kernel argument lists and shared with other HIP code; freeing is
// explicit because device memory is scarce and GC finalizers run too late.

import (
	"fmt"
	"unsafe"
)

// hipMemcpyKind values used, from enum hipMemcpyKind in ROCm's
// include/hip/driver_types.h (hipMemcpyHostToHost is 0, hipMemcpyDefault 4).
const (
	memcpyHostToDevice   = 1
	memcpyDeviceToHost   = 2
	memcpyDeviceToDevice = 3
)

// Buffer is a region of device memory.
type Buffer struct {
	Ptr  uint64 // device address (hipDeviceptr_t)
	Size int    // bytes
}

// Slice returns the n bytes of b starting at off.
func (b Buffer) Slice(off, n int) (Buffer, error) {
	if off < 0 || n < 0 || off+n > b.Size {
		return Buffer{}, fmt.Errorf("hip: slice [%d:%d] of a %d-byte buffer", off, off+n, b.Size)
	}
	return Buffer{Ptr: b.Ptr + uint64(off), Size: n}, nil
}

// Alloc allocates n bytes of device memory (uninitialised).
func (d *Device) Alloc(n int) (Buffer, error) {
	var p uint64
	err := d.do(func() error {
		if n <= 0 {
			return fmt.Errorf("hip: Alloc(%d): size must be positive", n)
		}
		return d.api.check("hipMalloc", d.api.hipMalloc(&p, uintptr(n)))
	})
	if err != nil {
		return Buffer{}, err
	}
	return Buffer{Ptr: p, Size: n}, nil
}

// Free releases b. Freeing the zero Buffer does nothing.
func (d *Device) Free(b Buffer) error {
	return d.do(func() error {
		if b.Ptr == 0 {
			return nil
		}
		return d.api.check("hipFree", d.api.hipFree(b.Ptr))
	})
}

// CopyHtoD copies src to the start of dst and waits for the copy.
func (d *Device) CopyHtoD(dst Buffer, src []byte) error {
	return d.do(func() error {
		if len(src) > dst.Size {
			return fmt.Errorf("hip: CopyHtoD: %d bytes into a %d-byte buffer", len(src), dst.Size)
		}
		if len(src) == 0 {
			return nil
		}
		return d.api.check("hipMemcpy",
			d.api.hipMemcpyHtoD(dst.Ptr, unsafe.Pointer(&src[0]), uintptr(len(src)), memcpyHostToDevice))
	})
}

// CopyDtoH fills dst from the start of src and waits for the copy.
func (d *Device) CopyDtoH(dst []byte, src Buffer) error {
	return d.do(func() error {
		if len(dst) > src.Size {
			return fmt.Errorf("hip: CopyDtoH: %d bytes out of a %d-byte buffer", len(dst), src.Size)
		}
		if len(dst) == 0 {
			return nil
		}
		return d.api.check("hipMemcpy",
			d.api.hipMemcpyDtoH(unsafe.Pointer(&dst[0]), src.Ptr, uintptr(len(dst)), memcpyDeviceToHost))
	})
}

// CopyDtoD copies all of src to the start of dst.
func (d *Device) CopyDtoD(dst, src Buffer) error {
	return d.do(func() error {
		if src.Size > dst.Size {
			return fmt.Errorf("hip: CopyDtoD: %d bytes into a %d-byte buffer", src.Size, dst.Size)
		}
		if src.Size == 0 {
			return nil
		}
		return d.api.check("hipMemcpy",
			d.api.hipMemcpyDtoD(dst.Ptr, src.Ptr, uintptr(src.Size), memcpyDeviceToDevice))
	})
}

// MemsetD8 sets every byte of dst to v. Tests poison outputs with 0xFF (a
// NaN pattern for floats) so that an element a kernel forgot to write is
// caught rather than passing as a leftover correct value.
func (d *Device) MemsetD8(dst Buffer, v byte) error {
	return d.do(func() error {
		if dst.Size == 0 {
			return nil
		}
		return d.api.check("hipMemset", d.api.hipMemset(dst.Ptr, int32(v), uintptr(dst.Size)))
	})
}

// Elem is the element types the typed copy helpers accept: fixed-size
// values without pointers, whose bytes are their device representation.
type Elem interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 |
		~float32 | ~float64
}

// Bytes views s as its raw bytes (no copy).
func Bytes[T Elem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// CopyToDevice copies the elements of src to the start of dst.
func CopyToDevice[T Elem](d *Device, dst Buffer, src []T) error {
	return d.CopyHtoD(dst, Bytes(src))
}

// CopyFromDevice fills dst from the start of src.
func CopyFromDevice[T Elem](d *Device, dst []T, src Buffer) error {
	return d.CopyDtoH(Bytes(dst), src)
}

// Upload allocates a buffer holding a copy of src.
func Upload[T Elem](d *Device, src []T) (Buffer, error) {
	b, err := d.Alloc(len(Bytes(src)))
	if err != nil {
		return Buffer{}, err
	}
	if err := CopyToDevice(d, b, src); err != nil {
		d.Free(b)
		return Buffer{}, err
	}
	return b, nil
}
