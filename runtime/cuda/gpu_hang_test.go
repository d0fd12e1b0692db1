//go:build gpu

package cuda

import (
	"errors"
	"os"
	"testing"
	"time"
)

// A kernel that never finishes (it waits on a flag nobody sets, as a
// wrong barrier phase would) is given up as hung by Sync, with the
// kernel's name, and every later call on the device fails at once. It
// leaves the device unusable for the rest of the process, so it runs only
// when TILEGO_TEST_HANG=1, alone (scripts/gpu-suite.sh does).
func TestGPUHangIsReported(t *testing.T) {
	if os.Getenv("TILEGO_TEST_HANG") != "1" {
		t.Skip("set TILEGO_TEST_HANG=1 to run (it leaves the device unusable)")
	}
	if err := Available(); err != nil {
		t.Skipf("CUDA not available: %v", err)
	}
	d, err := Open(0) // never closed: releasing the context would wait on the kernel
	if err != nil {
		t.Fatal(err)
	}
	const src = `extern "C" __global__ void spin(volatile int* flag) { while (*flag == 0) {} }`
	img := compileOrFail(t, src, "spin")
	m, err := d.LoadModule(img)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := m.Function("spin")
	if err != nil {
		t.Fatal(err)
	}
	flag, err := d.Alloc(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CopyHtoD(flag, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	saved := HangAfter
	HangAfter = 2 * time.Second
	defer func() { HangAfter = saved }()
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, nil, flag); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	err = Sync(fn, nil)
	var e *Error
	if !errors.Is(err, ErrHung) || !errors.As(err, &e) || e.Kernel != "spin" {
		t.Fatalf("Sync: %v, want ErrHung naming kernel spin", err)
	}
	if dt := time.Since(t0); dt < HangAfter || dt > HangAfter+5*time.Second {
		t.Errorf("Sync gave up after %v, want about %v", dt, HangAfter)
	}
	t.Log(err)
	t0 = time.Now()
	if err := d.Free(flag); !errors.Is(err, ErrHung) {
		t.Errorf("Free after the hang: %v, want ErrHung", err)
	}
	if dt := time.Since(t0); dt > time.Second {
		t.Errorf("Free after the hang took %v; it should fail at once", dt)
	}
}
