//go:build hip

package hip

// Real-device tests: build with -tags hip. They skip when Available fails,
// so the tagged binary is still safe to run on a machine without ROCm.
// The kernels are testdata/kernels.hsaco, built for gfx942 (MI300X).

import (
	"math"
	"slices"
	"testing"
)

func openOrSkip(t *testing.T) *Device {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("HIP not available: %v", err)
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
	v, _ := RuntimeVersion()
	t.Logf("%v via %s (HIP %d); warp %d, LDS/block %d, L2 %d, clock %d kHz",
		d, RuntimePath(), v, d.WarpSize, d.LDSPerBlock, d.L2Bytes, d.ClockKHz)
	return d
}

// loadKernels loads testdata/kernels.hsaco, skipping on a GPU it was not
// built for.
func loadKernels(t *testing.T, d *Device) *Module {
	t.Helper()
	if d.Arch() != "gfx942" {
		t.Skipf("testdata/kernels.hsaco is built for gfx942, device is %s", d.ArchName)
	}
	m, err := d.LoadModule(readKernels(t))
	if err != nil {
		t.Fatalf("LoadModule: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("module Close: %v", err)
		}
	})
	return m
}

func TestGPUDevice(t *testing.T) {
	d := openOrSkip(t)
	if d.WarpSize != 64 && d.WarpSize != 32 {
		t.Errorf("warp size %d", d.WarpSize)
	}
	if d.CUCount <= 0 || d.LDSPerBlock <= 0 || d.TotalMem == 0 || d.MaxThreadsPerBlock < 256 {
		t.Errorf("implausible properties: %+v", d)
	}
	if d.Arch() == "gfx942" && (d.WarpSize != 64 || d.LDSPerBlock != 64<<10) {
		t.Errorf("gfx942 with warp %d and %d B of LDS per block", d.WarpSize, d.LDSPerBlock)
	}
	if n, err := DeviceCount(); err != nil || n < 1 {
		t.Errorf("DeviceCount = %d, %v", n, err)
	}
	if free, total, err := d.MemInfo(); err != nil || free == 0 || free > total {
		t.Errorf("MemInfo = %d, %d, %v", free, total, err)
	}
}

func TestGPUMemory(t *testing.T) {
	d := openOrSkip(t)
	src := make([]float32, 1<<20)
	for i := range src {
		src[i] = float32(i) * 0.25
	}
	a, err := Upload(d, src)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(a)
	b, err := d.Alloc(a.Size)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	if err := d.MemsetD8(b, 0xff); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 4)
	if err := CopyFromDevice(d, got, b); err != nil || got[0] != math.MaxUint32 {
		t.Errorf("after MemsetD8: %x, %v", got, err)
	}
	if err := d.CopyDtoD(b, a); err != nil {
		t.Fatal(err)
	}
	back := make([]float32, len(src))
	if err := CopyFromDevice(d, back, b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, src) {
		t.Error("round trip through two buffers changed the data")
	}
}

func TestGPUIota(t *testing.T) {
	d := openOrSkip(t)
	m := loadKernels(t, d)
	fn, err := m.Function("iota")
	if err != nil {
		t.Fatal(err)
	}
	info, err := fn.Info()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iota: %+v", info)
	const n = 100_003
	out, err := d.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(out)
	d.MemsetD8(out, 0xff)
	if err := Launch(fn, [3]int{(n + 255) / 256, 1, 1}, [3]int{256, 1, 1}, 0, nil, out, int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, n)
	if err := CopyFromDevice(d, got, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int32(i) {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
}

func TestGPUScalarsAndStream(t *testing.T) {
	d := openOrSkip(t)
	m := loadKernels(t, d)
	fn, err := m.Function("axpb")
	if err != nil {
		t.Fatal(err)
	}
	const n = 4096
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	xb, err := Upload(d, x)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(xb)
	yb, _ := d.Alloc(4 * n)
	defer d.Free(yb)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()
	start.Record(s)
	if err := Launch(fn, [3]int{n / 64, 1, 1}, [3]int{64, 1, 1}, 0, s, yb, xb, float32(2), float32(-3), int64(n)); err != nil {
		t.Fatal(err)
	}
	end.Record(s)
	if err := Sync(fn, s); err != nil {
		t.Fatal(err)
	}
	ms, err := ElapsedTime(start, end)
	if err != nil || ms < 0 {
		t.Errorf("ElapsedTime = %v, %v", ms, err)
	}
	if done, err := s.Done(); !done || err != nil {
		t.Errorf("Done = %v, %v after Sync", done, err)
	}
	y := make([]float32, n)
	if err := CopyFromDevice(d, y, yb); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if want := 2*float32(i) - 3; y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
	}
}

func TestGPUDynamicLDS(t *testing.T) {
	d := openOrSkip(t)
	m := loadKernels(t, d)
	fn, err := m.Function("reverse_block")
	if err != nil {
		t.Fatal(err)
	}
	const block, blocks = 256, 8
	in := make([]int32, block*blocks)
	for i := range in {
		in[i] = int32(i)
	}
	ib, _ := Upload(d, in)
	defer d.Free(ib)
	ob, _ := d.Alloc(4 * len(in))
	defer d.Free(ob)
	if err := Launch(fn, [3]int{blocks, 1, 1}, [3]int{block, 1, 1}, 4*block, nil, ob, ib); err != nil {
		t.Fatal(err)
	}
	if err := Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(in))
	if err := CopyFromDevice(d, out, ob); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		b, t0 := i/block, i%block
		if want := int32(b*block + block - 1 - t0); v != want {
			t.Fatalf("out[%d] = %d, want %d", i, v, want)
		}
	}
}

func TestGPURefusesOtherTarget(t *testing.T) {
	d := openOrSkip(t)
	if d.Arch() == "gfx90a" {
		t.Skip("the refused image is for this device")
	}
	if _, err := d.LoadModule(elfHeader(0x53f, 3)); err == nil {
		t.Error("a gfx90a code object loaded")
	}
}
