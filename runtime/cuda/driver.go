package cuda

// The driver API table and its lazy, once-only loading. Loading is lazy so
// importing this package costs nothing on machines without CUDA.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// driverAPI holds the bound driver entry points. Handles (contexts, streams,
// modules...) are opaque C pointers and travel as uintptr; Go never
// dereferences them.
type driverAPI struct {
	path string

	cuInit             func(flags uint32) int32
	cuDriverGetVersion func(v *int32) int32
	cuGetErrorName     func(code int32, s **byte) int32
	cuGetErrorString   func(code int32, s **byte) int32

	cuDeviceGetCount     func(n *int32) int32
	cuDeviceGet          func(dev *int32, ordinal int32) int32
	cuDeviceGetName      func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute func(v *int32, attr int32, dev int32) int32
	cuDeviceTotalMem     func(bytes *uint64, dev int32) int32

	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuMemGetInfo              func(free, total *uint64) int32

	cuMemAlloc    func(p *uint64, n uintptr) int32
	cuMemFree     func(p uint64) int32
	cuMemcpyHtoD  func(dst uint64, src unsafe.Pointer, n uintptr) int32
	cuMemcpyDtoH  func(dst unsafe.Pointer, src uint64, n uintptr) int32
	cuMemcpyDtoD  func(dst, src uint64, n uintptr) int32
	cuMemsetD8    func(dst uint64, v uint8, n uintptr) int32
	cuStreamQuery func(s uintptr) int32

	cuStreamCreate      func(s *uintptr, flags uint32) int32
	cuStreamDestroy     func(s uintptr) int32
	cuStreamSynchronize func(s uintptr) int32
	cuEventCreate       func(e *uintptr, flags uint32) int32
	cuEventDestroy      func(e uintptr) int32
	cuEventRecord       func(e, s uintptr) int32
	cuEventSynchronize  func(e uintptr) int32
	cuEventElapsedTime  func(ms *float32, start, end uintptr) int32

	cuModuleLoadDataEx  func(m *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) int32
	cuModuleUnload      func(m uintptr) int32
	cuModuleGetFunction func(f *uintptr, m uintptr, name *byte) int32
	cuModuleGetGlobal   func(dptr *uint64, bytes *uintptr, m uintptr, name *byte) int32
	cuFuncGetAttribute  func(v *int32, attr int32, f uintptr) int32
	cuFuncSetAttribute  func(f uintptr, attr int32, v int32) int32
	cuLaunchKernel      func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32,
		stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuLaunchKernelEx func(cfg *launchConfig, f uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32

	cuTensorMapEncodeTiled func(tm unsafe.Pointer, dtype int32, rank uint32,
		addr uintptr, dims, strides unsafe.Pointer, box, elemStrides unsafe.Pointer,
		interleave, swizzle, l2, oob int32) int32
}

func (api *driverAPI) symbols() []symbol {
	return []symbol{
		sym(&api.cuInit, "cuInit"),
		sym(&api.cuDriverGetVersion, "cuDriverGetVersion"),
		sym(&api.cuGetErrorName, "cuGetErrorName"),
		sym(&api.cuGetErrorString, "cuGetErrorString"),
		sym(&api.cuDeviceGetCount, "cuDeviceGetCount"),
		sym(&api.cuDeviceGet, "cuDeviceGet"),
		sym(&api.cuDeviceGetName, "cuDeviceGetName"),
		sym(&api.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		sym(&api.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		sym(&api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		sym(&api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		sym(&api.cuCtxSetCurrent, "cuCtxSetCurrent"),
		sym(&api.cuCtxSynchronize, "cuCtxSynchronize"),
		sym(&api.cuMemGetInfo, "cuMemGetInfo_v2"),
		sym(&api.cuMemAlloc, "cuMemAlloc_v2"),
		sym(&api.cuMemFree, "cuMemFree_v2"),
		sym(&api.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		sym(&api.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		sym(&api.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		sym(&api.cuMemsetD8, "cuMemsetD8_v2"),
		sym(&api.cuStreamQuery, "cuStreamQuery"),
		sym(&api.cuStreamCreate, "cuStreamCreate"),
		sym(&api.cuStreamDestroy, "cuStreamDestroy_v2"),
		sym(&api.cuStreamSynchronize, "cuStreamSynchronize"),
		sym(&api.cuEventCreate, "cuEventCreate"),
		sym(&api.cuEventDestroy, "cuEventDestroy_v2"),
		sym(&api.cuEventRecord, "cuEventRecord"),
		sym(&api.cuEventSynchronize, "cuEventSynchronize"),
		// CUDA 12.8 added a _v2 that cuda.h 13 maps the name to; both
		// take the same arguments.
		sym(&api.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		sym(&api.cuModuleLoadDataEx, "cuModuleLoadDataEx"),
		sym(&api.cuModuleUnload, "cuModuleUnload"),
		sym(&api.cuModuleGetFunction, "cuModuleGetFunction"),
		opt(&api.cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
		sym(&api.cuFuncGetAttribute, "cuFuncGetAttribute"),
		sym(&api.cuFuncSetAttribute, "cuFuncSetAttribute"),
		sym(&api.cuLaunchKernel, "cuLaunchKernel"),
		// Launch attributes (a chain's steps that start early); CUDA 12 on.
		opt(&api.cuLaunchKernelEx, "cuLaunchKernelEx"),
		// Hopper's TMA descriptors; absent before CUDA 12.
		opt(&api.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled"),
	}
}

// loadDriver opens and initialises the driver from the first working
// candidate. It is the one place that decides what Available reports.
func loadDriver(cands []string) (*driverAPI, error) {
	h, path, err := dlopenFirst(cands)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w: %v", ErrNoDriver, err)
	}
	api := &driverAPI{path: path}
	if err := bind(h, path, api.symbols()); err != nil {
		return nil, fmt.Errorf("cuda: %w: %s is not a usable CUDA driver: %v", ErrNoDriver, path, err)
	}
	if r := api.cuInit(0); r != resultSuccess {
		cerr := api.check("cuInit", r)
		if r == resultNoDevice {
			return nil, fmt.Errorf("cuda: %w (%v)", ErrNoDevice, cerr)
		}
		return nil, cerr
	}
	var n int32
	if err := api.check("cuDeviceGetCount", api.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda: %w (driver %s reports 0 devices)", ErrNoDevice, path)
	}
	return api, nil
}

// lazyDriver is the once-only load result. It sits behind an atomic pointer
// so tests can swap in a fresh one with different candidates.
type lazyDriver struct {
	once  sync.Once
	cands func() []string
	api   *driverAPI
	err   error
}

var driverState atomic.Pointer[lazyDriver]

func init() { driverState.Store(&lazyDriver{cands: driverCandidates}) }

func driver() (*driverAPI, error) {
	s := driverState.Load()
	s.once.Do(func() { s.api, s.err = loadDriver(s.cands()) })
	return s.api, s.err
}

// Available reports whether CUDA can be used: nil, or an error saying plainly
// what is missing (it wraps ErrNoDriver or ErrNoDevice for errors.Is).
func Available() error {
	_, err := driver()
	return err
}

// DriverPath is the driver library that was loaded, or "" if none.
func DriverPath() string {
	api, _ := driver()
	if api == nil {
		return ""
	}
	return api.path
}

// DriverVersion is the CUDA version the driver supports, e.g. 13000 for 13.0.
func DriverVersion() (int, error) {
	api, err := driver()
	if err != nil {
		return 0, err
	}
	var v int32
	err = api.check("cuDriverGetVersion", api.cuDriverGetVersion(&v))
	return int(v), err
}

// DeviceCount is the number of CUDA devices.
func DeviceCount() (int, error) {
	api, err := driver()
	if err != nil {
		if errors.Is(err, ErrNoDevice) {
			return 0, nil
		}
		return 0, err
	}
	var n int32
	err = api.check("cuDeviceGetCount", api.cuDeviceGetCount(&n))
	return int(n), err
}
