package cuda

import (
	"errors"
	"fmt"
	"testing"

	drv "github.com/tilego/tilego/runtime/cuda"
)

func TestDeviceLost(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&drv.Error{Call: "cuCtxSynchronize", Code: 700}, true},
		{fmt.Errorf("kernel k: %w", &drv.Error{Call: "cuCtxSynchronize", Code: 719}), true},
		{&drv.Error{Call: "cuLaunchKernel", Code: 1}, false}, // invalid value: the context survives
		{&drv.Error{Call: "cuMemAlloc_v2", Code: 2}, false},  // out of memory
		{errors.New("no GPU"), false},
		{nil, false},
	} {
		if got := DeviceLost(tc.err); got != tc.want {
			t.Errorf("DeviceLost(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOutOfMemory(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&drv.Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY"}, true},
		{fmt.Errorf("chain step 0: %w", &drv.Error{Call: "cuMemAlloc_v2", Code: 2}), true},
		{&drv.Error{Call: "cuCtxSynchronize", Code: 700}, false},
		{errors.New("out of memory"), false}, // not the driver's
		{nil, false},
	} {
		if got := OutOfMemory(tc.err); got != tc.want {
			t.Errorf("OutOfMemory(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
