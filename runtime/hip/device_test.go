package hip

// The package's paths above the C boundary, on the simulated runtime of
// fake_test.go.

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestOpenReadsProperties(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		g := &fakeGPU{arch: "gfx942:sramecc+:xnack-"}
		withAPI(t, fakeAPI(g, legacy))
		d, err := Open(0)
		if err != nil {
			t.Fatalf("legacy props %v: %v", legacy, err)
		}
		if d.Name != "AMD Instinct MI300X" || d.ArchName != "gfx942:sramecc+:xnack-" || d.TotalMem != 192<<30 {
			t.Errorf("legacy props %v: name %q, arch %q, memory %d", legacy, d.Name, d.ArchName, d.TotalMem)
		}
		for _, f := range []struct {
			name      string
			got, want int
		}{
			{"Major", d.Major, 9}, {"Minor", d.Minor, 4}, {"CUCount", d.CUCount, 304},
			{"MaxThreadsPerBlock", d.MaxThreadsPerBlock, 1024}, {"MaxThreadsPerCU", d.MaxThreadsPerCU, 2048},
			{"MaxRegistersPerBlock", d.MaxRegistersPerBlock, 512 * 64}, {"WarpSize", d.WarpSize, 64},
			{"LDSPerBlock", d.LDSPerBlock, 64 << 10}, {"LDSPerCU", d.LDSPerCU, 64 << 10},
			{"L2Bytes", d.L2Bytes, 4 << 20}, {"ClockKHz", d.ClockKHz, 2100000},
			{"MemClockKHz", d.MemClockKHz, 1300000}, {"MemBusWidth", d.MemBusWidth, 8192},
			{"WallClockKHz", d.WallClockKHz, 100000},
		} {
			if f.got != f.want {
				t.Errorf("legacy props %v: %s = %d, want %d", legacy, f.name, f.got, f.want)
			}
		}
		if d.Arch() != "gfx942" || !strings.Contains(d.String(), "gfx942:sramecc+:xnack-, 304 CUs, 196608 MiB") {
			t.Errorf("Arch %q, String %q", d.Arch(), d.String())
		}
		if v, err := d.Attribute(attrWarpSize); v != 64 || err != nil {
			t.Errorf("Attribute(warp size) = %d, %v", v, err)
		}
		if free, total, err := d.MemInfo(); free != 190<<30 || total != 192<<30 || err != nil {
			t.Errorf("MemInfo = %d, %d, %v", free, total, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	g := &fakeGPU{arch: "gfx942"}
	withAPI(t, fakeAPI(g, false))
	var e *Error
	if _, err := Open(3); !errors.As(err, &e) || e.Call != "hipSetDevice" || e.Name != "hipErrorInvalidDevice" {
		t.Errorf("Open(3): %v", err)
	}
	// A runtime whose struct has another layout: the arch name is garbage.
	api := fakeAPI(&fakeGPU{arch: "gfx942"}, false)
	api.hipGetDevicePropertiesR0600 = func(p unsafe.Pointer, dev int32) int32 { return hipSuccess }
	withAPI(t, api)
	if _, err := Open(0); err == nil || !strings.Contains(err.Error(), "not a gfx target") {
		t.Errorf("garbage arch name: %v", err)
	}
	// Neither properties entry point.
	api = fakeAPI(&fakeGPU{arch: "gfx942"}, false)
	api.hipGetDevicePropertiesR0600 = nil
	withAPI(t, api)
	if _, err := Open(0); !errors.As(err, &e) || e.Code != codeNotSymbol {
		t.Errorf("no properties call: %v", err)
	}
}

func TestMemory(t *testing.T) {
	d, g := openFake(t)
	b, err := Upload(d, []int32{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if b.Size != 16 || g.current != 0 {
		t.Errorf("buffer %+v, current device %d", b, g.current)
	}
	out := make([]int32, 4)
	if err := CopyFromDevice(d, out, b); err != nil || out[3] != 4 {
		t.Errorf("CopyFromDevice = %v, %v", out, err)
	}
	c, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MemsetD8(c, 0xff); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(d, out, c); err != nil || out[0] != -1 {
		t.Errorf("after MemsetD8: %v, %v", out, err)
	}
	if err := d.CopyDtoD(c, b); err != nil {
		t.Fatal(err)
	}
	half, _ := c.Slice(8, 8)
	if err := CopyFromDevice(d, out[:2], half); err != nil || out[0] != 3 || out[1] != 4 {
		t.Errorf("CopyDtoD then a slice: %v, %v", out[:2], err)
	}
	for name, err := range map[string]error{
		"Alloc(0)":          func() error { _, err := d.Alloc(0); return err }(),
		"CopyHtoD overflow": d.CopyHtoD(b, make([]byte, 17)),
		"CopyDtoH overflow": d.CopyDtoH(make([]byte, 17), b),
		"CopyDtoD overflow": d.CopyDtoD(half, b),
	} {
		if err == nil {
			t.Errorf("%s succeeded", name)
		}
	}
	if err := d.Free(b); err != nil {
		t.Error(err)
	}
	var e *Error
	if err := d.Free(b); !errors.As(err, &e) || e.Call != "hipFree" || e.Name != "hipErrorInvalidValue" {
		t.Errorf("double free: %v", err)
	}
	if err := d.Free(Buffer{}); err != nil {
		t.Errorf("freeing the zero Buffer: %v", err)
	}
}

func TestModuleAndLaunch(t *testing.T) {
	d, g := openFake(t)
	image := readKernels(t)
	m, err := d.LoadModule(image)
	if err != nil {
		t.Fatal(err)
	}
	image[0] = 0 // the module holds its own copy
	if m.image[0] != 0x7f {
		t.Error("LoadModule kept the caller's slice")
	}
	fn, err := m.Function("iota")
	if err != nil {
		t.Fatal(err)
	}
	if fn.Name() != "iota" {
		t.Errorf("Name = %q", fn.Name())
	}
	var e *Error
	if _, err := m.Function("missing"); !errors.As(err, &e) || e.Kernel != "missing" || e.Name != "hipErrorNotFound" {
		t.Errorf("missing function: %v", err)
	}
	info, err := fn.Info()
	if err != nil || info != (FuncInfo{NumVGPRs: 24, ScratchBytes: 16, MaxThreadsPerBlock: 1024, MaxDynamicLDSBytes: 65536}) {
		t.Errorf("Info = %+v, %v", info, err)
	}
	if gb, err := m.Global("counter"); err != nil || gb.Size != 4 {
		t.Errorf("Global = %+v, %v", gb, err)
	}

	out, _ := d.Alloc(4096)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := Launch(fn, [3]int{4, 1, 1}, [3]int{256, 1, 1}, 1024, s, out, int32(1000), float32(0.5)); err != nil {
		t.Fatal(err)
	}
	l := g.launches[len(g.launches)-1]
	if l.f != fn.h || l.stream != s.h || l.dims != [7]uint32{4, 1, 1, 256, 1, 1, 1024} {
		t.Errorf("launch %+v", l)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil); err != nil || g.launches[1].stream != 0 || g.launches[1].params != nil {
		t.Errorf("launch on the null stream without arguments: %v, %+v", err, g.launches[1])
	}
	err = Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 128<<10, nil, out)
	if !errors.As(err, &e) || e.Kernel != "iota" || !strings.Contains(e.Detail, "LDS 131072 B") {
		t.Errorf("too much LDS: %v", err)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil, 7); err == nil || !strings.Contains(err.Error(), `"iota"`) {
		t.Errorf("int argument: %v", err)
	}
	if err := Sync(fn, s); err != nil || g.calls["hipStreamSynchronize"] != 1 {
		t.Errorf("Sync(stream): %v", err)
	}
	if err := Sync(fn, nil); err != nil || g.calls["hipDeviceSynchronize"] != 1 {
		t.Errorf("Sync(nil): %v", err)
	}
	if done, err := s.Done(); done || err != nil {
		t.Errorf("Done = %v, %v with the stream busy", done, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, s); err == nil || !strings.Contains(err.Error(), "closed stream") {
		t.Errorf("launch on a closed stream: %v", err)
	}
	if err := m.Close(); err != nil || m.h != 0 {
		t.Errorf("Close: %v", err)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil); !errors.Is(err, errNotOpen) {
		t.Errorf("launch from an unloaded module: %v", err)
	}
}

// The kernel arguments reach the runtime as kernelParams: one pointer per
// argument, to its bytes.
func TestLaunchPassesArguments(t *testing.T) {
	d, g := openFake(t)
	m, err := d.LoadModule(readKernels(t))
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := m.Function("axpb")
	y, _ := d.Alloc(64)
	var got []any
	api := d.api
	launch := api.hipModuleLaunchKernel
	api.hipModuleLaunchKernel = func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32,
		stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32 {
		pp := unsafe.Slice((*unsafe.Pointer)(params), 5)
		got = []any{*(*uint64)(pp[0]), *(*uint64)(pp[1]), *(*float32)(pp[2]), *(*float32)(pp[3]), *(*int64)(pp[4])}
		return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil, y, uint64(0x1234), float32(2), float32(-1), int64(16)); err != nil {
		t.Fatal(err)
	}
	want := []any{y.Ptr, uint64(0x1234), float32(2), float32(-1), int64(16)}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("argument %d reached the runtime as %v, want %v", i, got[i], want[i])
		}
	}
	if len(g.launches) != 1 {
		t.Errorf("%d launches", len(g.launches))
	}
}

func TestLoadModuleChecks(t *testing.T) {
	d, g := openFake(t)
	var e *Error
	if _, err := d.LoadModule([]byte(".version 8.0")); !errors.As(err, &e) || e.Name != "hipErrorInvalidImage" {
		t.Errorf("PTX: %v", err)
	}
	other := elfHeader(0x53f, 3) // a gfx90a code object
	if _, err := d.LoadModule(other); !errors.As(err, &e) || e.Name != "hipErrorNoBinaryForGpu" ||
		!strings.Contains(e.Detail, "built for gfx90a, device 0 is gfx942:sramecc+:xnack-") {
		t.Errorf("gfx90a code object: %v", err)
	}
	if g.loaded != 0 {
		t.Errorf("the runtime was asked to load %d refused images", g.loaded)
	}
	if _, err := d.LoadModule([]byte(offloadBundleTag + "\x00")); err != nil || g.loaded != 1 {
		t.Errorf("bundle: %v (loads %d)", err, g.loaded)
	}
}

func TestEvents(t *testing.T) {
	d, _ := openFake(t)
	a, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.NewEvent()
	if err := a.Record(nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Record(nil); err != nil {
		t.Fatal(err)
	}
	if ms, err := ElapsedTime(a, b); ms != 1.5 || err != nil {
		t.Errorf("ElapsedTime = %v, %v", ms, err)
	}
	if err := a.Close(); err != nil || a.h != 0 {
		t.Errorf("Close: %v", err)
	}
	if err := a.Record(nil); err == nil {
		t.Error("Record on a closed event succeeded")
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSyncHang(t *testing.T) {
	d, _ := openFake(t)
	m, _ := d.LoadModule(readKernels(t))
	fn, _ := m.Function("iota")
	release := make(chan struct{})
	defer close(release)
	d.api.hipDeviceSynchronize = func() int32 { <-release; return hipSuccess }
	old := HangAfter
	HangAfter = 20 * time.Millisecond
	defer func() { HangAfter = old }()
	if err := Sync(fn, nil); !errors.Is(err, ErrHung) {
		t.Fatalf("Sync: %v, want ErrHung", err)
	}
	if _, err := d.Alloc(16); !errors.Is(err, ErrHung) {
		t.Errorf("Alloc after a hang: %v", err)
	}
}

func TestClosedDevice(t *testing.T) {
	d, _ := openFake(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Alloc(16); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Alloc on a closed device: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
