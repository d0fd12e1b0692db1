package hip

// The package's calls across the C ABI, against testdata/stubhip.c built
// into a shared library at test time: purego's binding of every entry
// point (argument order and widths, the 11-argument launch, string
// returns, out-parameters) is checked here, on machines without ROCm.
// Skips where no C compiler is installed.

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stubRuntime builds the stub library and makes it the runtime to load.
func stubRuntime(t *testing.T) {
	t.Helper()
	var cc string
	for _, c := range []string{"cc", "gcc", "clang", "clang-19"} {
		if p, err := exec.LookPath(c); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		t.Skip("no C compiler to build testdata/stubhip.c")
	}
	lib := filepath.Join(t.TempDir(), "libamdhip64.so.6")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, "testdata/stubhip.c").CombinedOutput()
	if err != nil {
		t.Fatalf("building the stub runtime: %v\n%s", err, out)
	}
	withCandidates(t, []string{lib})
	if err := Available(); err != nil {
		t.Fatalf("Available with the stub runtime: %v", err)
	}
	if RuntimePath() != lib {
		t.Errorf("RuntimePath = %q, want %q", RuntimePath(), lib)
	}
}

func TestCABI(t *testing.T) {
	stubRuntime(t)
	if v, err := RuntimeVersion(); v != 60342134 || err != nil {
		t.Errorf("RuntimeVersion = %d, %v", v, err)
	}
	if v, err := DriverVersion(); v != 60342134 || err != nil {
		t.Errorf("DriverVersion = %d, %v", v, err)
	}
	if n, err := DeviceCount(); n != 1 || err != nil {
		t.Errorf("DeviceCount = %d, %v", n, err)
	}
	var e *Error
	if _, err := Open(1); !errors.As(err, &e) || e.Name != "hipErrorInvalidDevice" || e.Detail != "unknown error" {
		t.Errorf("Open(1): %v", err)
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Name != "Stub MI300X" || d.ArchName != "gfx942:sramecc+:xnack-" || d.CUCount != 304 || d.WarpSize != 64 ||
		d.TotalMem != 192<<30 || d.LDSPerBlock != 64<<10 || d.WallClockKHz != 100000 {
		t.Errorf("device %v: %+v", d, d)
	}
	if free, total, err := d.MemInfo(); free != 190<<30 || total != 192<<30 || err != nil {
		t.Errorf("MemInfo = %d, %d, %v", free, total, err)
	}
	if _, err := d.Attribute(12345); !errors.As(err, &e) || e.Name != "hipErrorInvalidValue" || e.Detail != "invalid argument" {
		t.Errorf("unknown attribute: %v", err)
	}
	if err := d.Synchronize(); err != nil {
		t.Error(err)
	}

	m, err := d.LoadModule(readKernels(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Function("nope"); !errors.As(err, &e) || e.Name != "hipErrorNotFound" || e.Kernel != "nope" {
		t.Errorf("missing kernel: %v", err)
	}
	if g, err := m.Global("counter"); err != nil || g.Size != 4 || g.Ptr == 0 {
		t.Errorf("Global = %+v, %v", g, err)
	}

	// iota: a pointer and an int.
	iota, err := m.Function("iota")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := iota.Info(); err != nil || info.NumVGPRs != 4 || info.MaxThreadsPerBlock != 1024 {
		t.Errorf("Info = %+v, %v", info, err)
	}
	const n = 1000
	out, err := d.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(out)
	if err := d.MemsetD8(out, 0xff); err != nil {
		t.Fatal(err)
	}
	if err := Launch(iota, [3]int{(n + 255) / 256, 1, 1}, [3]int{256, 1, 1}, 0, nil, out, int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := Sync(iota, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, n)
	if err := CopyFromDevice(d, got, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int32(i) {
			t.Fatalf("iota: out[%d] = %d", i, v)
		}
	}

	// axpb: two pointers, two floats and an int64, on a stream, timed.
	axpb, _ := m.Function("axpb")
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
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := Launch(axpb, [3]int{n/8 + 1, 1, 1}, [3]int{8, 1, 1}, 0, s, yb, xb, float32(2), float32(-3), int64(n)); err != nil {
		t.Fatal(err)
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if ms, err := ElapsedTime(start, end); ms != 0.25 || err != nil {
		t.Errorf("ElapsedTime = %v, %v", ms, err)
	}
	if done, err := s.Done(); !done || err != nil {
		t.Errorf("Done = %v, %v", done, err)
	}
	y := make([]float32, n)
	if err := CopyFromDevice(d, y, yb); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if y[i] != 2*float32(i)-3 {
			t.Fatalf("axpb: y[%d] = %v", i, y[i])
		}
	}
	for _, c := range []interface{ Close() error }{start, end, s} {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}

	// reverse_block: dynamic LDS bytes reach the launch.
	rev, _ := m.Function("reverse_block")
	cp, _ := d.Alloc(4 * 512)
	defer d.Free(cp)
	if err := CopyToDevice(d, cp, got[:512]); err != nil {
		t.Fatal(err)
	}
	if err := Launch(rev, [3]int{2, 1, 1}, [3]int{256, 1, 1}, 4*256, nil, out, cp); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(d, got[:512], out); err != nil {
		t.Fatal(err)
	}
	if got[0] != 255 || got[255] != 0 || got[256] != 511 || got[511] != 256 {
		t.Errorf("reverse_block: %v ... %v", got[:3], got[509:512])
	}
	err = Launch(rev, [3]int{2, 1, 1}, [3]int{256, 1, 1}, 4*255, nil, out, cp)
	if !errors.As(err, &e) || e.Kernel != "reverse_block" || !strings.Contains(e.Detail, "invalid argument; grid [2 1 1], block [256 1 1], LDS 1020 B") {
		t.Errorf("too little LDS: %v", err)
	}

	// Device-to-device copies and slices.
	half, _ := out.Slice(4*256, 4*256)
	if err := d.CopyDtoD(cp, half); err != nil {
		t.Fatal(err)
	}
	if err := CopyFromDevice(d, got[:256], cp); err != nil || !slices.Equal(got[:2], []int32{511, 510}) {
		t.Errorf("CopyDtoD of a slice: %v, %v", got[:2], err)
	}
}
