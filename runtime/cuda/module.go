package cuda

// Modules and kernel functions. Loading goes through cuModuleLoadDataEx so a
// PTX image that fails to JIT comes back with the driver's error log in the
// error instead of a bare CUDA_ERROR_INVALID_PTX.

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/tilego/tilego/internal/cstr"
)

// CUjit_option numbers used to capture the JIT log.
const (
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

// Module is a loaded cubin, fatbin or PTX image.
type Module struct {
	d *Device
	h uintptr
}

// isBinary reports whether image is an ELF cubin or a fatbin rather than PTX
// text; only text needs the NUL terminator the driver expects.
func isBinary(image []byte) bool {
	return bytes.HasPrefix(image, []byte("\x7fELF")) ||
		bytes.HasPrefix(image, []byte{0x50, 0xed, 0x55, 0xba})
}

// LoadModule loads a cubin, fatbin or PTX image into d's context.
func (d *Device) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, &Error{Call: "cuModuleLoadDataEx", Code: resultInvalidValue,
			Name: "CUDA_ERROR_INVALID_VALUE", Detail: "empty module image"}
	}
	if !isBinary(image) && image[len(image)-1] != 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	logBuf := make([]byte, 16<<10)
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	pin.Pin(&image[0])
	defer pin.Unpin()
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}

	m := &Module{d: d}
	err := d.do(func() error {
		r := d.api.cuModuleLoadDataEx(&m.h, unsafe.Pointer(&image[0]), uint32(len(opts)), &opts[0], &vals[0])
		return d.api.check("cuModuleLoadDataEx", r)
	})
	runtime.KeepAlive(image)
	runtime.KeepAlive(logBuf)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = string(cstr.TrimNUL(logBuf))
		}
		return nil, err
	}
	return m, nil
}

// Close unloads the module; its functions become invalid.
func (m *Module) Close() error {
	if m == nil || m.h == 0 {
		return nil
	}
	h := m.h
	m.h = 0
	return m.d.do(func() error { return m.d.api.check("cuModuleUnload", m.d.api.cuModuleUnload(h)) })
}

// Function is a kernel entry point in a loaded module.
type Function struct {
	m    *Module
	h    uintptr
	name string

	mu      sync.Mutex
	dynSmem int // the MAX_DYNAMIC_SHARED_SIZE_BYTES last set by us
}

// Function looks up the kernel called name (its extern "C" or mangled name).
func (m *Module) Function(name string) (*Function, error) {
	f := &Function{m: m, name: name}
	cname := cstr.C(name)
	err := m.d.do(func() error {
		return m.d.api.checkKernel("cuModuleGetFunction", name,
			m.d.api.cuModuleGetFunction(&f.h, m.h, &cname[0]))
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Global is the device memory of the module's global variable called
// name (a __device__ variable of the source), as a Buffer of its size.
func (m *Module) Global(name string) (Buffer, error) {
	if m.d.api.cuModuleGetGlobal == nil {
		return Buffer{}, fmt.Errorf("cuda: this driver has no cuModuleGetGlobal_v2")
	}
	var p uint64
	var n uintptr
	cname := cstr.C(name)
	err := m.d.do(func() error {
		return m.d.api.check("cuModuleGetGlobal_v2", m.d.api.cuModuleGetGlobal(&p, &n, m.h, &cname[0]))
	})
	if err != nil {
		return Buffer{}, fmt.Errorf("cuda: global %q: %w", name, err)
	}
	return Buffer{Ptr: p, Size: int(n)}, nil
}

// Name is the kernel's name as looked up.
func (f *Function) Name() string { return f.name }

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int

const (
	FuncMaxThreadsPerBlock        FuncAttribute = 0
	FuncSharedSizeBytes           FuncAttribute = 1 // static shared memory
	FuncConstSizeBytes            FuncAttribute = 2
	FuncLocalSizeBytes            FuncAttribute = 3 // per-thread local memory (spills)
	FuncNumRegs                   FuncAttribute = 4
	FuncPTXVersion                FuncAttribute = 5
	FuncBinaryVersion             FuncAttribute = 6
	FuncMaxDynamicSharedSizeBytes FuncAttribute = 8
)

// Attribute reads a function attribute.
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	var v int32
	err := f.m.d.do(func() error {
		return f.m.d.api.checkKernel("cuFuncGetAttribute", f.name,
			f.m.d.api.cuFuncGetAttribute(&v, int32(a), f.h))
	})
	return int(v), err
}

// SetAttribute sets a function attribute.
func (f *Function) SetAttribute(a FuncAttribute, v int) error {
	return f.m.d.do(func() error {
		return f.m.d.api.checkKernel("cuFuncSetAttribute", f.name,
			f.m.d.api.cuFuncSetAttribute(f.h, int32(a), int32(v)))
	})
}

// SetMaxDynamicSharedMemory opts the kernel in to bytes of dynamic shared
// memory; launches asking for more than 48 KB fail without it.
func (f *Function) SetMaxDynamicSharedMemory(bytes int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.SetAttribute(FuncMaxDynamicSharedSizeBytes, bytes); err != nil {
		return err
	}
	f.dynSmem = bytes
	return nil
}

// ensureDynamicShared raises the opt-in when a launch needs more dynamic
// shared memory than the default limit, so callers cannot forget it.
func (f *Function) ensureDynamicShared(bytes int) error {
	const defaultLimit = 48 << 10
	f.mu.Lock()
	have := f.dynSmem
	f.mu.Unlock()
	if bytes <= defaultLimit || bytes <= have {
		return nil
	}
	return f.SetMaxDynamicSharedMemory(bytes)
}

// FuncInfo is what the compiler gave a kernel, for reports and checks.
type FuncInfo struct {
	NumRegs, LocalBytes, StaticSharedBytes, MaxThreadsPerBlock, MaxDynamicSharedBytes int
}

// Info reads the commonly needed attributes at once.
func (f *Function) Info() (FuncInfo, error) {
	var fi FuncInfo
	for _, a := range []struct {
		attr FuncAttribute
		dst  *int
	}{
		{FuncNumRegs, &fi.NumRegs},
		{FuncLocalSizeBytes, &fi.LocalBytes},
		{FuncSharedSizeBytes, &fi.StaticSharedBytes},
		{FuncMaxThreadsPerBlock, &fi.MaxThreadsPerBlock},
		{FuncMaxDynamicSharedSizeBytes, &fi.MaxDynamicSharedBytes},
	} {
		v, err := f.Attribute(a.attr)
		if err != nil {
			return fi, err
		}
		*a.dst = v
	}
	return fi, nil
}
