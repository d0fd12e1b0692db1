package cuda

// Launches over device memory the caller owns: what a Go program that
// keeps its tensors on the GPU (an inference server's KV cache) needs, with
// no host copy. Prepare and PrepareChain upload host tensors instead.

import (
	"fmt"
	"github.com/tilego/tilego/compiler/cudagen"

	"github.com/tilego/tilego/ir"
	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// DeviceTensor is a program argument in device memory: a buffer its
// caller allocated (Backend.Driver().Alloc, or any CUdeviceptr wrapped in
// a drv.Buffer) and keeps, holding a tensor of this type and shape. The
// shapes bind the program's symbolic sizes as Prepare's host tensors do.
type DeviceTensor struct {
	Buf   drv.Buffer
	DType ir.DType
	Shape []int
	// Strides, in elements, where the program reads a layout other than
	// row-major (FlashAttention's BSHD: the shape stays [B, H, S, D]);
	// nil is row-major.
	Strides []int
}

// Driver is the backend's device as the driver API sees it: for the
// memory Bind and BindChain launch over (Alloc, CopyHtoD, CopyDtoH) and
// the streams Start enqueues on (NewStream).
func (b *Backend) Driver() *drv.Device { return b.dev }

// Bind makes a launch of p over args, device memory the caller owns: Once
// launches p and waits, Start enqueues it on a stream; Free leaves the
// memory alone and releases what the launch allocated itself (a drawn
// walk's counter, Program.Counter).
func Bind(b *Backend, p *cudagen.Program, args []DeviceTensor) (*Launch, error) {
	hdrs, bufs, err := deviceHeaders(p.Func, args)
	if err != nil {
		return nil, err
	}
	return bind(b, p, hdrs, bufs)
}

// BindChain is PrepareChain over device memory the caller owns: program i
// takes args[idx[i][0]], args[idx[i][1]], ... in its parameter order.
func BindChain(b *Backend, progs []*cudagen.Program, idx [][]int, args []DeviceTensor) (*Chain, error) {
	hdrs, bufs, err := deviceHeaders(nil, args)
	if err != nil {
		return nil, err
	}
	return chain(b, progs, idx, hdrs, bufs, false)
}

// deviceHeaders checks that each buffer holds its tensor (and, with f, that
// there is one per parameter) and returns shape-only host tensors, which
// bind reads for the sizes, beside the buffers.
func deviceHeaders(f *ir.Func, args []DeviceTensor) ([]*tensor.Tensor, []drv.Buffer, error) {
	if f != nil && len(args) != len(f.Params) {
		return nil, nil, fmt.Errorf("%s: %d device tensors for %d parameters", f.Name, len(args), len(f.Params))
	}
	hdrs, bufs := make([]*tensor.Tensor, len(args)), make([]drv.Buffer, len(args))
	for i, a := range args {
		strides := a.Strides
		if strides == nil {
			strides = tensor.RowMajor(a.Shape)
		}
		if len(strides) != len(a.Shape) {
			return nil, nil, fmt.Errorf("cuda: device tensor %d has shape %v but strides %v", i, a.Shape, strides)
		}
		last, empty := 0, false // the offset of the last element
		for d, n := range a.Shape {
			if n < 0 || strides[d] < 0 {
				return nil, nil, fmt.Errorf("cuda: device tensor %d has shape %v, strides %v", i, a.Shape, strides)
			}
			empty = empty || n == 0
			last += (n - 1) * strides[d]
		}
		need := 0
		if !empty {
			need = (last + 1) * a.DType.Bytes()
		}
		if a.Buf.Ptr == 0 || a.Buf.Size < need {
			return nil, nil, fmt.Errorf("cuda: device tensor %d (%s %v) needs %d bytes; its buffer has %d at %#x", i, a.DType, a.Shape, need, a.Buf.Size, a.Buf.Ptr)
		}
		// The generated code moves 16 bytes at a time wherever a tile's
		// columns allow, and TMA needs 16-byte aligned tensors: a view that
		// starts elsewhere would fault (and lose the context) mid-run.
		if a.Buf.Ptr%16 != 0 {
			return nil, nil, fmt.Errorf("cuda: device tensor %d (%s %v) starts at %#x, not on 16 bytes; the kernels load and store 16 bytes at a time: pass a 16-byte aligned buffer (allocations are)", i, a.DType, a.Shape, a.Buf.Ptr)
		}
		hdrs[i] = &tensor.Tensor{DType: a.DType, Shape: a.Shape, Strides: strides}
		bufs[i] = a.Buf
	}
	return hdrs, bufs, nil
}
