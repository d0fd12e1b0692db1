//go:build gpu

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

const smemSrc = `
extern "C" __global__ void smem_reverse(float* out, const float* in, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
`

func TestGPUDynamicSharedAndPTX(t *testing.T) {
	d := openOrSkip(t)
	n := min(d.SharedPerBlockOptin, 200<<10) / 4 // well over the 48 KB default
	// compute_XX yields PTX, which the driver JIT-compiles at load.
	ptx := compileOrFail(t, smemSrc, "smem", fmt.Sprintf("--gpu-architecture=compute_%d%d", d.Major, d.Minor))
	if isBinary(ptx) || ptx[len(ptx)-1] != 0 {
		t.Fatalf("expected NUL-terminated PTX")
	}
	fn := loadFunc(t, d, ptx, "smem_reverse")
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	din, err := Upload(d, in)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(din)
	dout, err := d.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(dout)
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{1024, 1, 1}, 4*n, nil, dout, din, int32(n)); err != nil {
		t.Fatalf("launch with %d B of dynamic shared memory: %v", 4*n, err)
	}
	if err := Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := CopyFromDevice(d, got, dout); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != float32(n-1-i) {
			t.Fatalf("out[%d] = %v, want %d", i, got[i], n-1-i)
		}
	}
	if v, err := fn.Attribute(FuncMaxDynamicSharedSizeBytes); err != nil || v != 4*n {
		t.Errorf("MAX_DYNAMIC_SHARED_SIZE_BYTES = %d, %v; want %d", v, err, 4*n)
	}
	t.Logf("smem_reverse used %d B of dynamic shared memory", 4*n)

	_, err = d.LoadModule([]byte(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n"))
	var e *Error
	if !errors.As(err, &e) || e.Log == "" {
		t.Errorf("bad PTX: want an *Error with the JIT log, got %v", err)
	}
	t.Logf("bad PTX: %v", err)
}

func TestGPUConcurrentGoroutines(t *testing.T) {
	d := openOrSkip(t)
	fn := loadFunc(t, d, compileOrFail(t, saxpySrc, "saxpy", "--gpu-architecture="+d.Arch()), "saxpy")
	const workers, iters, n = 8, 10, 4096
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			s, err := d.NewStream()
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], y[i] = float32(i+w), float32(w)
			}
			dx, _ := Upload(d, x)
			dy, _ := Upload(d, y)
			out, err := d.Alloc(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer func() { d.Free(dx); d.Free(dy); d.Free(out) }()
			got := make([]float32, n)
			for it := range iters {
				a := float32(it)
				if err := Launch(fn, [3]int{n / 128, 1, 1}, [3]int{128, 1, 1}, 0, s, out, dx, dy, a, int32(n)); err != nil {
					errs <- err
					return
				}
				if err := s.Synchronize(); err != nil {
					errs <- err
					return
				}
				if err := CopyFromDevice(d, got, out); err != nil {
					errs <- err
					return
				}
				for i := range got {
					if want := float32(a*x[i]) + y[i]; got[i] != want {
						errs <- fmt.Errorf("worker %d iter %d: out[%d] = %v, want %v", w, it, i, got[i], want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
