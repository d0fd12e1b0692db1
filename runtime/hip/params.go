package hip

// Kernel argument packing. hipModuleLaunchKernel takes either void**
// kernelParams (one pointer per argument, each to a copy of its bytes) or
// an "extra" array pointing at one buffer already laid out as the kernel's
// argument segment. We use kernelParams: the runtime then copies each
// argument to the offset and with the size the code object's metadata gives
// (ROCm/clr hipamd/src/hip_module.cpp), so no layout of ours can shift an
// argument, and the packing is runtime/cuda's. The arguments sit in one
// block pinned for the call, so the pointer array handed to C holds only
// pinned Go pointers, as the cgo pointer rules require; the runtime has
// copied them when the launch call returns.

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Raw is an argument passed by value as opaque bytes, for by-value structs
// and vectors the other types do not cover. Align is its C alignment (1 if
// zero).
type Raw struct {
	Data  []byte
	Align int
}

// paramBlockAlign is the alignment of the block and the largest Raw.Align:
// that of the widest by-value vector types (float4, double2).
const paramBlockAlign = 16

// paramBlock is packed kernel arguments, pinned until release.
type paramBlock struct {
	buf  []byte
	ptrs []unsafe.Pointer
	offs []int // offsets into buf, for tests
	pin  runtime.Pinner
}

// argBytes returns the host bytes and C alignment of one argument.
func argBytes(i int, a any) ([]byte, int, error) {
	switch v := a.(type) {
	case uint64:
		return scalar(v), 8, nil
	case int64:
		return scalar(v), 8, nil
	case uintptr:
		return scalar(uint64(v)), 8, nil
	case float64:
		return scalar(v), 8, nil
	case Buffer:
		return scalar(v.Ptr), 8, nil
	case *Buffer:
		return scalar(v.Ptr), 8, nil
	case int32:
		return scalar(v), 4, nil
	case uint32:
		return scalar(v), 4, nil
	case float32:
		return scalar(v), 4, nil
	case int16:
		return scalar(v), 2, nil
	case uint16:
		return scalar(v), 2, nil
	case int8:
		return []byte{byte(v)}, 1, nil
	case uint8:
		return []byte{v}, 1, nil
	case bool:
		if v {
			return []byte{1}, 1, nil
		}
		return []byte{0}, 1, nil
	case Raw:
		al := v.Align
		if al <= 0 {
			al = 1
		}
		if al&(al-1) != 0 || al > paramBlockAlign {
			return nil, 0, fmt.Errorf("hip: kernel argument %d: Raw alignment %d is not a power of two <= %d", i, al, paramBlockAlign)
		}
		return v.Data, al, nil
	case int, uint:
		return nil, 0, fmt.Errorf("hip: kernel argument %d: %T is ambiguous, pass int32 or int64", i, a)
	default:
		return nil, 0, fmt.Errorf("hip: kernel argument %d: unsupported type %T", i, a)
	}
}

// scalar returns the native-endian bytes of a fixed-size value.
func scalar[T uint64 | int64 | float64 | int32 | uint32 | float32 | int16 | uint16](v T) []byte {
	b := make([]byte, unsafe.Sizeof(v))
	*(*T)(unsafe.Pointer(&b[0])) = v
	return b
}

// packParams lays the arguments out, each at its alignment, and pins the
// block. The caller must call release once the launch call returned.
func packParams(args []any) (*paramBlock, error) {
	p := &paramBlock{}
	if len(args) == 0 {
		return p, nil
	}
	datas := make([][]byte, len(args))
	p.offs = make([]int, len(args))
	size := 0
	for i, a := range args {
		b, al, err := argBytes(i, a)
		if err != nil {
			return nil, err
		}
		size = (size + al - 1) &^ (al - 1)
		datas[i], p.offs[i] = b, size
		size += max(len(b), 1)
	}
	raw := make([]byte, size+paramBlockAlign)
	base := int(-uintptr(unsafe.Pointer(&raw[0])) & (paramBlockAlign - 1))
	p.buf = raw[base : base+size]
	p.ptrs = make([]unsafe.Pointer, len(args))
	for i, b := range datas {
		copy(p.buf[p.offs[i]:], b)
		p.ptrs[i] = unsafe.Pointer(&p.buf[p.offs[i]])
	}
	p.pin.Pin(&raw[0])
	p.pin.Pin(&p.ptrs[0])
	return p, nil
}

// kernelParams is the void** for hipModuleLaunchKernel, or nil for no
// arguments.
func (p *paramBlock) kernelParams() unsafe.Pointer {
	if len(p.ptrs) == 0 {
		return nil
	}
	return unsafe.Pointer(&p.ptrs[0])
}

func (p *paramBlock) release() {
	p.pin.Unpin()
	runtime.KeepAlive(p.buf)
	runtime.KeepAlive(p.ptrs)
}
