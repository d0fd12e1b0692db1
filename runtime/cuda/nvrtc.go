package cuda

// NVRTC, the runtime CUDA C++ compiler. tilego generates CUDA C++ and
// compiles it in-process, so no toolkit (nvcc) is needed on the target
// machine, only the NVRTC shared library.

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/tilego/tilego/internal/cstr"
)

type nvrtcAPI struct {
	path string

	nvrtcVersion           func(major, minor *int32) int32
	nvrtcGetErrorString    func(r int32) string
	nvrtcCreateProgram     func(prog *uintptr, src, name *byte, nHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
	nvrtcCompileProgram    func(prog uintptr, nOpts int32, opts unsafe.Pointer) int32
	nvrtcGetProgramLogSize func(prog uintptr, n *uintptr) int32
	nvrtcGetProgramLog     func(prog uintptr, log *byte) int32
	nvrtcGetPTXSize        func(prog uintptr, n *uintptr) int32
	nvrtcGetPTX            func(prog uintptr, ptx *byte) int32
	nvrtcGetCUBINSize      func(prog uintptr, n *uintptr) int32
	nvrtcGetCUBIN          func(prog uintptr, cubin *byte) int32
}

func (a *nvrtcAPI) symbols() []symbol {
	return []symbol{
		sym(&a.nvrtcVersion, "nvrtcVersion"),
		sym(&a.nvrtcGetErrorString, "nvrtcGetErrorString"),
		sym(&a.nvrtcCreateProgram, "nvrtcCreateProgram"),
		sym(&a.nvrtcDestroyProgram, "nvrtcDestroyProgram"),
		sym(&a.nvrtcCompileProgram, "nvrtcCompileProgram"),
		sym(&a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
		sym(&a.nvrtcGetProgramLog, "nvrtcGetProgramLog"),
		sym(&a.nvrtcGetPTXSize, "nvrtcGetPTXSize"),
		sym(&a.nvrtcGetPTX, "nvrtcGetPTX"),
		// CUBIN output arrived in CUDA 11.1; without it we hand back PTX.
		opt(&a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
		opt(&a.nvrtcGetCUBIN, "nvrtcGetCUBIN"),
	}
}

func loadNVRTC(cands []string) (*nvrtcAPI, error) {
	h, path, err := dlopenFirst(cands)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w: %v", ErrNoNVRTC, err)
	}
	preloadBuiltins(path)
	a := &nvrtcAPI{path: path}
	if err := bind(h, path, a.symbols()); err != nil {
		return nil, fmt.Errorf("cuda: %w: %s is not a usable NVRTC: %v", ErrNoNVRTC, path, err)
	}
	return a, nil
}

var nvrtcOnce = sync.OnceValues(func() (*nvrtcAPI, error) { return loadNVRTC(nvrtcCandidates()) })

// NVRTCAvailable reports whether NVRTC could be loaded.
func NVRTCAvailable() error {
	_, err := nvrtcOnce()
	return err
}

// NVRTCPath is the NVRTC library that was loaded, or "" if none.
func NVRTCPath() string {
	a, _ := nvrtcOnce()
	if a == nil {
		return ""
	}
	return a.path
}

// NVRTCVersion is the NVRTC release, e.g. 13, 0.
func NVRTCVersion() (major, minor int, err error) {
	a, err := nvrtcOnce()
	if err != nil {
		return 0, 0, err
	}
	var ma, mi int32
	if err := a.check("nvrtcVersion", "", a.nvrtcVersion(&ma, &mi)); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}

func (a *nvrtcAPI) check(call, kernel string, r int32) error {
	if r == 0 {
		return nil
	}
	name := a.nvrtcGetErrorString(r)
	if name == "" {
		name = fmt.Sprintf("NVRTC_ERROR_%d", r)
	}
	return &Error{Call: call, Code: int(r), Name: name, Kernel: kernel}
}

// Compile compiles CUDA C++ source with NVRTC. name identifies the program
// in diagnostics and errors. opts are NVRTC options, e.g.
// "--gpu-architecture=sm_90a", "-std=c++17". With a real architecture (sm_*)
// the result is a CUBIN; with a virtual one (compute_*), or an NVRTC without
// CUBIN output, it is NUL-terminated PTX. Both load with LoadModule.
//
// log is the compiler's output, warnings included; on failure the error, an
// *Error, carries it too.
func Compile(source, name string, opts []string) (image []byte, log string, err error) {
	a, err := nvrtcOnce()
	if err != nil {
		return nil, "", err
	}
	progName := name
	if !strings.Contains(progName, ".") {
		progName += ".cu"
	}
	// Our own NUL-terminated copies, pinned until the program is destroyed,
	// so it does not matter whether NVRTC keeps pointers to them.
	csrc, cname := cstr.C(source), cstr.C(progName)
	var pin runtime.Pinner
	pin.Pin(&csrc[0])
	pin.Pin(&cname[0])
	defer pin.Unpin()
	var prog uintptr
	if err := a.check("nvrtcCreateProgram", name, a.nvrtcCreateProgram(&prog, &csrc[0], &cname[0], 0, nil, nil)); err != nil {
		return nil, "", err
	}
	defer a.nvrtcDestroyProgram(&prog)

	r := compileWithOptions(a, prog, opts)
	log = a.programLog(prog)
	if err := a.check("nvrtcCompileProgram", name, r); err != nil {
		e := err.(*Error)
		e.Log = log
		if len(opts) > 0 {
			e.Detail = "options " + strings.Join(opts, " ")
		}
		return nil, log, e
	}
	if a.nvrtcGetCUBINSize != nil {
		var n uintptr
		if a.nvrtcGetCUBINSize(prog, &n) == 0 && n > 0 {
			out := make([]byte, n)
			if err := a.check("nvrtcGetCUBIN", name, a.nvrtcGetCUBIN(prog, &out[0])); err != nil {
				return nil, log, err
			}
			return out, log, nil
		}
	}
	var n uintptr
	if err := a.check("nvrtcGetPTXSize", name, a.nvrtcGetPTXSize(prog, &n)); err != nil {
		return nil, log, err
	}
	if n == 0 {
		return nil, log, &Error{Call: "nvrtcGetPTX", Name: "EMPTY_OUTPUT", Kernel: name}
	}
	out := make([]byte, n) // n counts the terminating NUL the driver wants
	if err := a.check("nvrtcGetPTX", name, a.nvrtcGetPTX(prog, &out[0])); err != nil {
		return nil, log, err
	}
	return out, log, nil
}

// compileWithOptions passes opts as a pinned array of C strings.
func compileWithOptions(a *nvrtcAPI, prog uintptr, opts []string) int32 {
	if len(opts) == 0 {
		return a.nvrtcCompileProgram(prog, 0, nil)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cs := make([][]byte, len(opts))
	ptrs := make([]*byte, len(opts))
	for i, o := range opts {
		cs[i] = cstr.C(o)
		ptrs[i] = &cs[i][0]
		pin.Pin(ptrs[i])
	}
	pin.Pin(&ptrs[0])
	r := a.nvrtcCompileProgram(prog, int32(len(ptrs)), unsafe.Pointer(&ptrs[0]))
	runtime.KeepAlive(cs)
	return r
}

func (a *nvrtcAPI) programLog(prog uintptr) string {
	var n uintptr
	if a.nvrtcGetProgramLogSize(prog, &n) != 0 || n <= 1 {
		return ""
	}
	buf := make([]byte, n)
	if a.nvrtcGetProgramLog(prog, &buf[0]) != 0 {
		return ""
	}
	return string(cstr.TrimNUL(buf))
}
