//go:build gpu

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

const tmaSrc = `
struct __align__(64) TM { unsigned long long v[16]; };

// Echo the descriptor and a trailing scalar: checks by-value passing and
// parameter offsets of a 128-byte, 64-aligned argument.
extern "C" __global__ void echo_tm(const __grid_constant__ TM tm, unsigned long long* out, int marker) {
  int i = threadIdx.x;
  if (i < 16) out[i] = tm.v[i];
  if (i == 0) out[16] = (unsigned long long)(unsigned)marker;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  unsigned long long a;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (unsigned)a;
}

#define BW 16
#define BH 8
// One TMA box per block into shared memory, then copied out in bounds.
extern "C" __global__ void tma_tile(const __grid_constant__ TM tm, float* out, int W, int H) {
  __shared__ __align__(128) float tile[BH * BW];
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = smem_u32(&bar), t = smem_u32(tile);
  int x0 = blockIdx.x * BW, y0 = blockIdx.y * BH;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"((unsigned)(BW * BH * 4)) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(t), "l"((unsigned long long)&tm), "r"(x0), "r"(y0), "r"(b) : "memory");
  }
  asm volatile("{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra WAIT;\n}\n"
               :: "r"(b), "r"(0) : "memory");
  for (int i = threadIdx.x; i < BW * BH; i += blockDim.x) {
    int x = x0 + i % BW, y = y0 + i / BW;
    if (x < W && y < H) out[y * W + x] = tile[i];
  }
}
`

const smemSrc = `
extern "C" __global__ void smem_reverse(float* out, const float* in, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
`

func TestGPUTensorMap(t *testing.T) {
	d := openOrSkip(t)
	if d.Major < 9 {
		t.Skipf("TMA needs sm_90, have %s", d.Arch())
	}
	const W, H = 40, 20 // not multiples of the 16x8 box: edge boxes are partial
	in := make([]float32, W*H)
	for i := range in {
		in[i] = float32(i) + 0.25
	}
	din, err := Upload(d, in)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(din)
	tm, err := EncodeTiled(TensorFloat32, 2, din.Ptr, []uint64{W, H}, []uint64{W * 4},
		[]uint32{16, 8}, nil, InterleaveNone, SwizzleNone, L2PromotionNone, OOBFillNone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EncodeTiled(TensorFloat32, 2, din.Ptr+4, []uint64{W, H}, []uint64{W * 4},
		[]uint32{16, 8}, nil, InterleaveNone, SwizzleNone, L2PromotionNone, OOBFillNone); err == nil {
		t.Error("misaligned global address accepted")
	} else {
		t.Logf("misaligned address: %v", err)
	}

	img := compileOrFail(t, tmaSrc, "tma", "--gpu-architecture="+d.Arch())
	echo := loadFunc(t, d, img, "echo_tm")
	dout, err := d.Alloc(17 * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(dout)
	if err := Launch(echo, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, nil, tm, dout, int32(12345)); err != nil {
		t.Fatal(err)
	}
	if err := Sync(echo, nil); err != nil {
		t.Fatal(err)
	}
	words := make([]uint64, 17)
	if err := CopyFromDevice(d, words, dout); err != nil {
		t.Fatal(err)
	}
	want := unsafe.Slice((*uint64)(unsafe.Pointer(&tm[0])), 16)
	for i := range 16 {
		if words[i] != want[i] {
			t.Errorf("descriptor word %d = %#x in the kernel, %#x on the host", i, words[i], want[i])
		}
	}
	if words[16] != 12345 {
		t.Errorf("argument after the descriptor = %d, want 12345", words[16])
	}

	tile := loadFunc(t, d, img, "tma_tile")
	dres, err := d.Alloc(W * H * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(dres)
	d.MemsetD8(dres, 0xFF)
	if err := Launch(tile, [3]int{(W + 15) / 16, (H + 7) / 8, 1}, [3]int{64, 1, 1}, 0, nil, &tm, dres, int32(W), int32(H)); err != nil {
		t.Fatal(err)
	}
	if err := Sync(tile, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, W*H)
	if err := CopyFromDevice(d, got, dres); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != in[i] {
			t.Fatalf("TMA copy: element (%d,%d) = %v, want %v", i%W, i/W, got[i], in[i])
		}
	}
}

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
