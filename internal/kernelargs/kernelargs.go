// Package kernelargs packs kernel arguments for the launch calls of CUDA
// (cuLaunchKernel) and HIP (hipModuleLaunchKernel), which both take void**
// kernelParams: one pointer per argument, each to a copy of its bytes. The
// arguments are copied into one 64-byte-aligned block (TMA descriptors
// must sit on a 64-byte boundary) that is pinned, so the pointer array
// handed to C holds only pinned Go pointers, as the cgo pointer rules
// require.
package kernelargs

import (
	"fmt"
	"runtime"
	"unsafe"
)

// BlockAlign is the alignment of the block, and the largest an argument
// may ask for.
const BlockAlign = 64

// Raw is an argument passed by value as opaque bytes, for by-value structs
// the other types do not cover. Align is its C alignment (1 if zero).
type Raw struct {
	Data  []byte
	Align int
}

// Block is packed kernel arguments, pinned until Release.
type Block struct {
	buf  []byte
	ptrs []unsafe.Pointer
	offs []int
	pin  runtime.Pinner
}

// Scalar returns the native-endian bytes of a fixed-size value.
func Scalar[T uint64 | int64 | float64 | int32 | uint32 | float32 | int16 | uint16](v T) []byte {
	b := make([]byte, unsafe.Sizeof(v))
	*(*T)(unsafe.Pointer(&b[0])) = v
	return b
}

// Plain returns the bytes and C alignment of argument i when it is one of
// the types every runtime passes alike (the fixed-size numbers, bool and
// Raw, aligned to at most maxAlign); ok is false for any other type. pkg
// names the runtime in errors.
func Plain(pkg string, maxAlign, i int, a any) (b []byte, align int, ok bool, err error) {
	switch v := a.(type) {
	case uint64:
		return Scalar(v), 8, true, nil
	case int64:
		return Scalar(v), 8, true, nil
	case uintptr:
		return Scalar(uint64(v)), 8, true, nil
	case float64:
		return Scalar(v), 8, true, nil
	case int32:
		return Scalar(v), 4, true, nil
	case uint32:
		return Scalar(v), 4, true, nil
	case float32:
		return Scalar(v), 4, true, nil
	case int16:
		return Scalar(v), 2, true, nil
	case uint16:
		return Scalar(v), 2, true, nil
	case int8:
		return []byte{byte(v)}, 1, true, nil
	case uint8:
		return []byte{v}, 1, true, nil
	case bool:
		if v {
			return []byte{1}, 1, true, nil
		}
		return []byte{0}, 1, true, nil
	case Raw:
		al := v.Align
		if al <= 0 {
			al = 1
		}
		if al&(al-1) != 0 || al > min(maxAlign, BlockAlign) {
			return nil, 0, true, fmt.Errorf("%s: kernel argument %d: Raw alignment %d is not a power of two <= %d", pkg, i, al, min(maxAlign, BlockAlign))
		}
		return v.Data, al, true, nil
	case int, uint:
		return nil, 0, true, fmt.Errorf("%s: kernel argument %d: %T is ambiguous, pass int32 or int64", pkg, i, a)
	}
	return nil, 0, false, nil
}

// Pack lays the arguments out, each at its alignment (arg gives each
// one's bytes and alignment), and pins the block. The caller must call
// Release once the launch call returned.
func Pack(args []any, arg func(i int, a any) ([]byte, int, error)) (*Block, error) {
	p := &Block{}
	if len(args) == 0 {
		return p, nil
	}
	datas := make([][]byte, len(args))
	p.offs = make([]int, len(args))
	size := 0
	for i, a := range args {
		b, al, err := arg(i, a)
		if err != nil {
			return nil, err
		}
		size = (size + al - 1) &^ (al - 1)
		datas[i], p.offs[i] = b, size
		size += max(len(b), 1)
	}
	raw := make([]byte, size+BlockAlign)
	base := int(-uintptr(unsafe.Pointer(&raw[0])) & (BlockAlign - 1))
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

// Params is the void** for the launch call, or nil for no arguments.
func (p *Block) Params() unsafe.Pointer {
	if len(p.ptrs) == 0 {
		return nil
	}
	return unsafe.Pointer(&p.ptrs[0])
}

// Offset is argument i's offset in the block.
func (p *Block) Offset(i int) int { return p.offs[i] }

// Start is the block's first byte (for checking its alignment).
func (p *Block) Start() unsafe.Pointer { return unsafe.Pointer(&p.buf[0]) }

// Len is the number of arguments.
func (p *Block) Len() int { return len(p.ptrs) }

// Release unpins the block.
func (p *Block) Release() {
	p.pin.Unpin()
	runtime.KeepAlive(p.buf)
	runtime.KeepAlive(p.ptrs)
}
