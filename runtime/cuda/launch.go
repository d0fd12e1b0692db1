package cuda

// Kernel launches. Errors from a launch name the kernel, because in a
// compiler that generates many kernels "invalid argument" alone says nothing.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/tilego/tilego/internal/hang"
)

// Launch queues fn on stream (nil: the default stream) with the given grid
// and block sizes, dynamic shared memory and arguments. Arguments are Go
// values: Buffer or uint64 device pointers, int32/uint32/int64/float32/
// float64 scalars, TensorMap descriptors and Raw blobs; plain int is refused
// because its C width is ambiguous.
//
// Launch returns launch-time errors (bad configuration, too many resources).
// Faults during execution surface at the next synchronization; use Sync to
// check one kernel's outcome with its name attached.
func Launch(fn *Function, grid, block [3]int, sharedBytes int, stream *Stream, args ...any) error {
	return launch(fn, grid, block, sharedBytes, stream, LaunchOptions{}, args)
}

// LaunchOptions are how LaunchWith launches a kernel.
type LaunchOptions struct {
	// Early: the kernel may start before the kernel queued before it on
	// the stream has ended (programmatic dependent launch, sm_90 on): its
	// blocks may take the SMs that kernel's blocks free once every one of
	// them has executed griddepcontrol.launch_dependents. It must itself
	// wait for what it reads of that kernel's writes. Where the driver
	// lacks cuLaunchKernelEx it launches as Launch does.
	Early bool
	// Cooperative: every block of the grid is resident at once, so blocks
	// may wait for each other; a grid too large for that fails to launch
	// (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) instead of running in waves.
	Cooperative bool
}

// LaunchWith is Launch with options.
func LaunchWith(fn *Function, grid, block [3]int, sharedBytes int, stream *Stream, opt LaunchOptions, args ...any) error {
	return launch(fn, grid, block, sharedBytes, stream, opt, args)
}

// launchConfig and launchAttr are CUlaunchConfig and CUlaunchAttribute
// (cuda.h, 64-bit hosts): the attribute's value is a 64-byte union.
type launchConfig struct {
	dims     [7]uint32 // grid x, y, z, block x, y, z, dynamic shared bytes
	_        uint32
	stream   uintptr
	attrs    *launchAttr
	numAttrs uint32
	_        uint32
}

type launchAttr struct {
	id    uint32
	_     uint32
	value [64]byte
}

// The attributes' ids (CUlaunchAttributeID), each an int value:
// CU_LAUNCH_ATTRIBUTE_COOPERATIVE (1: every block resident at once) and
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (1: the launch may
// overlap the kernel before it).
const (
	attrCooperative               = 2
	attrProgrammaticSerialization = 6
)

// launchAttrs are the attributes a launch with opt takes (none: a plain
// cuLaunchKernel), given whether the driver has cuLaunchKernelEx: without
// it an early launch starts after the kernel before, and a cooperative one
// fails.
func launchAttrs(opt LaunchOptions, haveEx bool) ([]launchAttr, error) {
	var ids []uint32
	if opt.Early && haveEx {
		ids = append(ids, attrProgrammaticSerialization)
	}
	if opt.Cooperative {
		if !haveEx {
			return nil, fmt.Errorf("a cooperative launch needs cuLaunchKernelEx (CUDA 12 drivers on)")
		}
		ids = append(ids, attrCooperative)
	}
	attrs := make([]launchAttr, len(ids))
	for i, id := range ids {
		attrs[i].id = id
		attrs[i].value[0] = 1 // each an int, 1: on
	}
	return attrs, nil
}

func launch(fn *Function, grid, block [3]int, sharedBytes int, stream *Stream, opt LaunchOptions, args []any) error {
	if fn == nil {
		return fmt.Errorf("cuda: Launch: nil function")
	}
	var dims [7]uint32
	for i, v := range []int{grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes} {
		if v < 0 || (i < 6 && v == 0) || uint64(v) > math.MaxUint32 {
			return fmt.Errorf("cuda: Launch %q: grid %v, block %v, shared %d: dimensions must be positive and fit 32 bits",
				fn.name, grid, block, sharedBytes)
		}
		dims[i] = uint32(v)
	}
	if err := fn.ensureDynamicShared(sharedBytes); err != nil {
		return err
	}
	p, err := packParams(args)
	if err != nil {
		return fmt.Errorf("cuda: Launch %q: %w", fn.name, err)
	}
	defer p.Release()
	d := fn.m.d
	return d.do(func() error {
		call := "cuLaunchKernel"
		var r int32
		attrs, err := launchAttrs(opt, d.api.cuLaunchKernelEx != nil)
		if err != nil {
			return fmt.Errorf("cuda: Launch %q: %w", fn.name, err)
		}
		if len(attrs) > 0 {
			call = "cuLaunchKernelEx"
			cfg := &launchConfig{dims: dims, stream: stream.handle(), attrs: &attrs[0], numAttrs: uint32(len(attrs))}
			r = d.api.cuLaunchKernelEx(cfg, fn.h, p.Params(), nil)
			runtime.KeepAlive(cfg)
			runtime.KeepAlive(attrs)
		} else {
			r = d.api.cuLaunchKernel(fn.h, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
				dims[6], stream.handle(), p.Params(), nil)
		}
		err = d.api.checkKernel(call, fn.name, r)
		if e, ok := err.(*Error); ok {
			cfg := fmt.Sprintf("grid %v, block %v, shared %d B", grid, block, sharedBytes)
			if e.Detail != "" {
				cfg = e.Detail + "; " + cfg
			}
			e.Detail = cfg
		}
		return err
	})
}

// Sync waits for stream (nil: the whole context) and attributes any failure
// to fn, the kernel just launched. Call it after Launch when debugging or in
// tests, where knowing which kernel faulted matters more than overlap.
//
// A kernel still running after HangAfter is given up as hung: Sync returns
// an error wrapping ErrHung. The context is then unusable (the kernel
// still occupies the GPU and every later synchronization would wait on
// it): every later call on the device fails at once with ErrHung, and the
// caller should stop using it and exit.
func Sync(fn *Function, stream *Stream) error {
	d := fn.m.d
	err := waitWithin(HangAfter, func() error {
		if stream != nil {
			return stream.Synchronize()
		}
		return d.Synchronize()
	})
	if errors.Is(err, ErrHung) {
		d.mu.Lock()
		d.hung = true
		d.mu.Unlock()
	}
	if e, ok := err.(*Error); ok && e.Kernel == "" {
		e.Kernel = fn.name
	}
	return err
}

// HangAfter is how long Sync waits before calling a kernel hung; 0 waits
// forever. A barrier wait that never completes (a wrong mbarrier phase, a
// producer and consumers that disagree on a loop's trip count) spins until
// the process dies: the driver has no watchdog on a compute GPU, and a
// benchmark or test run would sit out its whole time limit saying nothing.
// TILEGO_HANG_S (seconds) sets it for a process.
var HangAfter = hang.Limit(os.Getenv("TILEGO_HANG_S"), 2*time.Minute)

// ErrHung is wrapped by Sync's error for a kernel given up as hung.
var ErrHung = errors.New("kernel still running: hung (a barrier that never completes?); the CUDA context cannot be used again")

// waitWithin runs wait, or gives it up as hung after limit (hang.Wait).
func waitWithin(limit time.Duration, wait func() error) error {
	return hang.Wait(limit, wait, func() error {
		return hungError("cuCtxSynchronize", fmt.Sprintf("no completion after %v", limit))
	})
}

// hungError is the error of call when a kernel hung (ErrHung).
func hungError(call, detail string) *Error {
	return &Error{Call: call, Code: codeHung, Name: "TILEGO_KERNEL_HUNG", Detail: detail, wrapped: ErrHung}
}
