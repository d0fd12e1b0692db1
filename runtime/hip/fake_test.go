package hip

// A simulated HIP runtime: the entry-point table is Go function values, so
// tests can fill it with Go closures and drive every code path above the
// C boundary (argument passing, error mapping, property reading, module
// checks) on a machine without ROCm. What it cannot test is the C boundary
// itself: purego's calls into the real libamdhip64 (gpu_test.go does).

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

// fakeGPU is the simulated device's state.
type fakeGPU struct {
	mu       sync.Mutex
	arch     string            // gcnArchName written into the properties
	mem      map[uint64][]byte // allocations by base address
	next     uint64
	current  int32 // device made current by hipSetDevice
	loaded   int   // hipModuleLoadData calls
	launches []fakeLaunch
	calls    map[string]int
}

// fakeLaunch records what hipModuleLaunchKernel was given.
type fakeLaunch struct {
	f      uintptr
	dims   [7]uint32
	stream uintptr
	params unsafe.Pointer
}

// buf returns the allocation holding device address p, and p's offset in it.
func (g *fakeGPU) buf(p uint64) ([]byte, int) {
	for base, b := range g.mem {
		if p >= base && p < base+uint64(len(b)) {
			return b, int(p - base)
		}
	}
	return nil, 0
}

// fakeAPI builds a runtime table over g, for one device with props
// properties layout (R0600 or R0000).
func fakeAPI(g *fakeGPU, legacyProps bool) *hipAPI {
	g.mem = map[uint64][]byte{}
	g.next = 0x7f0000000000
	g.calls = map[string]int{}
	g.current = -1
	count := func(name string) { g.calls[name]++ }
	api := &hipAPI{path: "fake"}
	api.hipInit = func(uint32) int32 { return hipSuccess }
	api.hipDriverGetVersion = func(v *int32) int32 { *v = 60342134; return hipSuccess }
	api.hipRuntimeGetVersion = func(v *int32) int32 { *v = 60342134; return hipSuccess }
	api.hipGetErrorName = func(code int32) string {
		if n := fallbackNames[int(code)]; n != "" {
			return n
		}
		return "hipErrorUnknown"
	}
	api.hipGetErrorString = func(code int32) string { return fmt.Sprintf("description of %d", code) }
	api.hipGetDeviceCount = func(n *int32) int32 { *n = 1; return hipSuccess }
	api.hipSetDevice = func(o int32) int32 {
		if o != 0 {
			return 101 // hipErrorInvalidDevice
		}
		g.current = o
		return hipSuccess
	}
	api.hipDeviceGetName = func(name *byte, n int32, dev int32) int32 {
		copy(unsafe.Slice(name, n), "AMD Instinct MI300X\x00")
		return hipSuccess
	}
	attrs := map[int32]int32{
		attrClockRate: 2100000, attrL2CacheSize: 4 << 20, attrComputeCapabilityMajor: 9,
		attrMaxThreadsPerBlock: 1024, attrMaxThreadsPerMultiProc: 2048, attrMemoryBusWidth: 8192,
		attrMemoryClockRate: 1300000, attrComputeCapabilityMinor: 4, attrMultiprocessorCount: 304,
		attrMaxRegistersPerBlock: 512 * 64, attrMaxSharedMemoryPerBlock: 64 << 10,
		attrSharedMemPerMultiprocessor: 64 << 10, attrWarpSize: 64, attrWallClockRate: 100000,
	}
	api.hipDeviceGetAttribute = func(v *int32, attr int32, dev int32) int32 {
		a, ok := attrs[attr]
		if !ok {
			return hipErrorInvalidValue
		}
		*v = a
		return hipSuccess
	}
	api.hipDeviceTotalMem = func(b *uint64, dev int32) int32 { *b = 192 << 30; return hipSuccess }
	api.hipDeviceSynchronize = func() int32 { count("hipDeviceSynchronize"); return hipSuccess }
	api.hipMemGetInfo = func(free, total *uint64) int32 { *free, *total = 190<<30, 192<<30; return hipSuccess }
	props := func(size, off int) func(p unsafe.Pointer, dev int32) int32 {
		return func(p unsafe.Pointer, dev int32) int32 {
			b := unsafe.Slice((*byte)(p), size)
			copy(b, "AMD Instinct MI300X\x00")
			copy(b[off:], g.arch+"\x00")
			return hipSuccess
		}
	}
	if legacyProps {
		api.hipGetDevicePropertiesR0000 = props(propsR0000Size, propsR0000ArchNameOff)
	} else {
		api.hipGetDevicePropertiesR0600 = props(propsR0600Size, propsR0600ArchNameOff)
	}
	api.hipMalloc = func(p *uint64, n uintptr) int32 {
		g.mu.Lock()
		defer g.mu.Unlock()
		*p = g.next
		g.mem[g.next] = make([]byte, n)
		g.next += (uint64(n) + 255) &^ 255
		return hipSuccess
	}
	api.hipFree = func(p uint64) int32 {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.mem[p]; !ok {
			return hipErrorInvalidValue
		}
		delete(g.mem, p)
		return hipSuccess
	}
	api.hipMemcpyHtoD = func(dst uint64, src unsafe.Pointer, n uintptr, kind int32) int32 {
		b, off := g.buf(dst)
		if b == nil || kind != memcpyHostToDevice {
			return hipErrorInvalidValue
		}
		copy(b[off:], unsafe.Slice((*byte)(src), n))
		return hipSuccess
	}
	api.hipMemcpyDtoH = func(dst unsafe.Pointer, src uint64, n uintptr, kind int32) int32 {
		b, off := g.buf(src)
		if b == nil || kind != memcpyDeviceToHost {
			return hipErrorInvalidValue
		}
		copy(unsafe.Slice((*byte)(dst), n), b[off:])
		return hipSuccess
	}
	api.hipMemcpyDtoD = func(dst, src uint64, n uintptr, kind int32) int32 {
		db, doff := g.buf(dst)
		sb, soff := g.buf(src)
		if db == nil || sb == nil || kind != memcpyDeviceToDevice {
			return hipErrorInvalidValue
		}
		copy(db[doff:], sb[soff:soff+int(n)])
		return hipSuccess
	}
	api.hipMemset = func(dst uint64, v int32, n uintptr) int32 {
		b, off := g.buf(dst)
		if b == nil {
			return hipErrorInvalidValue
		}
		for i := range int(n) {
			b[off+i] = byte(v)
		}
		return hipSuccess
	}
	handle := uintptr(0x1000)
	newHandle := func(h *uintptr) int32 { handle += 0x10; *h = handle; return hipSuccess }
	ok := func(uintptr) int32 { return hipSuccess }
	api.hipStreamCreate = newHandle
	api.hipStreamDestroy = ok
	api.hipStreamSynchronize = func(uintptr) int32 { count("hipStreamSynchronize"); return hipSuccess }
	api.hipStreamQuery = func(uintptr) int32 { return hipErrorNotReady }
	api.hipEventCreate = newHandle
	api.hipEventDestroy = ok
	api.hipEventRecord = func(e, s uintptr) int32 { return hipSuccess }
	api.hipEventSynchronize = ok
	api.hipEventElapsedTime = func(ms *float32, a, b uintptr) int32 { *ms = 1.5; return hipSuccess }
	api.hipModuleLoadData = func(m *uintptr, image unsafe.Pointer) int32 {
		g.loaded++
		return newHandle(m)
	}
	api.hipModuleUnload = ok
	api.hipModuleGetFunction = func(f *uintptr, m uintptr, name *byte) int32 {
		if goStringN(name) == "missing" {
			return 500 // hipErrorNotFound
		}
		return newHandle(f)
	}
	api.hipModuleGetGlobal = func(p *uint64, n *uintptr, m uintptr, name *byte) int32 {
		*p, *n = 0x7e0000000000, 4
		return hipSuccess
	}
	api.hipFuncGetAttribute = func(v *int32, attr int32, f uintptr) int32 {
		*v = map[int32]int32{0: 1024, 1: 0, 3: 16, 4: 24, 8: 65536}[attr]
		return hipSuccess
	}
	api.hipModuleLaunchKernel = func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32,
		stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32 {
		if extra != nil {
			return hipErrorInvalidValue
		}
		if shared > 64<<10 {
			return hipErrorInvalidValue
		}
		g.launches = append(g.launches, fakeLaunch{f, [7]uint32{gx, gy, gz, bx, by, bz, shared}, stream, params})
		return hipSuccess
	}
	return api
}

// goStringN copies the NUL-terminated string at p.
func goStringN(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// withAPI makes api the loaded runtime for one test.
func withAPI(t *testing.T, api *hipAPI) {
	t.Helper()
	s := &lazyRuntime{}
	s.once.Do(func() { s.api = api })
	old := runtimeState.Load()
	runtimeState.Store(s)
	t.Cleanup(func() { runtimeState.Store(old) })
}

// openFake opens device 0 of a fake gfx942 runtime.
func openFake(t *testing.T) (*Device, *fakeGPU) {
	t.Helper()
	g := &fakeGPU{arch: "gfx942:sramecc+:xnack-"}
	withAPI(t, fakeAPI(g, false))
	d, err := Open(0)
	if err != nil {
		t.Fatalf("Open(0) on the fake runtime: %v", err)
	}
	return d, g
}
