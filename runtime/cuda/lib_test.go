package cuda

import (
	"errors"
	"strings"
	"testing"
)

// withDriver swaps in a fresh lazy loader using cands for one test.
func withDriver(t *testing.T, cands []string) {
	t.Helper()
	old := driverState.Load()
	driverState.Store(&lazyDriver{cands: func() []string { return cands }})
	t.Cleanup(func() { driverState.Store(old) })
}

func TestAvailableWithoutDriver(t *testing.T) {
	withDriver(t, []string{"/nonexistent/libcuda.so.1"})
	err := Available()
	if err == nil {
		t.Fatal("Available succeeded with no driver")
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Errorf("error %v does not wrap ErrNoDriver", err)
	}
	if !strings.Contains(err.Error(), "no CUDA driver (libcuda.so.1 not found)") {
		t.Errorf("unclear message: %v", err)
	}
	if _, err := Open(0); !errors.Is(err, ErrNoDriver) {
		t.Errorf("Open: got %v", err)
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNoDriver) {
		t.Errorf("DriverVersion: got %v", err)
	}
	if p := DriverPath(); p != "" {
		t.Errorf("DriverPath = %q", p)
	}
}

func TestNotADriver(t *testing.T) {
	// libc loads but exports no cuInit: a broken or wrong library must
	// give an error, not a panic from purego.
	withDriver(t, []string{"libc.so.6"})
	err := Available()
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "does not export cuInit") {
		t.Errorf("got %v", err)
	}
}

func TestDriverEnvOverride(t *testing.T) {
	t.Setenv("TILEGO_LIBCUDA", "/opt/x/libcuda.so.1")
	if c := driverCandidates(); len(c) != 1 || c[0] != "/opt/x/libcuda.so.1" {
		t.Errorf("candidates = %v", c)
	}
	t.Setenv("TILEGO_LIBCUDA", "")
	if c := driverCandidates(); c[0] != "libcuda.so.1" {
		t.Errorf("default candidates = %v", c)
	}
}

func TestNVRTCMissing(t *testing.T) {
	_, err := loadNVRTC([]string{"/nonexistent/libnvrtc.so.13"})
	if !errors.Is(err, ErrNoNVRTC) || !strings.Contains(err.Error(), "libnvrtc") {
		t.Errorf("got %v", err)
	}
	t.Setenv("TILEGO_NVRTC", "/opt/nvrtc/libnvrtc.so.13")
	if c := nvrtcCandidates(); len(c) != 1 || c[0] != "/opt/nvrtc/libnvrtc.so.13" {
		t.Errorf("candidates = %v", c)
	}
	t.Setenv("TILEGO_NVRTC", "")
	if c := nvrtcCandidates(); c[0] != "libnvrtc.so.13" {
		t.Errorf("default candidates = %v", c)
	}
}
