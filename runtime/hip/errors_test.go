package hip

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want []string
		not  []string
	}{
		{
			name: "runtime call",
			err:  &Error{Call: "hipMalloc", Code: 2, Name: "hipErrorOutOfMemory", Detail: "out of memory"},
			want: []string{"hip: hipMalloc: hipErrorOutOfMemory (2): out of memory"},
			not:  []string{"kernel"},
		},
		{
			name: "launch names kernel",
			err:  &Error{Call: "hipModuleLaunchKernel", Code: 1, Name: "hipErrorInvalidValue", Kernel: "saxpy"},
			want: []string{"hipModuleLaunchKernel", `kernel "saxpy"`, "hipErrorInvalidValue (1)"},
		},
		{
			name: "no name",
			err:  &Error{Call: "hipInit", Code: 12345},
			want: []string{"hipInit: unknown error (12345)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(msg, n) {
					t.Errorf("message %q should not contain %q", msg, n)
				}
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	var err error = &Error{Call: "hipModuleLaunchKernel", Code: 1, Name: "hipErrorInvalidValue", Kernel: "k"}
	if !errors.Is(err, &Error{Code: 1}) {
		t.Error("errors.Is by code failed")
	}
	if !errors.Is(err, &Error{Call: "hipModuleLaunchKernel", Code: 1}) {
		t.Error("errors.Is by call and code failed")
	}
	if errors.Is(err, &Error{Call: "hipMalloc", Code: 1}) || errors.Is(err, &Error{Code: 2}) {
		t.Error("errors.Is matched a different error")
	}
	var e *Error
	if !errors.As(err, &e) || e.Kernel != "k" {
		t.Error("errors.As failed")
	}
}

func TestCheckWithoutRuntime(t *testing.T) {
	var api *hipAPI // names come from the fallback table
	if err := api.check("hipFree", 0); err != nil {
		t.Fatalf("success turned into %v", err)
	}
	tests := []struct {
		code int32
		name string
	}{
		{1, "hipErrorInvalidValue"},
		{700, "hipErrorIllegalAddress"},
		{4242, "hipError4242"},
	}
	for _, tt := range tests {
		err := api.checkKernel("hipModuleLaunchKernel", "gemm", tt.code)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("code %d: got %T", tt.code, err)
		}
		if e.Name != tt.name || e.Code != int(tt.code) || e.Kernel != "gemm" || e.Call != "hipModuleLaunchKernel" {
			t.Errorf("code %d: got %+v", tt.code, e)
		}
	}
}

// With a runtime, names and descriptions come from hipGetErrorName and
// hipGetErrorString; a code the runtime calls hipErrorUnknown keeps its
// number in the name.
func TestCheckWithRuntime(t *testing.T) {
	api := fakeAPI(&fakeGPU{}, false)
	api.hipGetErrorName = func(code int32) string {
		if code == 1 {
			return "hipErrorInvalidValue"
		}
		return "hipErrorUnknown"
	}
	api.hipGetErrorString = func(code int32) string { return "described" }
	for _, tt := range []struct {
		code int32
		name string
	}{{1, "hipErrorInvalidValue"}, {999, "hipErrorUnknown"}, {700, "hipErrorIllegalAddress"}, {4242, "hipError4242"}} {
		var e *Error
		if !errors.As(api.check("hipMalloc", tt.code), &e) || e.Name != tt.name || e.Detail != "described" {
			t.Errorf("code %d: got %+v, want name %s", tt.code, e, tt.name)
		}
	}
}

// A wait that outlasts its limit comes back as a hung kernel, naming the
// limit; one that returns in time passes its own result through.
func TestWaitWithin(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	err := waitWithin(20*time.Millisecond, func() error { <-block; return nil })
	if !errors.Is(err, ErrHung) {
		t.Fatalf("blocked wait: got %v, want ErrHung", err)
	}
	if !strings.Contains(err.Error(), "no completion after 20ms") {
		t.Errorf("message %q does not name the limit", err)
	}
	want := &Error{Call: "hipDeviceSynchronize", Code: 700}
	if err := waitWithin(time.Minute, func() error { return want }); err != want {
		t.Errorf("quick wait: got %v, want its own error", err)
	}
	if err := waitWithin(0, func() error { return nil }); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if errors.Is(want, ErrHung) {
		t.Error("a runtime error reads as hung")
	}
}

// After a hung kernel, a call on the device fails at once instead of
// reaching the runtime (where a free or a copy would wait on the kernel).
func TestHungDeviceFailsFast(t *testing.T) {
	d := &Device{api: &hipAPI{}, hung: true}
	err := d.do(func() error {
		t.Error("the call reached the runtime")
		return nil
	})
	if !errors.Is(err, ErrHung) || !strings.Contains(err.Error(), "an earlier kernel hung") {
		t.Errorf("got %v, want ErrHung naming the earlier kernel", err)
	}
}
