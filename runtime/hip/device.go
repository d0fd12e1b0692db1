package hip

// Devices. HIP's runtime API has no explicit contexts: each OS thread has a
// current device, and work goes to it. A Device therefore only remembers its
// ordinal and makes itself current around each call.

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/tilego/tilego/internal/cstr"
)

// hipDeviceAttribute_t numbers read by Open, from enum hipDeviceAttribute_t
// in ROCm's include/hip/hip_runtime_api.h. The enum is numbered implicitly
// from 0 (CUDA-compatible part) and from 10000 (AMD-specific part); the
// values used here are the same in ROCm 5.0, 5.7, 6.0, 6.3 and 7.x, whose
// later additions only append.
const (
	attrClockRate                  = 5     // hipDeviceAttributeClockRate, kHz
	attrL2CacheSize                = 19    // hipDeviceAttributeL2CacheSize
	attrComputeCapabilityMajor     = 23    // hipDeviceAttributeComputeCapabilityMajor
	attrMaxThreadsPerBlock         = 56    // hipDeviceAttributeMaxThreadsPerBlock
	attrMaxThreadsPerMultiProc     = 57    // hipDeviceAttributeMaxThreadsPerMultiProcessor
	attrMemoryBusWidth             = 59    // hipDeviceAttributeMemoryBusWidth
	attrMemoryClockRate            = 60    // hipDeviceAttributeMemoryClockRate, kHz
	attrComputeCapabilityMinor     = 61    // hipDeviceAttributeComputeCapabilityMinor
	attrMultiprocessorCount        = 63    // hipDeviceAttributeMultiprocessorCount: compute units
	attrMaxRegistersPerBlock       = 71    // hipDeviceAttributeMaxRegistersPerBlock
	attrMaxSharedMemoryPerBlock    = 74    // hipDeviceAttributeMaxSharedMemoryPerBlock: LDS per block
	attrSharedMemPerMultiprocessor = 76    // hipDeviceAttributeSharedMemPerMultiprocessor: LDS per CU
	attrWarpSize                   = 87    // hipDeviceAttributeWarpSize: wavefront size
	attrWallClockRate              = 10017 // hipDeviceAttributeWallClockRate, kHz (ROCm 5.1 on)
)

// Device is one AMD GPU. Its exported fields are properties read once by
// Open.
type Device struct {
	Ordinal              int
	Name                 string // marketing name, e.g. "AMD Instinct MI300X"
	ArchName             string // gcnArchName: processor and features, e.g. "gfx942:sramecc+:xnack-"
	Major, Minor         int    // HIP's compute-capability analogue (9, 4 on gfx942)
	CUCount              int    // compute units
	MaxThreadsPerBlock   int    //
	MaxThreadsPerCU      int    //
	MaxRegistersPerBlock int    //
	WarpSize             int    // wavefront size: 64 on CDNA
	LDSPerBlock          int    // bytes of LDS (shared memory) a block may use
	LDSPerCU             int    // bytes of LDS per compute unit
	L2Bytes              int    //
	TotalMem             uint64 // bytes of device memory
	ClockKHz             int    // peak shader clock
	MemClockKHz          int    // peak memory clock
	MemBusWidth          int    // bits
	WallClockKHz         int    // rate of the constant wall clock (s_memrealtime); 0 if not reported

	api    *hipAPI
	dev    int32
	mu     sync.Mutex
	closed bool
	hung   bool // a kernel was given up as hung (Sync): every later call fails at once
}

// Open makes device ordinal usable and reads its properties.
func Open(ordinal int) (*Device, error) {
	api, err := hipRuntime()
	if err != nil {
		return nil, err
	}
	d := &Device{Ordinal: ordinal, api: api, dev: int32(ordinal)}
	if err := d.readProps(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Device) readProps() error {
	return d.do(func() error {
		name := make([]byte, 256)
		if err := d.api.check("hipDeviceGetName", d.api.hipDeviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
			return err
		}
		d.Name = string(cstr.TrimNUL(name))
		if err := d.api.check("hipDeviceTotalMem", d.api.hipDeviceTotalMem(&d.TotalMem, d.dev)); err != nil {
			return err
		}
		arch, err := d.api.archName(d.dev)
		if err != nil {
			return err
		}
		d.ArchName = arch
		required := []struct {
			attr int
			dst  *int
		}{
			{attrComputeCapabilityMajor, &d.Major},
			{attrComputeCapabilityMinor, &d.Minor},
			{attrMultiprocessorCount, &d.CUCount},
			{attrMaxThreadsPerBlock, &d.MaxThreadsPerBlock},
			{attrMaxThreadsPerMultiProc, &d.MaxThreadsPerCU},
			{attrMaxRegistersPerBlock, &d.MaxRegistersPerBlock},
			{attrWarpSize, &d.WarpSize},
			{attrMaxSharedMemoryPerBlock, &d.LDSPerBlock},
			{attrSharedMemPerMultiprocessor, &d.LDSPerCU},
			{attrL2CacheSize, &d.L2Bytes},
			{attrMemoryBusWidth, &d.MemBusWidth},
			{attrClockRate, &d.ClockKHz},
			{attrMemoryClockRate, &d.MemClockKHz},
		}
		for _, a := range required {
			v, err := d.attribute(a.attr)
			if err != nil {
				return err
			}
			*a.dst = v
		}
		d.WallClockKHz, _ = d.attribute(attrWallClockRate) // absent before ROCm 5.1
		return nil
	})
}

// attribute reads an attribute with the device already current.
func (d *Device) attribute(attr int) (int, error) {
	var v int32
	err := d.api.check("hipDeviceGetAttribute", d.api.hipDeviceGetAttribute(&v, int32(attr), d.dev))
	return int(v), err
}

// Attribute reads any hipDeviceAttribute_t by number.
func (d *Device) Attribute(attr int) (int, error) {
	var v int
	err := d.do(func() (err error) {
		v, err = d.attribute(attr)
		return err
	})
	return v, err
}

// Arch is the processor part of ArchName, e.g. "gfx942": the name clang's
// --offload-arch and code objects use.
func (d *Device) Arch() string {
	if d == nil {
		return ""
	}
	p, _, _ := strings.Cut(d.ArchName, ":")
	return p
}

func (d *Device) String() string {
	if d == nil {
		return "<nil hip.Device>"
	}
	return fmt.Sprintf("%s (%s, %d CUs, %d MiB)", d.Name, d.ArchName, d.CUCount, d.TotalMem>>20)
}

var errClosed = fmt.Errorf("hip: device is closed")

// do runs f with the device current on a locked OS thread: HIP's current
// device is per thread and goroutines move between threads.
func (d *Device) do(f func() error) error {
	if d == nil || d.api == nil {
		return errNotOpen
	}
	d.mu.Lock()
	closed, hung := d.closed, d.hung
	d.mu.Unlock()
	if closed {
		return errClosed
	}
	if hung { // the runtime would wait on the hung kernel (a free, a copy) forever
		return hungError("any call after a hang", "an earlier kernel hung and still holds the device; it cannot be used again in this process")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.api.check("hipSetDevice", d.api.hipSetDevice(d.dev)); err != nil {
		return err
	}
	return f()
}

// Synchronize waits for all work on the device and returns the first error
// any of it raised (a faulting kernel shows up here).
func (d *Device) Synchronize() error {
	return d.do(func() error {
		return d.api.check("hipDeviceSynchronize", d.api.hipDeviceSynchronize())
	})
}

// MemInfo returns free and total device memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	err = d.do(func() error {
		return d.api.check("hipMemGetInfo", d.api.hipMemGetInfo(&free, &total))
	})
	return free, total, err
}

// Close ends the use of d: later calls on it fail. Buffers, modules,
// streams and events made on it must be freed first. The runtime itself
// stays loaded, and the device can be opened again.
func (d *Device) Close() error {
	if d == nil || d.api == nil {
		return errNotOpen
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}
