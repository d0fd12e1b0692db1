package hip

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withCandidates swaps in a fresh lazy loader trying cands, for one test.
func withCandidates(t *testing.T, cands []string) {
	t.Helper()
	old := runtimeState.Load()
	runtimeState.Store(&lazyRuntime{cands: func() []string { return cands }})
	t.Cleanup(func() { runtimeState.Store(old) })
}

const noRuntimeMsg = "no AMD GPU runtime: libamdhip64.so not found (install ROCm)"

func TestAvailableWithoutRuntime(t *testing.T) {
	withCandidates(t, []string{"/nonexistent/libamdhip64.so.6"})
	err := Available()
	if err == nil {
		t.Fatal("Available succeeded with no runtime")
	}
	if !errors.Is(err, ErrNoRuntime) {
		t.Errorf("error %v does not wrap ErrNoRuntime", err)
	}
	if !strings.Contains(err.Error(), noRuntimeMsg) || !strings.Contains(err.Error(), "/nonexistent/libamdhip64.so.6") {
		t.Errorf("unclear message: %v", err)
	}
	if _, err := Open(0); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("Open: got %v", err)
	}
	if _, err := RuntimeVersion(); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("RuntimeVersion: got %v", err)
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("DriverVersion: got %v", err)
	}
	if _, err := DeviceCount(); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("DeviceCount: got %v", err)
	}
	if p := RuntimePath(); p != "" {
		t.Errorf("RuntimePath = %q", p)
	}
}

// With the real search (this machine's loader path and ROCm folders),
// Available either works or says why not; it never panics.
func TestAvailableDefaultSearch(t *testing.T) {
	withCandidates(t, runtimeCandidates())
	err := Available()
	if err == nil {
		t.Skipf("HIP is available here (%s)", RuntimePath())
	}
	if !errors.Is(err, ErrNoRuntime) && !errors.Is(err, ErrNoDevice) {
		t.Errorf("got %v, want ErrNoRuntime or ErrNoDevice", err)
	}
	if errors.Is(err, ErrNoRuntime) && !strings.HasPrefix(err.Error(), "hip: "+noRuntimeMsg) {
		t.Errorf("message %q does not start with the plain reason", err)
	}
}

func TestNotAHIPRuntime(t *testing.T) {
	// libc loads but exports no hipInit: a wrong library must give an
	// error, not a panic from purego.
	withCandidates(t, []string{"libc.so.6"})
	err := Available()
	if !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), "does not export hipInit") {
		t.Errorf("got %v", err)
	}
}

func TestNotALibrary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "libamdhip64.so.6")
	if err := os.WriteFile(p, []byte("not an ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	withCandidates(t, []string{p})
	if err := Available(); !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), p) {
		t.Errorf("got %v", err)
	}
}

func TestRuntimeCandidates(t *testing.T) {
	t.Setenv("TILEGO_LIBAMDHIP", "/opt/x/libamdhip64.so.6")
	if c := runtimeCandidates(); len(c) != 1 || c[0] != "/opt/x/libamdhip64.so.6" {
		t.Errorf("override: candidates = %v", c)
	}
	t.Setenv("TILEGO_LIBAMDHIP", "")

	rocm, hip := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(rocm, "lib", "libamdhip64.so.6"), filepath.Join(hip, "lib", "libamdhip64.so.5")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("ROCM_PATH", rocm)
	t.Setenv("HIP_PATH", hip)
	c := runtimeCandidates()
	if c[0] != "libamdhip64.so.7" {
		t.Errorf("first candidate %q, want the newest soname on the loader path", c[0])
	}
	i6 := slices.Index(c, "libamdhip64.so.6")
	r6 := slices.Index(c, filepath.Join(rocm, "lib", "libamdhip64.so.6"))
	h5 := slices.Index(c, filepath.Join(hip, "lib", "libamdhip64.so.5"))
	if i6 < 0 || r6 != i6+1 {
		t.Errorf("$ROCM_PATH/lib/libamdhip64.so.6 should follow the bare .so.6: %v", c)
	}
	if h5 < 0 || h5 < r6 {
		t.Errorf("$HIP_PATH/lib/libamdhip64.so.5 should come after the .so.6 candidates: %v", c)
	}
}

// A runtime that loads but reports no device is ErrNoDevice, and
// DeviceCount then says 0 without an error.
func TestNoDevice(t *testing.T) {
	for _, r := range []int32{hipErrorNoDevice, hipErrorInsufficientDriver} {
		api := fakeAPI(&fakeGPU{}, false)
		api.hipInit = func(uint32) int32 { return r }
		s := &lazyRuntime{cands: func() []string { return nil }}
		// loadRuntime's checks after dlopen, on the fake table.
		s.once.Do(func() { s.api, s.err = initRuntime(api) })
		old := runtimeState.Load()
		runtimeState.Store(s)
		err := Available()
		n, nerr := DeviceCount()
		runtimeState.Store(old)
		if !errors.Is(err, ErrNoDevice) {
			t.Errorf("hipInit %d: got %v, want ErrNoDevice", r, err)
		}
		if n != 0 || nerr != nil {
			t.Errorf("hipInit %d: DeviceCount = %d, %v", r, n, nerr)
		}
	}
	api := fakeAPI(&fakeGPU{}, false)
	api.hipGetDeviceCount = func(n *int32) int32 { *n = 0; return hipSuccess }
	if _, err := initRuntime(api); !errors.Is(err, ErrNoDevice) {
		t.Errorf("0 devices: got %v", err)
	}
}
