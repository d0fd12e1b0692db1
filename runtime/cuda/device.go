package cuda

// Devices and their primary contexts. The primary context is the one the
// CUDA runtime uses too, so buffers allocated here can be handed to (and
// received from) any other CUDA user in the process.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/tilego/tilego/internal/cstr"
)

// Device attribute numbers (CUdevice_attribute) read by Open.
const (
	attrMaxThreadsPerBlock     = 1
	attrMaxSharedPerBlock      = 8
	attrWarpSize               = 10
	attrMaxRegistersPerBlock   = 12
	attrClockRate              = 13
	attrMultiprocessorCount    = 16
	attrMemoryClockRate        = 36
	attrGlobalMemoryBusWidth   = 37
	attrL2CacheSize            = 38
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	attrMaxSharedPerSM         = 81
	attrMaxSharedPerBlockOptin = 97
)

// Device is one GPU with its primary context retained. Its exported fields
// are properties read once by Open.
type Device struct {
	Ordinal              int
	Name                 string
	Major, Minor         int    // compute capability
	SMCount              int    // multiprocessors
	MaxThreadsPerBlock   int    //
	MaxRegistersPerBlock int    //
	WarpSize             int    //
	SharedPerBlock       int    // bytes a block gets without opting in (48 KB)
	SharedPerBlockOptin  int    // bytes a block may opt in to (227 KB on sm_90)
	SharedPerSM          int    // bytes per multiprocessor
	L2Bytes              int    //
	TotalMem             uint64 // bytes of device memory
	ClockKHz             int    // peak SM clock; 0 if the driver no longer reports it
	MemClockKHz          int    // peak memory clock; 0 if not reported
	MemBusWidth          int    // bits

	api    *driverAPI
	dev    int32
	ctx    uintptr
	mu     sync.Mutex
	closed bool
	hung   bool // a kernel was given up as hung (Sync): every later call fails at once
}

// Open retains the primary context of device ordinal and reads its
// properties. Close releases the context.
func Open(ordinal int) (*Device, error) {
	api, err := driver()
	if err != nil {
		return nil, err
	}
	d := &Device{Ordinal: ordinal, api: api}
	if err := api.check("cuDeviceGet", api.cuDeviceGet(&d.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	if err := api.check("cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, err
	}
	if err := d.readProps(); err != nil {
		api.cuDevicePrimaryCtxRelease(d.dev)
		return nil, err
	}
	return d, nil
}

func (d *Device) readProps() error {
	name := make([]byte, 256)
	if err := d.api.check("cuDeviceGetName", d.api.cuDeviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
		return err
	}
	d.Name = string(cstr.TrimNUL(name))
	if err := d.api.check("cuDeviceTotalMem_v2", d.api.cuDeviceTotalMem(&d.TotalMem, d.dev)); err != nil {
		return err
	}
	required := []struct {
		attr int32
		dst  *int
	}{
		{attrComputeCapabilityMajor, &d.Major},
		{attrComputeCapabilityMinor, &d.Minor},
		{attrMultiprocessorCount, &d.SMCount},
		{attrMaxThreadsPerBlock, &d.MaxThreadsPerBlock},
		{attrMaxRegistersPerBlock, &d.MaxRegistersPerBlock},
		{attrWarpSize, &d.WarpSize},
		{attrMaxSharedPerBlock, &d.SharedPerBlock},
		{attrMaxSharedPerBlockOptin, &d.SharedPerBlockOptin},
		{attrMaxSharedPerSM, &d.SharedPerSM},
		{attrL2CacheSize, &d.L2Bytes},
		{attrGlobalMemoryBusWidth, &d.MemBusWidth},
	}
	for _, a := range required {
		v, err := d.Attribute(int(a.attr))
		if err != nil {
			return err
		}
		*a.dst = v
	}
	// Clock rates are deprecated attributes; a driver may stop reporting
	// them, which must not make the device unusable.
	d.ClockKHz, _ = d.Attribute(attrClockRate)
	d.MemClockKHz, _ = d.Attribute(attrMemoryClockRate)
	return nil
}

// Attribute reads any CUdevice_attribute by number.
func (d *Device) Attribute(attr int) (int, error) {
	var v int32
	err := d.api.check("cuDeviceGetAttribute", d.api.cuDeviceGetAttribute(&v, int32(attr), d.dev))
	return int(v), err
}

// Arch is the NVRTC/PTX target for the device's compute capability, e.g.
// "sm_90".
func (d *Device) Arch() string { return fmt.Sprintf("sm_%d%d", d.Major, d.Minor) }

// ArchSpecific is the architecture-specific target ("sm_90a") that unlocks
// features such as wgmma and setmaxnreg, which exist only on that exact
// generation. Before sm_90 there is no such target and Arch is returned.
func (d *Device) ArchSpecific() string {
	if d.Major >= 9 {
		return d.Arch() + "a"
	}
	return d.Arch()
}

func (d *Device) String() string {
	return fmt.Sprintf("%s (%s, %d SMs, %d MiB)", d.Name, d.Arch(), d.SMCount, d.TotalMem>>20)
}

var errClosed = errors.New("cuda: device is closed")

// do runs f with the device's context current on a locked OS thread: CUDA
// contexts are per thread and goroutines move between threads.
func (d *Device) do(f func() error) error {
	d.mu.Lock()
	closed, hung := d.closed, d.hung
	d.mu.Unlock()
	if closed {
		return errClosed
	}
	if hung { // the driver would wait on the hung kernel (a free, a copy) forever
		return hungError("any call after a hang", "an earlier kernel hung and still holds the device; it cannot be used again in this process")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.api.check("cuCtxSetCurrent", d.api.cuCtxSetCurrent(d.ctx)); err != nil {
		return err
	}
	return f()
}

// Synchronize waits for all work on the device's context and returns the
// first error any of it raised (a faulting kernel shows up here).
func (d *Device) Synchronize() error {
	return d.do(func() error {
		return d.api.check("cuCtxSynchronize", d.api.cuCtxSynchronize())
	})
}

// MemInfo returns free and total device memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	err = d.do(func() error {
		return d.api.check("cuMemGetInfo_v2", d.api.cuMemGetInfo(&free, &total))
	})
	return free, total, err
}

// Close releases the primary context. Buffers, modules and streams made on
// the device must be freed first; the context itself lives on while other
// users in the process still retain it.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.api.check("cuDevicePrimaryCtxRelease_v2", d.api.cuDevicePrimaryCtxRelease(d.dev))
}
