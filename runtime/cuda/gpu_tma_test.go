//go:build gpu

package cuda

// TMA tests live in their own file, named to run after the other GPU tests:
// a faulting TMA kernel would poison the shared context for every test after it.

import (
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

__device__ __forceinline__ bool bar_done(unsigned b, unsigned phase) {
  unsigned ok;
  asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok) : "r"(b), "r"(phase) : "memory");
  return ok != 0;
}

#define BW 16
#define BH 8
// One TMA box per block into shared memory, then copied out in bounds.
extern "C" __global__ void tma_tile(const __grid_constant__ TM tm, float* out, int W, int H, int* status) {
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
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(t), "l"((unsigned long long)&tm), "r"(x0), "r"(y0), "r"(b) : "memory");
  }
  // Bounded wait: a broken copy must fail the test, not hang the GPU.
  for (long spins = 0; !bar_done(b, 0); ++spins) {
    if (spins > (1L << 24)) { atomicExch(status, 1); return; }
  }
  for (int i = threadIdx.x; i < BW * BH; i += blockDim.x) {
    int x = x0 + i % BW, y = y0 + i / BW;
    if (x < W && y < H) out[y * W + x] = tile[i];
  }
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
	spec := TiledSpec{DType: TensorFloat32, Global: din, Dims: []uint64{W, H}, Strides: []uint64{W * 4}, Box: []uint32{16, 8}}
	tm, err := d.EncodeTiled(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Offset = 4
	if _, err := d.EncodeTiled(spec); err == nil {
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
	status, err := Upload(d, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(status)
	if err := d.MemsetD8(dres, 0xFF); err != nil {
		t.Fatal(err)
	}
	if err := Launch(tile, [3]int{(W + 15) / 16, (H + 7) / 8, 1}, [3]int{64, 1, 1}, 0, nil,
		&tm, dres, int32(W), int32(H), status); err != nil {
		t.Fatal(err)
	}
	if err := Sync(tile, nil); err != nil {
		t.Fatal(err)
	}
	st := []int32{0}
	if err := CopyFromDevice(d, st, status); err != nil || st[0] != 0 {
		t.Fatalf("TMA copy never completed (mbarrier wait timed out; %v)", err)
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
