package hip

// Modules and kernel functions.

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/tilego/tilego/internal/cstr"
)

// Module is a loaded code object.
type Module struct {
	d     *Device
	h     uintptr
	image []byte // the module's own copy of the code object, outside the Go heap
}

// mapCopy copies image into memory of its own outside the Go heap. The
// runtime keeps pointing at a loaded image (clr's FatBinaryInfo), which Go
// memory allows only while pinned, and a pinned module dropped without
// Close would make the garbage collector panic; a dropped mapping only
// leaks, as the dropped module does.
func mapCopy(image []byte) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, len(image), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("hip: mapping %d bytes for a code object: %w", len(image), err)
	}
	copy(b, image)
	return b, nil
}

// LoadModule loads a code object (an AMDGPU ELF such as clang's .hsaco, or
// an offload bundle) onto d. A code object that is not one, or that was
// built for another GPU, is refused before the runtime sees it, with an
// error naming both targets.
func (d *Device) LoadModule(image []byte) (*Module, error) {
	m := &Module{d: d}
	err := d.do(func() error {
		if err := checkCodeObject(image); err != nil {
			return &Error{Call: "hipModuleLoadData", Code: hipErrorInvalidImage,
				Name: "hipErrorInvalidImage", Detail: err.Error()}
		}
		if t, err := CodeObjectTarget(image); err == nil && d.ArchName != "" && !targetRuns(t, d.ArchName) {
			return &Error{Call: "hipModuleLoadData", Code: hipErrorNoBinaryForGpu, Name: "hipErrorNoBinaryForGpu",
				Detail: fmt.Sprintf("code object built for %s, device %d is %s", t, d.Ordinal, d.ArchName)}
		}
		img, err := mapCopy(image)
		if err != nil {
			return err
		}
		r := d.api.hipModuleLoadData(&m.h, unsafe.Pointer(&img[0]))
		if err := d.api.check("hipModuleLoadData", r); err != nil {
			syscall.Munmap(img)
			return err
		}
		m.image = img
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Close unloads the module; its functions become invalid. Closing a nil or
// already closed module does nothing.
func (m *Module) Close() error {
	if m == nil || m.h == 0 {
		return nil
	}
	err := m.d.do(func() error { return m.d.api.check("hipModuleUnload", m.d.api.hipModuleUnload(m.h)) })
	if err == nil {
		m.h = 0
		syscall.Munmap(m.image)
		m.image = nil
	}
	return err
}

// device is the module's device, or nil when m was not loaded by one; the
// device's do then reports errNotOpen.
func (m *Module) device() *Device {
	if m == nil || m.h == 0 {
		return nil
	}
	return m.d
}

// Function is a kernel entry point in a loaded module.
type Function struct {
	m    *Module
	h    uintptr
	name string
}

// Function looks up the kernel called name (its extern "C" or mangled name).
func (m *Module) Function(name string) (*Function, error) {
	d := m.device()
	f := &Function{m: m, name: name}
	cname := cstr.C(name)
	err := d.do(func() error {
		return d.api.checkKernel("hipModuleGetFunction", name,
			d.api.hipModuleGetFunction(&f.h, m.h, &cname[0]))
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Global is the device memory of the module's global variable called name
// (a __device__ variable of the source), as a Buffer of its size.
func (m *Module) Global(name string) (Buffer, error) {
	d := m.device()
	var p uint64
	var n uintptr
	cname := cstr.C(name)
	err := d.do(func() error {
		if d.api.hipModuleGetGlobal == nil {
			return missing("hipModuleGetGlobal")
		}
		return d.api.check("hipModuleGetGlobal", d.api.hipModuleGetGlobal(&p, &n, m.h, &cname[0]))
	})
	if err != nil {
		return Buffer{}, fmt.Errorf("hip: global %q: %w", name, err)
	}
	return Buffer{Ptr: p, Size: int(n)}, nil
}

// Name is the kernel's name as looked up.
func (f *Function) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

// device is the function's device, or nil for a function not looked up
// in a loaded module.
func (f *Function) device() *Device {
	if f == nil || f.h == 0 {
		return nil
	}
	return f.m.device()
}

// FuncAttribute is a hipFunction_attribute. Values from enum
// hipFunction_attribute in ROCm's include/hip/driver_types.h; the meanings
// on AMD are those of the runtime (ROCm/clr hipamd/src/hip_module.cpp,
// hipFuncGetAttribute).
type FuncAttribute int

const (
	FuncMaxThreadsPerBlock        FuncAttribute = 0 // HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	FuncSharedSizeBytes           FuncAttribute = 1 // static LDS bytes (HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
	FuncConstSizeBytes            FuncAttribute = 2 // HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
	FuncLocalSizeBytes            FuncAttribute = 3 // scratch (private) bytes per work-item (HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
	FuncNumRegs                   FuncAttribute = 4 // VGPRs per work-item (HIP_FUNC_ATTRIBUTE_NUM_REGS)
	FuncBinaryVersion             FuncAttribute = 6 // ISA major*10 + minor (HIP_FUNC_ATTRIBUTE_BINARY_VERSION)
	FuncMaxDynamicSharedSizeBytes FuncAttribute = 8 // LDS left for dynamic use (HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
)

// Attribute reads a function attribute.
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	d := f.device()
	var v int32
	err := d.do(func() error {
		return d.api.checkKernel("hipFuncGetAttribute", f.name, d.api.hipFuncGetAttribute(&v, int32(a), f.h))
	})
	return int(v), err
}

// FuncInfo is what the compiler gave a kernel, for reports and checks.
type FuncInfo struct {
	NumVGPRs, ScratchBytes, StaticLDSBytes, MaxThreadsPerBlock, MaxDynamicLDSBytes int
}

// Info reads the commonly needed attributes at once.
func (f *Function) Info() (FuncInfo, error) {
	var fi FuncInfo
	for _, a := range []struct {
		attr FuncAttribute
		dst  *int
	}{
		{FuncNumRegs, &fi.NumVGPRs},
		{FuncLocalSizeBytes, &fi.ScratchBytes},
		{FuncSharedSizeBytes, &fi.StaticLDSBytes},
		{FuncMaxThreadsPerBlock, &fi.MaxThreadsPerBlock},
		{FuncMaxDynamicSharedSizeBytes, &fi.MaxDynamicLDSBytes},
	} {
		v, err := f.Attribute(a.attr)
		if err != nil {
			return fi, err
		}
		*a.dst = v
	}
	return fi, nil
}
