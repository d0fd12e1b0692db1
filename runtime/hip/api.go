package hip

// The HIP runtime's entry-point table and its lazy, once-only loading.
// Loading is lazy so importing this package costs nothing on machines
// without ROCm.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// hipAPI holds the bound entry points. Handles (streams, events, modules,
// functions) are opaque C pointers and travel as uintptr; device pointers
// travel as uint64. Go never dereferences either. Signatures follow
// hip_runtime_api.h: hipError_t is a 32-bit enum, size_t a uintptr (or a
// *uint64 where the runtime writes one back), hipDevice_t an int.
type hipAPI struct {
	path string

	hipInit              func(flags uint32) int32
	hipDriverGetVersion  func(v *int32) int32
	hipRuntimeGetVersion func(v *int32) int32
	hipGetErrorName      func(code int32) string // const char*, copied by purego
	hipGetErrorString    func(code int32) string

	hipGetDeviceCount     func(n *int32) int32
	hipSetDevice          func(ordinal int32) int32
	hipDeviceGetName      func(name *byte, n int32, dev int32) int32
	hipDeviceGetAttribute func(v *int32, attr int32, dev int32) int32
	hipDeviceTotalMem     func(bytes *uint64, dev int32) int32
	hipDeviceSynchronize  func() int32
	hipMemGetInfo         func(free, total *uint64) int32

	// At most one of these is bound: the ROCm 6+ properties call, or the
	// older one (ROCm 5's, and ROCm 6's compatibility export) whose struct
	// has another layout. See props.go.
	hipGetDevicePropertiesR0600 func(props unsafe.Pointer, dev int32) int32
	hipGetDevicePropertiesR0000 func(props unsafe.Pointer, dev int32) int32

	hipMalloc func(p *uint64, n uintptr) int32
	hipFree   func(p uint64) int32
	// hipMemcpy bound three times, typed for each direction so that host
	// memory travels as unsafe.Pointer and device memory as uint64.
	hipMemcpyHtoD func(dst uint64, src unsafe.Pointer, n uintptr, kind int32) int32
	hipMemcpyDtoH func(dst unsafe.Pointer, src uint64, n uintptr, kind int32) int32
	hipMemcpyDtoD func(dst, src uint64, n uintptr, kind int32) int32
	hipMemset     func(dst uint64, v int32, n uintptr) int32

	hipStreamCreate      func(s *uintptr) int32
	hipStreamDestroy     func(s uintptr) int32
	hipStreamSynchronize func(s uintptr) int32
	hipStreamQuery       func(s uintptr) int32
	hipEventCreate       func(e *uintptr) int32
	hipEventDestroy      func(e uintptr) int32
	hipEventRecord       func(e, s uintptr) int32
	hipEventSynchronize  func(e uintptr) int32
	hipEventElapsedTime  func(ms *float32, start, end uintptr) int32

	hipModuleLoadData     func(m *uintptr, image unsafe.Pointer) int32
	hipModuleUnload       func(m uintptr) int32
	hipModuleGetFunction  func(f *uintptr, m uintptr, name *byte) int32
	hipModuleGetGlobal    func(dptr *uint64, bytes *uintptr, m uintptr, name *byte) int32
	hipFuncGetAttribute   func(v *int32, attr int32, f uintptr) int32
	hipModuleLaunchKernel func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32,
		stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
}

func (api *hipAPI) symbols() []symbol {
	return []symbol{
		sym(&api.hipInit, "hipInit"),
		sym(&api.hipDriverGetVersion, "hipDriverGetVersion"),
		sym(&api.hipRuntimeGetVersion, "hipRuntimeGetVersion"),
		sym(&api.hipGetErrorName, "hipGetErrorName"),
		sym(&api.hipGetErrorString, "hipGetErrorString"),
		sym(&api.hipGetDeviceCount, "hipGetDeviceCount"),
		sym(&api.hipSetDevice, "hipSetDevice"),
		sym(&api.hipDeviceGetName, "hipDeviceGetName"),
		sym(&api.hipDeviceGetAttribute, "hipDeviceGetAttribute"),
		sym(&api.hipDeviceTotalMem, "hipDeviceTotalMem"),
		sym(&api.hipDeviceSynchronize, "hipDeviceSynchronize"),
		sym(&api.hipMemGetInfo, "hipMemGetInfo"),
		opt(&api.hipGetDevicePropertiesR0600, "hipGetDevicePropertiesR0600"),
		sym(&api.hipMalloc, "hipMalloc"),
		sym(&api.hipFree, "hipFree"),
		sym(&api.hipMemcpyHtoD, "hipMemcpy"),
		sym(&api.hipMemcpyDtoH, "hipMemcpy"),
		sym(&api.hipMemcpyDtoD, "hipMemcpy"),
		sym(&api.hipMemset, "hipMemset"),
		sym(&api.hipStreamCreate, "hipStreamCreate"),
		sym(&api.hipStreamDestroy, "hipStreamDestroy"),
		sym(&api.hipStreamSynchronize, "hipStreamSynchronize"),
		sym(&api.hipStreamQuery, "hipStreamQuery"),
		sym(&api.hipEventCreate, "hipEventCreate"),
		sym(&api.hipEventDestroy, "hipEventDestroy"),
		sym(&api.hipEventRecord, "hipEventRecord"),
		sym(&api.hipEventSynchronize, "hipEventSynchronize"),
		sym(&api.hipEventElapsedTime, "hipEventElapsedTime"),
		sym(&api.hipModuleLoadData, "hipModuleLoadData"),
		sym(&api.hipModuleUnload, "hipModuleUnload"),
		sym(&api.hipModuleGetFunction, "hipModuleGetFunction"),
		opt(&api.hipModuleGetGlobal, "hipModuleGetGlobal"),
		sym(&api.hipFuncGetAttribute, "hipFuncGetAttribute"),
		sym(&api.hipModuleLaunchKernel, "hipModuleLaunchKernel"),
	}
}

// legacyProps binds the pre-6.0 properties call, for runtimes without the
// R0600 one. Both ROCm 5 and 6 export it under the plain name with the
// R0000 layout; ROCm 6 also as hipGetDevicePropertiesR0000.
func (api *hipAPI) legacyProps() symbol {
	return opt(&api.hipGetDevicePropertiesR0000, "hipGetDevicePropertiesR0000", "hipGetDeviceProperties")
}

// loadRuntime opens and initialises HIP from the first working candidate.
// It is the one place that decides what Available reports.
func loadRuntime(cands []string) (*hipAPI, error) {
	h, path, err := dlopenFirst(cands)
	if err != nil {
		return nil, fmt.Errorf("hip: %w: %v", ErrNoRuntime, err)
	}
	api := &hipAPI{path: path}
	syms := api.symbols()
	if err := bind(h, path, syms); err != nil {
		return nil, fmt.Errorf("hip: %w: %s is not a usable HIP runtime: %v", ErrNoRuntime, path, err)
	}
	if api.hipGetDevicePropertiesR0600 == nil {
		_ = bind(h, path, []symbol{api.legacyProps()})
	}
	return initRuntime(api)
}

// initRuntime initialises a bound runtime and checks it sees a device.
func initRuntime(api *hipAPI) (*hipAPI, error) {
	if r := api.hipInit(0); r != hipSuccess {
		herr := api.check("hipInit", r)
		if r == hipErrorNoDevice || r == hipErrorInsufficientDriver {
			return nil, fmt.Errorf("hip: %w (%v)", ErrNoDevice, herr)
		}
		return nil, herr
	}
	var n int32
	if r := api.hipGetDeviceCount(&n); r == hipErrorNoDevice {
		return nil, fmt.Errorf("hip: %w (%v)", ErrNoDevice, api.check("hipGetDeviceCount", r))
	} else if err := api.check("hipGetDeviceCount", r); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("hip: %w (%s reports 0 devices)", ErrNoDevice, api.path)
	}
	return api, nil
}

// lazyRuntime is the once-only load result. It sits behind an atomic
// pointer so tests can swap in a fresh one with different candidates.
type lazyRuntime struct {
	once  sync.Once
	cands func() []string
	api   *hipAPI
	err   error
}

var runtimeState atomic.Pointer[lazyRuntime]

func init() { runtimeState.Store(&lazyRuntime{cands: runtimeCandidates}) }

func hipRuntime() (*hipAPI, error) {
	s := runtimeState.Load()
	s.once.Do(func() { s.api, s.err = loadRuntime(s.cands()) })
	return s.api, s.err
}

// Available reports whether HIP can be used: nil, or an error saying plainly
// what is missing (it wraps ErrNoRuntime or ErrNoDevice for errors.Is).
func Available() error {
	_, err := hipRuntime()
	return err
}

// RuntimePath is the libamdhip64 that was loaded, or "" if none.
func RuntimePath() string {
	api, _ := hipRuntime()
	if api == nil {
		return ""
	}
	return api.path
}

// RuntimeVersion is HIP's version number, major*10000000 + minor*100000 +
// patch (60342134 for 6.3.42134).
func RuntimeVersion() (int, error) {
	api, err := hipRuntime()
	if err != nil {
		return 0, err
	}
	var v int32
	err = api.check("hipRuntimeGetVersion", api.hipRuntimeGetVersion(&v))
	return int(v), err
}

// DriverVersion is what hipDriverGetVersion reports (the HIP runtime's
// version on AMD, not the kernel driver's).
func DriverVersion() (int, error) {
	api, err := hipRuntime()
	if err != nil {
		return 0, err
	}
	var v int32
	err = api.check("hipDriverGetVersion", api.hipDriverGetVersion(&v))
	return int(v), err
}

// DeviceCount is the number of AMD GPUs HIP sees: 0 without error when the
// runtime loads but finds none.
func DeviceCount() (int, error) {
	api, err := hipRuntime()
	if err != nil {
		if errors.Is(err, ErrNoDevice) {
			return 0, nil
		}
		return 0, err
	}
	var n int32
	err = api.check("hipGetDeviceCount", api.hipGetDeviceCount(&n))
	return int(n), err
}
