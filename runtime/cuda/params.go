package cuda

// Kernel argument packing for cuLaunchKernel (package kernelargs): the
// driver's pointer and TMA descriptor types here, the rest shared with HIP.
import (
	"fmt"

	"github.com/tilego/tilego/internal/kernelargs"
)

// TensorMap is an encoded CUtensorMap (a TMA descriptor). It is passed to
// kernels by value, as a const __grid_constant__ CUtensorMap parameter. Go
// cannot align a type to 64 bytes, so the package copies it into aligned
// storage wherever the driver reads it.
type TensorMap [128]byte

// Raw is an argument passed by value as opaque bytes, for by-value structs
// the other types do not cover. Align is its C alignment (1 if zero, at
// most 64).
type Raw = kernelargs.Raw

// paramAlign is the largest alignment an argument may have.
const paramAlign = 64

// paramBlock is packed kernel arguments, pinned until Release.
type paramBlock = kernelargs.Block

// argBytes returns the host bytes and C alignment of one argument.
func argBytes(i int, a any) ([]byte, int, error) {
	switch v := a.(type) {
	case Buffer:
		return kernelargs.Scalar(v.Ptr), 8, nil
	case *Buffer:
		return kernelargs.Scalar(v.Ptr), 8, nil
	case TensorMap:
		return v[:], 64, nil
	case *TensorMap:
		return v[:], 64, nil
	}
	b, al, ok, err := kernelargs.Plain("cuda", paramAlign, i, a)
	if !ok {
		return nil, 0, fmt.Errorf("cuda: kernel argument %d: unsupported type %T", i, a)
	}
	return b, al, err
}

// packParams lays the arguments out, each at its alignment, and pins the
// block. The caller must call Release once the launch call returned.
func packParams(args []any) (*paramBlock, error) { return kernelargs.Pack(args, argBytes) }
