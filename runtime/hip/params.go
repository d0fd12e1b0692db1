package hip

// Kernel argument packing for hipModuleLaunchKernel (package kernelargs):
// device pointers here, the rest shared with CUDA. The runtime copies each
// argument to the offset and size the code object's metadata gives, so the
// block's layout only has to match C's.
import (
	"fmt"

	"github.com/tilego/tilego/internal/kernelargs"
)

// Raw is an argument passed by value as opaque bytes, for by-value structs
// the other types do not cover. Align is its C alignment (1 if zero, at
// most 16).
type Raw = kernelargs.Raw

// paramAlign is the largest alignment an argument may have.
const paramAlign = 16

// paramBlock is packed kernel arguments, pinned until Release.
type paramBlock = kernelargs.Block

// argBytes returns the host bytes and C alignment of one argument.
func argBytes(i int, a any) ([]byte, int, error) {
	switch v := a.(type) {
	case Buffer:
		return kernelargs.Scalar(v.Ptr), 8, nil
	case *Buffer:
		return kernelargs.Scalar(v.Ptr), 8, nil
	}
	b, al, ok, err := kernelargs.Plain("hip", paramAlign, i, a)
	if !ok {
		return nil, 0, fmt.Errorf("hip: kernel argument %d: unsupported type %T", i, a)
	}
	return b, al, err
}

// packParams lays the arguments out, each at its alignment, and pins the
// block. The caller must call Release once the launch call returned.
func packParams(args []any) (*paramBlock, error) { return kernelargs.Pack(args, argBytes) }
