package cuda

import (
	"errors"
	"fmt"
	"github.com/tilego/tilego/compiler/cudagen"

	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// Tensors are device copies of a list of tensors that several launches
// share, so that programs over the same inputs (the configs a tuner
// tries) upload them once.
type Tensors struct {
	b    *Backend
	bufs []drv.Buffer
	args []*tensor.Tensor
}

// Upload copies args to the device.
func Upload(b *Backend, args []*tensor.Tensor) (*Tensors, error) {
	bufs, err := b.upload(args)
	if err != nil {
		return nil, err
	}
	return &Tensors{b: b, bufs: bufs, args: args}, nil
}

// Free releases the device copies; launches bound to them must not run
// after.
func (t *Tensors) Free() {
	t.b.free(t.bufs)
	t.bufs = nil
}

// PrepareOn binds p to t's device tensors (in p's parameter order). Its
// Free leaves them alone.
func PrepareOn(p *cudagen.Program, t *Tensors) (*Launch, error) {
	if t.bufs == nil {
		return nil, fmt.Errorf("cuda: %s bound to freed tensors", p.Name)
	}
	return bind(t.b, p, t.args, t.bufs)
}

// DeviceLost reports whether err is a kernel fault after which every CUDA
// call in the process fails (the context is lost until it is reset): an
// illegal address or instruction, a misaligned or invalid address space
// access, a hardware stack error, an invalid PC, a launch that failed or
// timed out, or a kernel Sync gave up as hung (drv.ErrHung).
func DeviceLost(err error) bool {
	if errors.Is(err, drv.ErrHung) { // the kernel still holds the GPU
		return true
	}
	var e *drv.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case 700, 702, 714, 715, 716, 717, 718, 719:
		return true
	}
	return false
}

// OutOfMemory reports whether err is the device running out of memory (an
// allocation failed): the context is fine, and freeing buffers may let a
// retry succeed.
func OutOfMemory(err error) bool {
	var e *drv.Error
	return errors.As(err, &e) && e.Code == 2 // CUDA_ERROR_OUT_OF_MEMORY
}
