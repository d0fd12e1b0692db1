package drverr

import "testing"

func TestMessage(t *testing.T) {
	for _, c := range []struct {
		api, call, kernel, name string
		code                    int
		detail, log, want       string
	}{
		{"cuda", "cuLaunchKernel", "k", "CUDA_ERROR_INVALID_VALUE", 1, "invalid argument", "", `cuda: cuLaunchKernel (kernel "k"): CUDA_ERROR_INVALID_VALUE (1): invalid argument`},
		{"hip", "hipInit", "", "", 999, "", "", "hip: hipInit: unknown error (999)"},
		{"cuda", "nvrtcCompileProgram", "p", "NVRTC_ERROR_COMPILATION", 6, "", "  line 3: error\n", "cuda: nvrtcCompileProgram (kernel \"p\"): NVRTC_ERROR_COMPILATION (6)\nline 3: error"},
	} {
		if got := Message(c.api, c.call, c.kernel, c.name, c.code, c.detail, c.log); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
