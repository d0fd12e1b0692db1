package cuda

// Errors are values carrying the failing entry point and the CUDA error name,
// because a bare numeric CUresult is useless in a bug report and because the
// compiler above us needs to say which generated kernel failed.

import (
	"errors"
	"fmt"

	"github.com/tilego/tilego/internal/cstr"
	"github.com/tilego/tilego/internal/drverr"
)

// ErrNoDriver is wrapped by errors reporting that the CUDA driver library
// could not be loaded. Test with errors.Is.
var ErrNoDriver = errors.New("no CUDA driver (libcuda.so.1 not found)")

// ErrNoDevice is wrapped by errors reporting that the driver loaded but no
// usable GPU is present.
var ErrNoDevice = errors.New("no CUDA device")

// ErrNoNVRTC is wrapped by errors reporting that no NVRTC library was found.
var ErrNoNVRTC = errors.New("no NVRTC (libnvrtc.so not found)")

// Error is a failed CUDA driver or NVRTC call.
type Error struct {
	Call   string // entry point, e.g. "cuLaunchKernel" or "nvrtcCompileProgram"
	Code   int    // CUresult or nvrtcResult
	Name   string // e.g. "CUDA_ERROR_INVALID_VALUE" or "NVRTC_ERROR_COMPILATION"
	Kernel string // kernel or program name, when the call concerned one
	Detail string // human description (cuGetErrorString) or extra context
	Log    string // compiler or JIT log, when there is one

	wrapped error // a sentinel of this package the error also is (ErrHung)
}

// Unwrap returns the sentinel the error wraps, if any.
func (e *Error) Unwrap() error { return e.wrapped }

func (e *Error) Error() string {
	return drverr.Message("cuda", e.Call, e.Kernel, e.Name, e.Code, e.Detail, e.Log)
}

// Is lets errors.Is match an *Error by call and code when the target leaves
// the other fields empty, e.g. &Error{Code: 1}.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return (t.Call == "" || t.Call == e.Call) && t.Code == e.Code
}

// Driver result codes this package itself looks at.
const (
	resultSuccess       = 0
	resultInvalidValue  = 1
	resultNoDevice      = 100
	resultNotReady      = 600
	resultNotSymbolCode = -1 // our own: the entry point is not exported
	codeHung            = -2 // our own: Sync gave a kernel up as hung
)

// fallbackNames covers the results most likely to be seen when cuGetErrorName
// itself is unusable (it is always exported, but tests run without a driver).
var fallbackNames = map[int]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	35:  "CUDA_ERROR_INSUFFICIENT_DRIVER",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	218: "CUDA_ERROR_INVALID_PTX",
	400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	999: "CUDA_ERROR_UNKNOWN",
}

// errorName returns the symbolic name of a CUresult, asking the driver when
// it is loaded.
func errorName(api *driverAPI, code int32) (name, detail string) {
	if api != nil {
		var p *byte
		if api.cuGetErrorName(code, &p) == resultSuccess && p != nil {
			name = cstr.Go(p)
		}
		p = nil
		if api.cuGetErrorString(code, &p) == resultSuccess && p != nil {
			detail = cstr.Go(p)
		}
	}
	if name == "" {
		name = fallbackNames[int(code)]
	}
	if name == "" {
		name = fmt.Sprintf("CUDA_ERROR_%d", code)
	}
	return name, detail
}

// check turns a CUresult into nil or an *Error for call.
func (api *driverAPI) check(call string, r int32) error {
	return api.checkKernel(call, "", r)
}

// checkKernel is check for calls that concern a named kernel.
func (api *driverAPI) checkKernel(call, kernel string, r int32) error {
	if r == resultSuccess {
		return nil
	}
	name, detail := errorName(api, r)
	return &Error{Call: call, Code: int(r), Name: name, Kernel: kernel, Detail: detail}
}

// missing is the error for an optional entry point this driver lacks.
func missing(call string) error {
	return &Error{Call: call, Code: resultNotSymbolCode, Name: "SYMBOL_NOT_FOUND",
		Detail: "the installed driver does not export this entry point"}
}
