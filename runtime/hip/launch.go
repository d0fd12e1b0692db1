package hip

// Kernel launches. Errors from a launch name the kernel, because in a
// compiler that generates many kernels "invalid argument" alone says nothing.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/tilego/tilego/internal/hang"
)

// Launch queues fn on stream (nil: the null stream) with the given grid (in
// blocks) and block (in work-items) sizes, dynamic LDS bytes and arguments.
// Arguments are Go values: Buffer or uint64 device pointers, int32/uint32/
// int64/float32/float64 (and narrower) scalars, and Raw blobs; plain int is
// refused because its C width is ambiguous.
//
// Launch returns launch-time errors (bad configuration, too many
// resources). Faults during execution surface at the next synchronization;
// use Sync to check one kernel's outcome with its name attached.
func Launch(fn *Function, grid, block [3]int, ldsBytes int, stream *Stream, args ...any) error {
	if fn == nil {
		return fmt.Errorf("hip: Launch: nil function")
	}
	dims, err := launchDims(grid, block, ldsBytes)
	if err != nil {
		return fmt.Errorf("hip: Launch %q: %w", fn.name, err)
	}
	p, err := packParams(args)
	if err != nil {
		return fmt.Errorf("hip: Launch %q: %w", fn.name, err)
	}
	defer p.Release()
	d := fn.device()
	return d.do(func() error {
		if stream != nil && stream.device() != d {
			return fmt.Errorf("hip: Launch %q: a closed stream, or one of another device", fn.name)
		}
		r := d.api.hipModuleLaunchKernel(fn.h, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
			dims[6], stream.handle(), p.Params(), nil)
		err := d.api.checkKernel("hipModuleLaunchKernel", fn.name, r)
		if e, ok := err.(*Error); ok {
			cfg := fmt.Sprintf("grid %v, block %v, LDS %d B", grid, block, ldsBytes)
			if e.Detail != "" {
				cfg = e.Detail + "; " + cfg
			}
			e.Detail = cfg
		}
		return err
	})
}

// launchDims checks a launch's sizes and returns them as the seven
// unsigned ints hipModuleLaunchKernel takes. HIP dispatches grid*block
// work-items per dimension, which must stay below 2^32
// (hipModuleLaunchKernel's documentation in hip_runtime_api.h).
func launchDims(grid, block [3]int, ldsBytes int) ([7]uint32, error) {
	var dims [7]uint32
	for i, v := range []int{grid[0], grid[1], grid[2], block[0], block[1], block[2], ldsBytes} {
		if v < 0 || (i < 6 && v == 0) || uint64(v) > math.MaxUint32 {
			return dims, fmt.Errorf("grid %v, block %v, LDS %d: dimensions must be positive and fit 32 bits",
				grid, block, ldsBytes)
		}
		dims[i] = uint32(v)
	}
	for i := range 3 {
		if uint64(grid[i])*uint64(block[i]) > math.MaxUint32 {
			return dims, fmt.Errorf("grid %v, block %v: %d work-items in dimension %d, HIP allows fewer than 2^32",
				grid, block, uint64(grid[i])*uint64(block[i]), i)
		}
	}
	return dims, nil
}

// Sync waits for stream (nil: the whole device) and attributes any failure
// to fn, the kernel just launched. Call it after Launch when debugging or in
// tests, where knowing which kernel faulted matters more than overlap.
//
// A kernel still running after HangAfter is given up as hung: Sync returns
// an error wrapping ErrHung, and every later call on the device fails at
// once (the kernel still occupies the GPU and any synchronization would
// wait on it); the caller should stop using it and exit.
func Sync(fn *Function, stream *Stream) error {
	d := fn.device()
	if d == nil {
		return errNotOpen
	}
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
// forever. A wait that never completes (a barrier some waves never reach)
// spins until the process dies, and a test run would sit out its whole
// time limit saying nothing. TILEGO_HANG_S (seconds) sets it for a process.
var HangAfter = hang.Limit(os.Getenv("TILEGO_HANG_S"), 2*time.Minute)

// ErrHung is wrapped by Sync's error for a kernel given up as hung.
var ErrHung = errors.New("kernel still running: hung (a barrier that never completes?); the HIP device cannot be used again in this process")

// waitWithin runs wait, or gives it up as hung after limit (hang.Wait).
func waitWithin(limit time.Duration, wait func() error) error {
	return hang.Wait(limit, wait, func() error {
		return hungError("hipDeviceSynchronize", fmt.Sprintf("no completion after %v", limit))
	})
}

// hungError is the error of call when a kernel hung (ErrHung).
func hungError(call, detail string) *Error {
	return &Error{Call: call, Code: codeHung, Name: "TILEGO_KERNEL_HUNG", Detail: detail, wrapped: ErrHung}
}
