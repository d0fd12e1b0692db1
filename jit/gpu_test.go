//go:build gpu

package jit

import (
	"bytes"
	"testing"

	"github.com/tilego/tilego/runtime/cuda"
)

// TestGPUCompileCached compiles through real NVRTC twice and runs the result.
func TestGPUCompileCached(t *testing.T) {
	if err := cuda.Available(); err != nil {
		t.Skipf("CUDA not available: %v", err)
	}
	d, err := cuda.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := New(t.TempDir(), NVRTC{})
	const k = `extern "C" __global__ void fill(int* p, int v) { p[threadIdx.x] = v + threadIdx.x; }`
	first, err := c.Compile(k, "fill", d.ArchSpecific(), []string{"-lineinfo"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Compile(k, "fill", d.ArchSpecific(), []string{"-lineinfo"})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Misses != 1 || s.Hits != 1 || !bytes.Equal(first, second) {
		t.Fatalf("stats %+v, equal %v", s, bytes.Equal(first, second))
	}
	ver, _ := NVRTC{}.Version()
	t.Logf("%s, %s image of %d bytes cached in %s", ver, d.ArchSpecific(), len(first), c.Dir())

	m, err := d.LoadModule(second)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fn, err := m.Function("fill")
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.Alloc(4 * 64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	if err := cuda.Launch(fn, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, nil, buf, int32(100)); err != nil {
		t.Fatal(err)
	}
	if err := cuda.Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 64)
	if err := cuda.CopyFromDevice(d, got, buf); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int32(100+i) {
			t.Fatalf("p[%d] = %d", i, v)
		}
	}
}
