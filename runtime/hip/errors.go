package hip

// Errors are values carrying the failing entry point and the HIP error name,
// because a bare numeric hipError_t is useless in a bug report and because
// the compiler above us needs to say which generated kernel failed.

import (
	"errors"
	"fmt"

	"github.com/tilego/tilego/internal/drverr"
)

// ErrNoRuntime is wrapped by errors reporting that the HIP runtime library
// could not be loaded. Test with errors.Is.
var ErrNoRuntime = errors.New("no AMD GPU runtime: libamdhip64.so not found (install ROCm)")

// ErrNoDevice is wrapped by errors reporting that the runtime loaded but no
// usable AMD GPU is present.
var ErrNoDevice = errors.New("no AMD GPU device")

// errNotOpen is returned by every call on a device that Open did not return
// (a nil or zero *Device) and on modules and functions not made on one, or
// made and closed.
var errNotOpen = errors.New("hip: no open device: use a Device from Open, and modules and functions loaded on it and not closed")

// Error is a failed HIP call.
type Error struct {
	Call   string // entry point, e.g. "hipModuleLaunchKernel"
	Code   int    // hipError_t
	Name   string // e.g. "hipErrorInvalidValue"
	Kernel string // kernel name, when the call concerned one
	Detail string // human description (hipGetErrorString) or extra context

	wrapped error // a sentinel of this package the error also is (ErrHung)
}

// Unwrap returns the sentinel the error wraps, if any.
func (e *Error) Unwrap() error { return e.wrapped }

func (e *Error) Error() string {
	return drverr.Message("hip", e.Call, e.Kernel, e.Name, e.Code, e.Detail, "")
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

// hipError_t codes this package itself looks at, from enum hipError_t in
// ROCm's include/hip/hip_runtime_api.h (same values in ROCm 5.0 to 7.x).
const (
	hipSuccess                 = 0
	hipErrorInvalidValue       = 1
	hipErrorInsufficientDriver = 35
	hipErrorNoDevice           = 100
	hipErrorInvalidImage       = 200
	hipErrorNoBinaryForGpu     = 209
	hipErrorNotReady           = 600
	codeNotSymbol              = -1 // our own: the entry point is not exported
	codeHung                   = -2 // our own: Sync gave a kernel up as hung
)

// fallbackNames names the hipError_t codes most likely to be seen, for when
// hipGetErrorName cannot be asked (tests run without the runtime). Values
// from enum hipError_t in include/hip/hip_runtime_api.h.
var fallbackNames = map[int]string{
	0:    "hipSuccess",
	1:    "hipErrorInvalidValue",
	2:    "hipErrorOutOfMemory",
	3:    "hipErrorNotInitialized",
	4:    "hipErrorDeinitialized",
	9:    "hipErrorInvalidConfiguration",
	35:   "hipErrorInsufficientDriver",
	98:   "hipErrorInvalidDeviceFunction",
	100:  "hipErrorNoDevice",
	101:  "hipErrorInvalidDevice",
	200:  "hipErrorInvalidImage",
	201:  "hipErrorInvalidContext",
	209:  "hipErrorNoBinaryForGpu",
	218:  "hipErrorInvalidKernelFile",
	302:  "hipErrorSharedObjectSymbolNotFound",
	400:  "hipErrorInvalidHandle",
	500:  "hipErrorNotFound",
	600:  "hipErrorNotReady",
	700:  "hipErrorIllegalAddress",
	701:  "hipErrorLaunchOutOfResources",
	702:  "hipErrorLaunchTimeOut",
	710:  "hipErrorAssert",
	719:  "hipErrorLaunchFailure",
	720:  "hipErrorCooperativeLaunchTooLarge",
	801:  "hipErrorNotSupported",
	999:  "hipErrorUnknown",
	1052: "hipErrorRuntimeMemory",
	1053: "hipErrorRuntimeOther",
}

// errorName returns the symbolic name and description of a hipError_t,
// asking the runtime when it is loaded.
func errorName(api *hipAPI, code int32) (name, detail string) {
	if api != nil && api.hipGetErrorName != nil {
		name = api.hipGetErrorName(code)
		detail = api.hipGetErrorString(code)
	}
	// The runtime names every code it does not know hipErrorUnknown.
	if name == "" || (name == "hipErrorUnknown" && code != 999) {
		name = fallbackNames[int(code)]
		if name == "" {
			name = fmt.Sprintf("hipError%d", code)
		}
	}
	return name, detail
}

// check turns a hipError_t into nil or an *Error for call.
func (api *hipAPI) check(call string, r int32) error {
	return api.checkKernel(call, "", r)
}

// checkKernel is check for calls that concern a named kernel.
func (api *hipAPI) checkKernel(call, kernel string, r int32) error {
	if r == hipSuccess {
		return nil
	}
	name, detail := errorName(api, r)
	return &Error{Call: call, Code: int(r), Name: name, Kernel: kernel, Detail: detail}
}

// missing is the error for an optional entry point this runtime lacks.
func missing(call string) error {
	return &Error{Call: call, Code: codeNotSymbol, Name: "SYMBOL_NOT_FOUND",
		Detail: "the installed HIP runtime does not export this entry point"}
}
