package cuda

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
			name: "driver call",
			err:  &Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Detail: "out of memory"},
			want: []string{"cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"},
			not:  []string{"kernel"},
		},
		{
			name: "launch names kernel",
			err:  &Error{Call: "cuLaunchKernel", Code: 1, Name: "CUDA_ERROR_INVALID_VALUE", Kernel: "saxpy"},
			want: []string{"cuLaunchKernel", `kernel "saxpy"`, "CUDA_ERROR_INVALID_VALUE (1)"},
		},
		{
			name: "compiler log",
			err: &Error{Call: "nvrtcCompileProgram", Code: 6, Name: "NVRTC_ERROR_COMPILATION", Kernel: "bad",
				Log: "bad.cu(3): error: identifier \"x\" is undefined\n\n"},
			want: []string{"NVRTC_ERROR_COMPILATION (6)", "\nbad.cu(3): error: identifier \"x\" is undefined"},
		},
		{
			name: "no name",
			err:  &Error{Call: "cuInit", Code: 12345},
			want: []string{"cuInit: unknown error (12345)"},
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
			if strings.HasSuffix(msg, "\n") {
				t.Errorf("message %q ends in a newline", msg)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	var err error = &Error{Call: "cuLaunchKernel", Code: 1, Name: "CUDA_ERROR_INVALID_VALUE", Kernel: "k"}
	if !errors.Is(err, &Error{Code: 1}) {
		t.Error("errors.Is by code failed")
	}
	if !errors.Is(err, &Error{Call: "cuLaunchKernel", Code: 1}) {
		t.Error("errors.Is by call and code failed")
	}
	if errors.Is(err, &Error{Call: "cuMemAlloc_v2", Code: 1}) || errors.Is(err, &Error{Code: 2}) {
		t.Error("errors.Is matched a different error")
	}
	var e *Error
	if !errors.As(err, &e) || e.Kernel != "k" {
		t.Error("errors.As failed")
	}
}

func TestCheckWithoutDriver(t *testing.T) {
	var api *driverAPI // names come from the fallback table
	if err := api.check("cuMemFree_v2", 0); err != nil {
		t.Fatalf("success turned into %v", err)
	}
	tests := []struct {
		code int32
		name string
	}{
		{1, "CUDA_ERROR_INVALID_VALUE"},
		{700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{4242, "CUDA_ERROR_4242"},
	}
	for _, tt := range tests {
		err := api.checkKernel("cuLaunchKernel", "gemm", tt.code)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("code %d: got %T", tt.code, err)
		}
		if e.Name != tt.name || e.Code != int(tt.code) || e.Kernel != "gemm" || e.Call != "cuLaunchKernel" {
			t.Errorf("code %d: got %+v", tt.code, e)
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
	want := &Error{Call: "cuCtxSynchronize", Code: 700}
	if err := waitWithin(time.Minute, func() error { return want }); err != want {
		t.Errorf("quick wait: got %v, want its own error", err)
	}
	if err := waitWithin(0, func() error { return nil }); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if errors.Is(want, ErrHung) {
		t.Error("a driver error reads as hung")
	}
}

// After a hung kernel, a call on the device fails at once instead of
// reaching the driver (where a free or a copy would wait on the kernel).
func TestHungDeviceFailsFast(t *testing.T) {
	d := &Device{hung: true}
	err := d.do(func() error {
		t.Error("the call reached the driver")
		return nil
	})
	if !errors.Is(err, ErrHung) || !strings.Contains(err.Error(), "an earlier kernel hung") {
		t.Errorf("got %v, want ErrHung naming the earlier kernel", err)
	}
}
