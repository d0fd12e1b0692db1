//go:build gpu

package cuda

// GPU tests: build with -tags gpu. They skip when Available fails, so the
// tagged binary is still safe to run on a machine without CUDA.

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

const saxpySrc = `
extern "C" __global__ void saxpy(float* out, const float* x, const float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Explicit roundings forbid FMA contraction so the CPU check is exact.
  if (i < n) out[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}
`

func openOrSkip(t *testing.T) *Device {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("CUDA not available: %v", err)
	}
	d, err := Open(0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func compileOrFail(t *testing.T, src, name string, opts ...string) []byte {
	t.Helper()
	img, log, err := Compile(src, name, opts)
	if err != nil {
		t.Fatalf("Compile %s: %v (NVRTC candidates %v)", name, err, nvrtcCandidates())
	}
	if strings.TrimSpace(log) != "" {
		t.Logf("NVRTC log for %s:\n%s", name, log)
	}
	return img
}

func loadFunc(t *testing.T, d *Device, img []byte, name string) *Function {
	t.Helper()
	m, err := d.LoadModule(img)
	if err != nil {
		t.Fatalf("LoadModule: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	f, err := m.Function(name)
	if err != nil {
		t.Fatalf("Function(%q): %v", name, err)
	}
	return f
}

func TestGPUDeviceInfo(t *testing.T) {
	d := openOrSkip(t)
	dv, err := DriverVersion()
	if err != nil {
		t.Fatal(err)
	}
	free, total, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver %s, CUDA %d.%d", DriverPath(), dv/1000, dv%1000/10)
	t.Logf("device 0: %s", d)
	t.Logf("  arch %s / %s, SMs %d, warp %d, max threads/block %d, regs/block %d",
		d.Arch(), d.ArchSpecific(), d.SMCount, d.WarpSize, d.MaxThreadsPerBlock, d.MaxRegistersPerBlock)
	t.Logf("  smem/block %d, opt-in %d, per SM %d; L2 %d B; mem %d MiB (free %d MiB); clock %d kHz, mem clock %d kHz, bus %d bits",
		d.SharedPerBlock, d.SharedPerBlockOptin, d.SharedPerSM, d.L2Bytes, total>>20, free>>20,
		d.ClockKHz, d.MemClockKHz, d.MemBusWidth)
	if maj, min, err := NVRTCVersion(); err != nil {
		t.Errorf("NVRTC: %v", err)
	} else {
		t.Logf("NVRTC %d.%d from %s", maj, min, NVRTCPath())
	}
	if d.Major == 0 || d.SMCount == 0 || d.TotalMem == 0 || d.L2Bytes == 0 || d.SharedPerBlockOptin < d.SharedPerBlock {
		t.Errorf("implausible properties: %+v", d)
	}
}

func TestGPUMemoryRoundTrip(t *testing.T) {
	d := openOrSkip(t)
	const n = 1<<20 + 13
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(rand.IntN(256))
	}
	a, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	if err := d.CopyHtoD(a, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := d.CopyDtoH(got, a); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("HtoD/DtoH round trip differs")
	}
	if err := d.CopyDtoD(b, a); err != nil {
		t.Fatal(err)
	}
	clear(got)
	if err := d.CopyDtoH(got, b); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("DtoD copy differs (%v)", err)
	}
	mid, _ := b.Slice(100, 1000)
	if err := d.MemsetD8(mid, 0xAB); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyDtoH(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := src[i]
		if i >= 100 && i < 1100 {
			want = 0xAB
		}
		if got[i] != want {
			t.Fatalf("byte %d = %#x after memset of a slice, want %#x", i, got[i], want)
		}
	}
	if err := d.CopyHtoD(a, make([]byte, n+1)); err == nil {
		t.Error("oversized copy accepted")
	}
}

func TestGPUSaxpy(t *testing.T) {
	d := openOrSkip(t)
	img := compileOrFail(t, saxpySrc, "saxpy", "--gpu-architecture="+d.Arch())
	if !bytes.HasPrefix(img, []byte("\x7fELF")) {
		t.Errorf("expected a CUBIN for %s, got %q...", d.Arch(), img[:min(16, len(img))])
	}
	fn := loadFunc(t, d, img, "saxpy")
	info, err := fn.Info()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("saxpy: %+v", info)

	const n, guard = 1<<20 + 3, 256
	const a = float32(2.5)
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = rand.Float32()*2-1, rand.Float32()*2-1
	}
	dx, err := Upload(d, x)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(dx)
	dy, err := Upload(d, y)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(dy)
	out, err := d.Alloc(4 * (n + guard))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(out)

	// Poison, and prove the poison is there, so unwritten outputs fail.
	if err := d.MemsetD8(out, 0xFF); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, out.Size)
	if err := d.CopyDtoH(raw, out); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(raw, []byte{0xFF}) != len(raw) {
		t.Fatal("output not poisoned by MemsetD8")
	}

	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	grid := [3]int{(n + 255) / 256, 1, 1}
	if err := Launch(fn, grid, [3]int{256, 1, 1}, 0, s, out, dx, dy, a, int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := Sync(fn, s); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n+guard)
	if err := CopyFromDevice(d, got, out); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range n {
		if want := float32(a*x[i]) + y[i]; got[i] != want {
			if bad++; bad <= 5 {
				t.Errorf("out[%d] = %v, want %v", i, got[i], want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, n)
	}
	if g := Bytes(got[n:]); bytes.Count(g, []byte{0xFF}) != len(g) {
		t.Error("kernel wrote past n into the guard region")
	}

	// Timing with events, on the default stream this time.
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()
	const reps = 20
	if err := start.Record(nil); err != nil {
		t.Fatal(err)
	}
	for range reps {
		if err := Launch(fn, grid, [3]int{256, 1, 1}, 0, nil, out, dx, dy, a, int32(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := end.Record(nil); err != nil {
		t.Fatal(err)
	}
	ms, err := ElapsedTime(start, end)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(ms) / reps
	t.Logf("saxpy n=%d: %.1f us/launch, %.0f GB/s", n, per*1e3, 12*float64(n)/(per*1e-3)/1e9)
	if ms <= 0 {
		t.Errorf("elapsed %v ms", ms)
	}
}

func TestGPUErrors(t *testing.T) {
	d := openOrSkip(t)
	_, log, err := Compile("extern \"C\" __global__ void broken(float* p) { p[0] = undefined_thing; }",
		"broken", []string{"--gpu-architecture=" + d.Arch()})
	var e *Error
	if !errors.As(err, &e) || e.Call != "nvrtcCompileProgram" || e.Kernel != "broken" {
		t.Fatalf("bad source: got %v", err)
	}
	if !strings.Contains(log, "undefined_thing") || !strings.Contains(err.Error(), "undefined_thing") {
		t.Errorf("compile error lacks the NVRTC log: %v", err)
	}
	t.Logf("compile error reads:\n%v", err)

	fn := loadFunc(t, d, compileOrFail(t, saxpySrc, "saxpy", "--gpu-architecture="+d.Arch()), "saxpy")
	err = Launch(fn, [3]int{1, 1, 1}, [3]int{4096, 1, 1}, 0, nil, uint64(0), uint64(0), uint64(0), float32(1), int32(0))
	if !errors.As(err, &e) || e.Call != "cuLaunchKernel" || e.Kernel != "saxpy" || !strings.Contains(err.Error(), "saxpy") {
		t.Fatalf("absurd block: got %v", err)
	}
	t.Logf("launch error reads: %v", err)
	if _, err := fn.m.Function("no_such_kernel"); !errors.As(err, &e) || e.Kernel != "no_such_kernel" {
		t.Errorf("missing function: got %v", err)
	}
	if _, err := Upload(d, []float32{}); err == nil {
		t.Error("zero-size upload accepted")
	}
	// A bad launch configuration is not sticky: the context still works.
	if err := d.Synchronize(); err != nil {
		t.Errorf("context broken after a rejected launch: %v", err)
	}
}
