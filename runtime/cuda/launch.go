package cuda

// Kernel launches. Errors from a launch name the kernel, because in a
// compiler that generates many kernels "invalid argument" alone says nothing.

import (
	"fmt"
	"math"
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
	defer p.release()
	d := fn.m.d
	return d.do(func() error {
		r := d.api.cuLaunchKernel(fn.h, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
			dims[6], stream.handle(), p.kernelParams(), nil)
		err := d.api.checkKernel("cuLaunchKernel", fn.name, r)
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
func Sync(fn *Function, stream *Stream) error {
	var err error
	if stream != nil {
		err = stream.Synchronize()
	} else {
		err = fn.m.d.Synchronize()
	}
	if e, ok := err.(*Error); ok && e.Kernel == "" {
		e.Kernel = fn.name
	}
	return err
}
