//go:build gpu

package cuda

// Tests of the device library's TMA / mbarrier / setmaxnreg section (the end
// of compiler/cudagen/include/tilego.cuh), with descriptors from EncodeTiled.
// The kernels include the real header, read from the source tree, so what is
// tested is what generated kernels will call. Every mbarrier wait in them is
// bounded (2 s of %globaltimer) and reports a timeout through a status word:
// a broken copy fails the test instead of hanging the GPU.
//
// The file sorts after the other GPU test files on purpose: a kernel that
// faults poisons the primary context for every test after it.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// openHopper opens device 0 for TMA tests. Without CUDA they skip, unless
// TILEGO_REQUIRE_GPU is set (as on the device machine), where they fail;
// below sm_90 they skip, saying so.
func openHopper(t *testing.T) *Device {
	t.Helper()
	if err := Available(); err != nil && os.Getenv("TILEGO_REQUIRE_GPU") != "" {
		t.Fatalf("TILEGO_REQUIRE_GPU is set but CUDA is not usable: %v", err)
	}
	d := openOrSkip(t)
	if d.Major < 9 {
		t.Skipf("TMA, mbarrier transaction counts and setmaxnreg need sm_90 or newer; device 0 is %s (%s)", d.Name, d.Arch())
	}
	return d
}

// requireNVRTC skips (or, with TILEGO_REQUIRE_GPU, fails) without NVRTC.
func requireNVRTC(t *testing.T) {
	t.Helper()
	if err := NVRTCAvailable(); err != nil {
		if os.Getenv("TILEGO_REQUIRE_GPU") != "" {
			t.Fatalf("TILEGO_REQUIRE_GPU is set but NVRTC is not usable: %v", err)
		}
		t.Skipf("NVRTC not available: %v", err)
	}
}

// tilegoHeader reads compiler/cudagen/include/tilego.cuh: from the package folder
// (go test), from the repository root (a test binary run there), from the
// source path recorded at build time, or from $TILEGO_HEADER.
func tilegoHeader(t *testing.T) string {
	t.Helper()
	rel := filepath.Join("compiler", "cudagen", "include", "tilego.cuh")
	cands := []string{os.Getenv("TILEGO_HEADER"), filepath.Join("..", "..", rel), rel}
	if _, file, _, ok := runtime.Caller(0); ok {
		cands = append(cands, filepath.Join(filepath.Dir(file), "..", "..", rel))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if b, err := os.ReadFile(c); err == nil {
			return string(b)
		}
	}
	t.Fatalf("tilego.cuh not found (tried %q); run from the repository or set TILEGO_HEADER", cands)
	return ""
}

// compileTMA compiles the header plus src for the device's arch-specific
// target (sm_90a on Hopper), as the CUDA backend would.
func compileTMA(t *testing.T, d *Device, src, name string) ([]byte, string) {
	t.Helper()
	opts := []string{"--gpu-architecture=" + d.ArchSpecific(), "--std=c++17"}
	img, log, err := Compile(tilegoHeader(t)+"\n"+tmaTestLib+src, name, opts)
	if err != nil {
		t.Fatalf("Compile %s: %v", name, err)
	}
	if strings.TrimSpace(log) != "" {
		t.Logf("NVRTC log for %s:\n%s", name, log)
	}
	return img, log
}

// tmaTestLib is device code shared by the test kernels.
const tmaTestLib = `
extern __shared__ __align__(128) unsigned char tt_smem[];

__device__ __forceinline__ uint64_t tt_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// tl::mbar_wait with a 2 s limit: on timeout it records code in *status
// (first failure wins) and returns false, and the caller gives up.
__device__ bool tt_wait(uint32_t bar, uint32_t parity, int* status, int code) {
  if (tl::mbar_try_wait(bar, parity)) return true;
  const uint64_t t0 = tt_now();
  while (!tl::mbar_try_wait(bar, parity)) {
    if (tt_now() - t0 > 2000000000ull) {
      atomicCAS(status, 0, code);
      return false;
    }
  }
  return true;
}

// The 1024-byte-aligned start of dynamic shared memory (launches ask for
// 1 KB extra): the 128B swizzle pattern repeats every 1024 bytes, and
// tl::swz assumes a tile starts on a repeat.
__device__ __forceinline__ uint32_t tt_base(unsigned char** p) {
  const uint32_t raw = tl::smem_addr(tt_smem), base = (raw + 1023u) & ~1023u;
  *p = tt_smem + (base - raw);
  return base;
}
`

// swzParams are tl::swz's N and REP for a swizzle mode, as
// compiler/cudagen/smem.go picks them for 128-, 64- and 32-byte rows.
func swzParams(s TensorSwizzle) (n, rep int) {
	switch s {
	case Swizzle128B:
		return 8, 1
	case Swizzle64B:
		return 4, 2
	case Swizzle32B:
		return 2, 4
	}
	return 1, 1
}

// randomElems returns n elements of size esize as bytes, never all zero or
// all ones (the poison) and, read as floats, never Inf or NaN, so
// a zero in the output can only be TMA's out-of-bounds fill.
func randomElems(r *rand.Rand, esize, n int) []byte {
	out := make([]byte, esize*n)
	for i := range n {
		for {
			v := r.Uint32()
			ok := false
			switch esize {
			case 1:
				v &= 0xff
				ok = v != 0 && v != 0xff
			case 2:
				v &= 0xffff
				ok = v != 0 && v&0x7f80 != 0x7f80 && v&0x7c00 != 0x7c00 // finite as bf16 and as f16
			case 4:
				ok = v != 0 && v&0x7f800000 != 0x7f800000
			}
			if ok {
				for b := range esize {
					out[i*esize+b] = byte(v >> (8 * b))
				}
				break
			}
		}
	}
	return out
}

// boxCase is one TMA box-load configuration. Blocks load P boxes side by
// side along dim 0 (the 128-byte panels tilego cuts wide rows into), with
// one mbarrier for all of them, and copy the whole tile, un-swizzled with
// tl::swz, into a "box image": block after block, row after row.
type boxCase struct {
	name    string
	dtype   TensorDataType
	ctype   string
	dims    []uint64  // extents, innermost first; rank 2..4
	pitch   uint64    // elements between rows in memory (>= dims[0]); higher dims are dense
	offset  int       // bytes from the buffer start to the tensor
	box     [4]uint32 // BW, BH, B2, B3 (1 beyond the rank)
	panels  int
	swizzle TensorSwizzle
}

func (c boxCase) kernel() string {
	return "tt_box_" + strings.NewReplacer(" ", "_", ",", "").Replace(c.name)
}
func (c boxCase) rank() int { return len(c.dims) }
func (c boxCase) dim(i int) int {
	if i < len(c.dims) {
		return int(c.dims[i])
	}
	return 1
}

// strides are the byte strides of dims 1..3 (those past the rank unused).
func (c boxCase) strides() [3]uint64 {
	e := uint64(c.dtype.Size())
	s1 := c.pitch * e
	s2 := s1 * uint64(c.dim(1))
	return [3]uint64{s1, s2, s2 * uint64(c.dim(2))}
}

func (c boxCase) rows() int  { return int(c.box[1] * c.box[2] * c.box[3]) }
func (c boxCase) width() int { return int(c.box[0]) * c.panels }
func (c boxCase) grid() [3]int {
	n2 := (c.dim(2) + int(c.box[2]) - 1) / int(c.box[2])
	n3 := (c.dim(3) + int(c.box[3]) - 1) / int(c.box[3])
	return [3]int{(c.dim(0) + c.width() - 1) / c.width(), (c.dim(1) + int(c.box[1]) - 1) / int(c.box[1]), n2 * n3}
}
func (c boxCase) n2() int { return (c.dim(2) + int(c.box[2]) - 1) / int(c.box[2]) }
func (c boxCase) smemBytes() int {
	return c.panels*c.rows()*int(c.box[0])*c.dtype.Size() + 1024
}

func (c boxCase) source() string {
	n, rep := swzParams(c.swizzle)
	return fmt.Sprintf(`extern "C" __global__ void __launch_bounds__(128) %s(const __grid_constant__ tl::TensorMap tm, %s* out, int n2, int* status) {
  tt_box<%s, %d, %d, %d, %d, %d, %d, %d, %d>(&tm, out, n2, status);
}
`, c.kernel(), c.ctype, c.ctype, c.rank(), c.box[0], c.box[1], c.box[2], c.box[3], c.panels, n, rep)
}

const boxKernelSrc = `
template <typename T, int RANK, int BW, int BH, int B2, int B3, int P, int N, int REP>
__device__ void tt_box(const tl::TensorMap* tm, T* out, int n2, int* status) {
  constexpr int R = BH * B2 * B3, EB = (int)sizeof(T), PW = BW * EB, W = BW * P;
  constexpr uint32_t BYTES = P * R * PW;
  __shared__ __align__(8) uint64_t bar;
  unsigned char* tile;
  const uint32_t base = tt_base(&tile), b = tl::smem_addr(&bar);
  if (threadIdx.x == 0) {
    tl::prefetch_tensormap(tm);
    tl::mbar_init(b, 1);
    tl::fence_mbar_init();
  }
  __syncthreads();
  const int c0 = blockIdx.x * W, c1 = blockIdx.y * BH;
  const int c2 = (blockIdx.z % n2) * B2, c3 = (blockIdx.z / n2) * B3;
  if (threadIdx.x == 0) {
    // One arrival expecting every panel's bytes, then the copies that
    // complete them (edge boxes included: their fill counts too).
    tl::mbar_arrive_expect_tx(b, BYTES);
    for (int p = 0; p < P; ++p) {
      const uint32_t dst = base + p * R * PW;
      if (RANK == 2) tl::tma_load_2d(dst, tm, c0 + p * BW, c1, b);
      if (RANK == 3) tl::tma_load_3d(dst, tm, c0 + p * BW, c1, c2, b);
      if (RANK == 4) tl::tma_load_4d(dst, tm, c0 + p * BW, c1, c2, c3, b);
    }
  }
  if (!tt_wait(b, 0, status, 1)) return;
  tl::mbar_wait(b, 0);  // phase 0 is complete: returns at once
  const size_t blk = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  T* o = out + blk * (size_t)(R * W);
  for (int i = threadIdx.x; i < R * W; i += blockDim.x) {
    const int row = i / W, col = i % W;
    o[i] = *reinterpret_cast<const T*>(tile + tl::swz<PW, R, EB, N, REP>(row, col));
  }
}
`

var boxCases = []boxCase{
	// 300 bf16 = 600 bytes is not a legal TMA row stride, so rows are
	// padded to 304; the third column tile's second panel lies wholly
	// outside the tensor and the last row tile half outside.
	{name: "2d bf16 300x200 pitch 304 offset 256 128B 2 panels", dtype: TensorBFloat16, ctype: "uint16_t",
		dims: []uint64{300, 200}, pitch: 304, offset: 256, box: [4]uint32{64, 64, 1, 1}, panels: 2, swizzle: Swizzle128B},
	{name: "2d bf16 200x300 no swizzle 40x24 box 2 panels", dtype: TensorBFloat16, ctype: "uint16_t",
		dims: []uint64{200, 300}, pitch: 200, box: [4]uint32{40, 24, 1, 1}, panels: 2, swizzle: SwizzleNone},
	{name: "2d f16 200x300 64B 2 panels", dtype: TensorFloat16, ctype: "uint16_t",
		dims: []uint64{200, 300}, pitch: 200, box: [4]uint32{32, 32, 1, 1}, panels: 2, swizzle: Swizzle64B},
	{name: "2d bf16 100x70 pitch 104 32B", dtype: TensorBFloat16, ctype: "uint16_t",
		dims: []uint64{100, 70}, pitch: 104, box: [4]uint32{16, 16, 1, 1}, panels: 1, swizzle: Swizzle32B},
	{name: "3d bf16 100x37x5 pitch 104 128B", dtype: TensorBFloat16, ctype: "uint16_t",
		dims: []uint64{100, 37, 5}, pitch: 104, box: [4]uint32{64, 16, 2, 1}, panels: 1, swizzle: Swizzle128B},
	{name: "4d f32 40x20x3x5 128B", dtype: TensorFloat32, ctype: "uint32_t",
		dims: []uint64{40, 20, 3, 5}, pitch: 40, box: [4]uint32{32, 8, 2, 3}, panels: 1, swizzle: Swizzle128B},
	{name: "2d u8 333x50 pitch 336 offset 16 128B 2 panels", dtype: TensorUint8, ctype: "uint8_t",
		dims: []uint64{333, 50}, pitch: 336, offset: 16, box: [4]uint32{128, 16, 1, 1}, panels: 2, swizzle: Swizzle128B},
}

// TestGPUTMABoxLoads loads every box of each boxCase tensor with TMA and
// checks every element of every box: in-bounds elements equal the input bit
// for bit, out-of-bounds ones (partial and wholly outside boxes, row padding
// included) are zero. It covers 2D/3D/4D loads, bf16/f16/f32/u8, all four
// swizzle modes (un-swizzled with tl::swz, so tilego's shared layout is
// checked to be TMA's), several boxes on one mbarrier, a buffer offset,
// padded row strides, prefetch.tensormap and mbar_wait on a completed phase.
func TestGPUTMABoxLoads(t *testing.T) {
	d := openHopper(t)
	var src strings.Builder
	src.WriteString(boxKernelSrc)
	for _, c := range boxCases {
		src.WriteString(c.source())
	}
	img, _ := compileTMA(t, d, src.String(), "tma_boxes")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range boxCases {
		t.Run(c.name, func(t *testing.T) {
			fn := loadFunc(t, d, img, c.kernel())
			esize := c.dtype.Size()
			st := c.strides()
			total := c.offset + int(st[2])*c.dim(3)
			host := randomElems(rng, esize, total/esize) // padding and offset bytes random too
			in, err := d.Alloc(len(host))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(in)
			if err := d.CopyHtoD(in, host); err != nil {
				t.Fatal(err)
			}
			spec := TiledSpec{DType: c.dtype, Global: in, Offset: c.offset, Dims: c.dims,
				Strides: st[:c.rank()-1], Box: c.box[:c.rank()], Swizzle: c.swizzle}
			if want := c.panels * spec.BoxBytes(); want != c.smemBytes()-1024 {
				t.Fatalf("BoxBytes %d × %d panels != the kernel's %d", spec.BoxBytes(), c.panels, c.smemBytes()-1024)
			}
			tm, err := d.EncodeTiled(spec)
			if err != nil {
				t.Fatal(err)
			}
			g := c.grid()
			nblk := g[0] * g[1] * g[2]
			perBlk := c.rows() * c.width()
			out, err := d.Alloc(nblk * perBlk * esize)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(out)
			if err := d.MemsetD8(out, 0xFF); err != nil {
				t.Fatal(err)
			}
			status, err := Upload(d, []int32{0})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(status)
			var arg any = tm
			if c.rank() == 3 {
				arg = &tm // both forms of the argument
			}
			if err := Launch(fn, g, [3]int{128, 1, 1}, c.smemBytes(), nil, arg, out, int32(c.n2()), status); err != nil {
				t.Fatal(err)
			}
			if err := Sync(fn, nil); err != nil {
				t.Fatal(err)
			}
			checkStatus(t, d, status)
			got := make([]byte, out.Size)
			if err := d.CopyDtoH(got, out); err != nil {
				t.Fatal(err)
			}
			zero := make([]byte, esize)
			bad, inb, oob := 0, 0, 0
			for blk := range nblk {
				bx, by, bz := blk%g[0], blk/g[0]%g[1], blk/(g[0]*g[1])
				for row := range c.rows() {
					i1 := row % int(c.box[1])
					i2 := row / int(c.box[1]) % int(c.box[2])
					i3 := row / int(c.box[1]*c.box[2])
					g1 := by*int(c.box[1]) + i1
					g2 := bz%c.n2()*int(c.box[2]) + i2
					g3 := bz/c.n2()*int(c.box[3]) + i3
					for col := range c.width() {
						g0 := bx*c.width() + col
						o := ((blk*c.rows()+row)*c.width() + col) * esize
						want := zero
						if g0 < c.dim(0) && g1 < c.dim(1) && g2 < c.dim(2) && g3 < c.dim(3) {
							a := c.offset + g0*esize + g1*int(st[0]) + g2*int(st[1]) + g3*int(st[2])
							want = host[a : a+esize]
							inb++
						} else {
							oob++
						}
						if !bytes.Equal(got[o:o+esize], want) {
							if bad++; bad <= 8 {
								t.Errorf("block (%d,%d,%d) row %d col %d = tensor (%d,%d,%d,%d): got %x, want %x",
									bx, by, bz, row, col, g0, g1, g2, g3, got[o:o+esize], want)
							}
						}
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d box elements wrong", bad, inb+oob)
			}
			t.Logf("%d blocks of %d×%d: %d in-bounds elements equal the input, %d out-of-bounds are zero", nblk, c.rows(), c.width(), inb, oob)
		})
	}
}

func checkStatus(t *testing.T, d *Device, status Buffer) {
	t.Helper()
	st := []int32{0}
	if err := CopyFromDevice(d, st, status); err != nil {
		t.Fatal(err)
	}
	what := map[int32]string{1: "a box load's mbarrier", 2: "the producer's wait for an empty slot", 3: "a consumer's wait for a full slot"}
	if st[0] != 0 {
		t.Fatalf("kernel gave up after 2 s waiting on %s (status %d)", what[st[0]], st[0])
	}
}

const parityKernelSrc = `
// Phase and parity semantics, step by step, in one thread.
extern "C" __global__ void tt_parity(int* r) {
  __shared__ __align__(8) uint64_t bars[2];
  const uint32_t b = tl::smem_addr(&bars[0]), e = tl::smem_addr(&bars[1]);
  if (threadIdx.x != 0) return;
  tl::mbar_init(b, 2);
  tl::mbar_init(e, 1);
  tl::fence_mbar_init();
  r[0] = tl::mbar_try_wait(b, 1);  // fresh: the phase "before" 0 counts as complete
  r[1] = tl::mbar_try_wait(b, 0);  // phase 0 pending
  tl::mbar_arrive(b);
  r[2] = tl::mbar_try_wait(b, 0);  // 1 of 2 arrivals
  tl::mbar_arrive(b);
  r[3] = tl::mbar_try_wait(b, 0);  // phase 0 complete
  r[4] = tl::mbar_try_wait(b, 1);  // phase 1 pending
  tl::mbar_arrive(b);
  tl::mbar_arrive(b);
  r[5] = tl::mbar_try_wait(b, 1);  // phase 1 complete
  r[6] = tl::mbar_try_wait(b, 0);  // phase 2 (parity 0) pending
  tl::mbar_wait(b, 1);             // complete: returns
  tl::mbar_arrive_expect_tx(e, 16);
  r[7] = tl::mbar_try_wait(e, 0);  // arrivals met, 16 bytes outstanding: pending
  r[8] = 42;
}
`

// TestGPUMbarrierParity steps one mbarrier through its phases in a single
// thread and checks what try_wait.parity answers at each step: that parity
// 1 of a fresh barrier is complete (the producer's first wait on an empty
// slot relies on it), that a phase needs all its arrivals, that parity
// names the current or previous phase, and that arrive_expect_tx holds a
// phase open until its bytes arrive.
func TestGPUMbarrierParity(t *testing.T) {
	d := openHopper(t)
	img, _ := compileTMA(t, d, parityKernelSrc, "tma_parity")
	fn := loadFunc(t, d, img, "tt_parity")
	r, err := d.Alloc(9 * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(r)
	if err := d.MemsetD8(r, 0xFF); err != nil {
		t.Fatal(err)
	}
	if err := Launch(fn, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, nil, r); err != nil {
		t.Fatal(err)
	}
	if err := Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 9)
	if err := CopyFromDevice(d, got, r); err != nil {
		t.Fatal(err)
	}
	want := []int32{1, 0, 0, 1, 0, 1, 0, 0, 42}
	steps := []string{"fresh, parity 1", "fresh, parity 0", "1 of 2 arrivals, parity 0", "phase 0 done, parity 0",
		"phase 0 done, parity 1", "phase 1 done, parity 1", "phase 1 done, parity 0", "expect_tx 16 bytes pending", "end marker"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d (%s): try_wait = %d, want %d", i, steps[i], got[i], want[i])
		}
	}
}

const storeKernelSrc = `
// Load a 64x64 bf16 box (128B swizzle), flip every sign bit in shared
// memory, and TMA-store the box to the same place in another tensor.
extern "C" __global__ void __launch_bounds__(128) tt_store(const __grid_constant__ tl::TensorMap src,
                                                           const __grid_constant__ tl::TensorMap dst, int* status) {
  constexpr uint32_t BYTES = 64 * 64 * 2;
  __shared__ __align__(8) uint64_t bar;
  unsigned char* tile;
  const uint32_t base = tt_base(&tile), b = tl::smem_addr(&bar);
  if (threadIdx.x == 0) {
    tl::prefetch_tensormap(&src);
    tl::prefetch_tensormap(&dst);
    tl::mbar_init(b, 1);
    tl::fence_mbar_init();
  }
  __syncthreads();
  const int c0 = blockIdx.x * 64, c1 = blockIdx.y * 64;
  if (threadIdx.x == 0) {
    tl::mbar_arrive_expect_tx(b, BYTES);
    tl::tma_load_2d(base, &src, c0, c1, b);
  }
  if (!tt_wait(b, 0, status, 1)) return;
  uint32_t* w = reinterpret_cast<uint32_t*>(tile);
  for (int i = threadIdx.x; i < BYTES / 4; i += blockDim.x) w[i] ^= 0x80008000u;
  tl::fence_async_shared();  // each writer, before the async proxy reads
  __syncthreads();
  if (threadIdx.x == 0) {
    tl::tma_store_2d(&dst, c0, c1, base);
    tl::bulk_commit();
    tl::bulk_wait_read<0>();  // shared memory may be reused
    tl::bulk_wait<0>();       // and the writes are done
  }
}
`

// TestGPUTMAStore round-trips a 200-col × 300-row bf16 tensor through TMA
// loads and stores (128B swizzle both ways, sign bits flipped in shared
// memory in between) into a tensor whose rows are padded to 216 elements,
// with 5 guard rows after it. Every element is checked: in-bounds ones are
// the input with its sign flipped; the row padding and guard rows keep the
// poison, so edge boxes were clipped to the tensor.
func TestGPUTMAStore(t *testing.T) {
	d := openHopper(t)
	img, _ := compileTMA(t, d, storeKernelSrc, "tma_store")
	fn := loadFunc(t, d, img, "tt_store")
	const W, H, pitch, guard = 200, 300, 216, 5
	rng := rand.New(rand.NewPCG(3, 4))
	host := randomElems(rng, 2, W*H)
	in, err := d.Alloc(len(host))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(in)
	if err := d.CopyHtoD(in, host); err != nil {
		t.Fatal(err)
	}
	out, err := d.Alloc(pitch * (H + guard) * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(out)
	if err := d.MemsetD8(out, 0xFF); err != nil {
		t.Fatal(err)
	}
	srcMap, err := d.EncodeTiled(TiledSpec{DType: TensorBFloat16, Global: in, Dims: []uint64{W, H},
		Strides: []uint64{W * 2}, Box: []uint32{64, 64}, Swizzle: Swizzle128B, L2: L2Promotion128B})
	if err != nil {
		t.Fatal(err)
	}
	dstMap, err := d.EncodeTiled(TiledSpec{DType: TensorBFloat16, Global: out, Dims: []uint64{W, H},
		Strides: []uint64{pitch * 2}, Box: []uint32{64, 64}, Swizzle: Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	status, err := Upload(d, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(status)
	g := [3]int{(W + 63) / 64, (H + 63) / 64, 1}
	if err := Launch(fn, g, [3]int{128, 1, 1}, 64*64*2+1024, nil, srcMap, &dstMap, status); err != nil {
		t.Fatal(err)
	}
	if err := Sync(fn, nil); err != nil {
		t.Fatal(err)
	}
	checkStatus(t, d, status)
	got := make([]uint16, pitch*(H+guard))
	if err := CopyFromDevice(d, got, out); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for y := range H + guard {
		for x := range pitch {
			want := uint16(0xFFFF)
			if x < W && y < H {
				want = binary.LittleEndian.Uint16(host[2*(y*W+x):]) ^ 0x8000
			}
			if got[y*pitch+x] != want {
				if bad++; bad <= 8 {
					t.Errorf("out (%d,%d) = %#04x, want %#04x", x, y, got[y*pitch+x], want)
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, pitch*(H+guard))
	}
}

const pipeKernelSrc = `
// A tiny warp-specialized pipeline: block (bx, b) sums the 64-column band
// bx of batch b of a [B][R][C] bf16 tensor over its 32-row tiles,
// out[b][r][c] = sum_k X[b][32k + r][c]. One producer thread streams the
// tiles with TMA into a ring of STAGES slots; consumers wait on the slot's
// full barrier, add the tile to registers and arrive on its empty barrier.
template <int STAGES, int PT, int CT, int PREG, int CREG>
__device__ void tt_pipe(const tl::TensorMap* tm, float* out, int C, int T, int* status) {
  constexpr int BC = 64, BR = 32, STAGE = BC * BR * 2, E = BC * BR / CT;
  static_assert(E * CT == BC * BR, "consumers must split the tile evenly");
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  unsigned char* tiles;
  const uint32_t base = tt_base(&tiles);
  if (threadIdx.x == 0) {
    tl::prefetch_tensormap(tm);
    for (int s = 0; s < STAGES; ++s) {
      tl::mbar_init(tl::smem_addr(&full[s]), 1);    // the producer's arrive_expect_tx
      tl::mbar_init(tl::smem_addr(&empty[s]), CT);  // every consumer thread
    }
    tl::fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x < PT) {
    if constexpr (PREG > 0) {
#ifdef TL_SETMAXNREG
      tl::setmaxnreg_dec<PREG>();
#endif
    }
    if (threadIdx.x == 0) {
      for (int k = 0; k < T; ++k) {
        const int s = k % STAGES;
        const uint32_t n = k / STAGES;  // this slot's use number
        // Use n needs use n-1 released; for n = 0 parity 1 is complete.
        if (!tt_wait(tl::smem_addr(&empty[s]), (n & 1) ^ 1, status, 2)) return;
        tl::mbar_arrive_expect_tx(tl::smem_addr(&full[s]), STAGE);
        tl::tma_load_3d(base + s * STAGE, tm, blockIdx.x * BC, k * BR, blockIdx.y, tl::smem_addr(&full[s]));
      }
    }
    return;
  }
  if constexpr (CREG > 0) {
#ifdef TL_SETMAXNREG
    tl::setmaxnreg_inc<CREG>();
#endif
  }
  const int t = threadIdx.x - PT;
  float acc[E];
#pragma unroll
  for (int i = 0; i < E; ++i) acc[i] = 0.f;
  for (int k = 0; k < T; ++k) {
    const int s = k % STAGES;
    const uint32_t n = k / STAGES;
    if (!tt_wait(tl::smem_addr(&full[s]), n & 1, status, 3)) return;
    const unsigned char* tile = tiles + s * STAGE;
#pragma unroll
    for (int i = 0; i < E; ++i) {
      const int e = t + i * CT, r = e / BC, c = e % BC;
      acc[i] += tl::bf16_to_f32(*reinterpret_cast<const uint16_t*>(tile + tl::swz<128, BR, 2, 8, 1>(r, c)));
    }
    tl::mbar_arrive(tl::smem_addr(&empty[s]));
  }
#pragma unroll
  for (int i = 0; i < E; ++i) {
    const int e = t + i * CT, r = e / BC, c = blockIdx.x * BC + e % BC;
    if (c < C) out[((size_t)blockIdx.y * BR + r) * C + c] = acc[i];
  }
}

// One producer warp and 4 consumer warps, 3 stages.
extern "C" __global__ void __launch_bounds__(160) tt_pipe_warp(const __grid_constant__ tl::TensorMap tm, float* out,
                                                               int C, int T, int* status) {
  tt_pipe<3, 32, 128, 0, 0>(&tm, out, C, T, status);
}
// A producer warpgroup giving registers to 2 consumer warpgroups, 2 stages:
// at 384 threads the entry count is 168, and 40 + 2 * 232 = 3 * 168.
extern "C" __global__ void __launch_bounds__(384, 1) tt_pipe_wg(const __grid_constant__ tl::TensorMap tm, float* out,
                                                                int C, int T, int* status) {
  tt_pipe<2, 128, 256, 40, 232>(&tm, out, C, T, status);
#ifdef TL_SETMAXNREG
  if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0) status[1] = 1;
#endif
}
`

// TestGPUTMAPipeline runs a producer/consumer TMA pipeline over a 3D bf16
// tensor [3][1000][200] (32 tiles of 32 rows, the last one 8 rows, so the
// ring wraps many times and the parity flips) in two shapes: a producer warp
// with 4 consumer warps over 3 stages, and a producer warpgroup with 2
// consumer warpgroups over 2 stages that trade registers with setmaxnreg
// (40 / 232). Every output sum is checked exactly (the inputs are multiples
// of 1/64, so f32 sums are exact): a slot overwritten too early or read
// too soon, stale rows instead of the zero fill, or a wrong parity shows.
func TestGPUTMAPipeline(t *testing.T) {
	d := openHopper(t)
	img, log := compileTMA(t, d, pipeKernelSrc, "tma_pipe")
	if strings.Contains(log, "setmaxnreg") {
		t.Errorf("ptxas did not honour setmaxnreg:\n%s", log)
	}
	const B, R, C, BR = 3, 1000, 200, 32
	const T = (R + BR - 1) / BR
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]uint16, B*R*C)
	vals := make([]float32, len(x))
	for i := range x {
		v := float32(rng.IntN(512)-256) / 64
		vals[i] = v
		x[i] = uint16(math.Float32bits(v) >> 16) // exact: at most 8 significant bits
	}
	want := make([]float32, B*BR*C)
	for b := range B {
		for r := range R {
			for c := range C {
				want[(b*BR+r%BR)*C+c] += vals[(b*R+r)*C+c]
			}
		}
	}
	in, err := Upload(d, x)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(in)
	tm, err := d.EncodeTiled(TiledSpec{DType: TensorBFloat16, Global: in, Dims: []uint64{C, R, B},
		Strides: []uint64{C * 2, R * C * 2}, Box: []uint32{64, BR, 1}, Swizzle: Swizzle128B, L2: L2Promotion256B})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		name            string
		threads, stages int
		regs            bool
	}{
		{"tt_pipe_warp", 160, 3, false},
		{"tt_pipe_wg", 384, 2, true},
	} {
		t.Run(k.name, func(t *testing.T) {
			fn := loadFunc(t, d, img, k.name)
			info, err := fn.Info()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d registers at entry, %d B local memory", k.name, info.NumRegs, info.LocalBytes)
			// setmaxnreg.inc blocks until the CTA's pool has the registers:
			// 128 × (entry − 40) must cover 256 × (232 − entry), so below
			// 168 at entry the launch would hang rather than fail.
			if k.regs && info.NumRegs < 168 {
				t.Fatalf("%s has %d registers at entry; the 40/232 split needs 168 (not launched: it would hang)", k.name, info.NumRegs)
			}
			out, err := d.Alloc(len(want) * 4)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(out)
			if err := d.MemsetD8(out, 0xFF); err != nil {
				t.Fatal(err)
			}
			status, err := Upload(d, []int32{0, 0})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(status)
			smem := k.stages*64*BR*2 + 1024
			if err := Launch(fn, [3]int{(C + 63) / 64, B, 1}, [3]int{k.threads, 1, 1}, smem, nil,
				tm, out, int32(C), int32(T), status); err != nil {
				t.Fatal(err)
			}
			if err := Sync(fn, nil); err != nil {
				t.Fatal(err)
			}
			checkStatus(t, d, status)
			if k.regs {
				st := []int32{0, 0}
				if err := CopyFromDevice(d, st, status); err != nil {
					t.Fatal(err)
				}
				switch {
				case st[1] == 1:
					t.Logf("setmaxnreg compiled in (%s)", d.ArchSpecific())
				case d.Major == 9:
					t.Errorf("setmaxnreg not compiled in for %s: TL_SETMAXNREG undefined", d.ArchSpecific())
				default:
					t.Logf("setmaxnreg not available for %s; pipeline ran without it", d.ArchSpecific())
				}
			}
			got := make([]float32, len(want))
			if err := CopyFromDevice(d, got, out); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range got {
				if got[i] != want[i] {
					if bad++; bad <= 8 {
						c, r, b := i%C, i/C%BR, i/(C*BR)
						t.Errorf("out[%d][%d][%d] = %v, want %v", b, r, c, got[i], want[i])
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d sums wrong", bad, len(got))
			}
			t.Logf("%d sums of %d tiles through a %d-stage ring are exact", len(got), T, k.stages)
		})
	}
}

const probeSrc = `
#ifdef TL_TMA
__device__ void probe_tma(const tl::TensorMap* tm, int* out) {
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = tl::smem_addr(&bar);
  tl::prefetch_tensormap(tm);
  tl::mbar_init(b, 1);
  tl::fence_mbar_init();
  tl::mbar_arrive_expect_tx(b, 4096);
  tl::tma_load_2d(0, tm, 1, 2, b);
  tl::tma_load_3d(0, tm, 1, 2, 3, b);
  tl::tma_load_4d(0, tm, 1, 2, 3, 4, b);
  tl::mbar_wait(b, 0);
  tl::mbar_arrive(b);
  out[1] = tl::mbar_try_wait(b, 1);
  tl::fence_async_shared();
  tl::tma_store_2d(tm, 5, 6, 0);
  tl::bulk_commit();
  tl::bulk_wait_read<1>();
  tl::bulk_wait<0>();
}
#endif
extern "C" __global__ void __launch_bounds__(384, 1) probe(int* out) {
  out[0] = 1;
#ifdef TL_TMA
  if (out[2] == 12345) probe_tma(reinterpret_cast<const tl::TensorMap*>(out + 64), out);
#endif
#ifdef TL_SETMAXNREG
  if (threadIdx.x < 128) tl::setmaxnreg_dec<40>(); else tl::setmaxnreg_inc<232>();
#endif
}
`

// TestGPUHeaderTMACompiles needs only NVRTC. It compiles the header with a
// kernel that calls every primitive of the TMA section for compute_80 (the
// section must vanish: sm_80 kernels include the header too), compute_90
// (TMA and mbarrier, no setmaxnreg) and compute_90a (everything), and
// checks the PTX for the instructions; and it builds sm_80 and sm_90a
// cubins so ptxas accepts them.
func TestGPUHeaderTMACompiles(t *testing.T) {
	requireNVRTC(t)
	hdr := tilegoHeader(t)
	tma := []string{
		"mbarrier.init.shared::cta.b64",
		"fence.mbarrier_init.release.cluster",
		"mbarrier.arrive.expect_tx.shared::cta.b64",
		"mbarrier.arrive.shared::cta.b64",
		"mbarrier.try_wait.parity.shared::cta.b64",
		"prefetch.tensormap",
		"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
		"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes",
		"cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes",
		"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
		"cp.async.bulk.commit_group",
		"cp.async.bulk.wait_group.read 1",
		"cp.async.bulk.wait_group 0",
		"fence.proxy.async.shared::cta",
	}
	regs := []string{"setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232"}
	for _, c := range []struct {
		arch      string
		tma, regs bool
	}{
		{"compute_80", false, false},
		{"compute_90", true, false},
		{"compute_90a", true, true},
	} {
		ptx, log, err := Compile(hdr+probeSrc, "probe_"+c.arch, []string{"--gpu-architecture=" + c.arch, "--std=c++17"})
		if err != nil {
			t.Errorf("%s: %v", c.arch, err)
			continue
		}
		if strings.TrimSpace(log) != "" {
			t.Logf("%s log:\n%s", c.arch, log)
		}
		text := string(ptx)
		for _, s := range tma {
			if strings.Contains(text, s) != c.tma {
				t.Errorf("%s: PTX contains %q = %v, want %v", c.arch, s, !c.tma, c.tma)
			}
		}
		for _, s := range regs {
			if strings.Contains(text, s) != c.regs {
				t.Errorf("%s: PTX contains %q = %v, want %v", c.arch, s, !c.regs, c.regs)
			}
		}
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		img, log, err := Compile(hdr+probeSrc, "probe_"+arch, []string{"--gpu-architecture=" + arch, "--std=c++17"})
		switch {
		case err != nil:
			t.Errorf("%s: %v", arch, err)
		case !bytes.HasPrefix(img, []byte("\x7fELF")):
			t.Errorf("%s: expected a cubin", arch)
		case strings.Contains(log, "setmaxnreg"):
			t.Errorf("%s: ptxas warns about setmaxnreg:\n%s", arch, log)
		}
	}
}

// TestGPUEncodeTiledDriver encodes valid specs of every rank (rank 1 passes
// an empty strides list, rank 5 the most the driver takes) and hands specs
// that Validate rejects to the driver unvalidated: it must reject a stride
// that is not a multiple of 16 and a box row wider than the swizzle span,
// with an *Error naming cuTensorMapEncodeTiled and the spec. For the other
// documented rules a driver that accepts is only logged.
func TestGPUEncodeTiledDriver(t *testing.T) {
	d := openHopper(t)
	buf, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	valid := []TiledSpec{
		{DType: TensorBFloat16, Global: buf, Dims: []uint64{1000}, Box: []uint32{64}, Swizzle: Swizzle128B},
		{DType: TensorFloat16, Global: buf, Dims: []uint64{200, 300}, Strides: []uint64{400}, Box: []uint32{64, 64}, Swizzle: Swizzle128B},
		{DType: TensorUint8, Global: buf, Offset: 48, Dims: []uint64{100, 7, 9}, Strides: []uint64{112, 784}, Box: []uint32{32, 7, 3}, Swizzle: Swizzle32B},
		{DType: TensorFloat32, Global: buf, Dims: []uint64{40, 20, 3, 5}, Strides: []uint64{160, 3200, 9600}, Box: []uint32{32, 8, 2, 3}, L2: L2Promotion64B, OOB: OOBFillNaNRequestZeroFMA},
		{DType: TensorBFloat16, Global: buf, Dims: []uint64{64, 2, 3, 4, 5}, Strides: []uint64{128, 256, 768, 3072}, Box: []uint32{64, 2, 3, 4, 5}, ElemStrides: []uint32{1, 2, 1, 1, 1}, Swizzle: Swizzle128B},
	}
	for _, s := range valid {
		tm, err := d.EncodeTiled(s)
		if err != nil {
			t.Errorf("rank %d: %v", s.Rank(), err)
			continue
		}
		if tm == (TensorMap{}) {
			t.Errorf("rank %d: the driver wrote an all-zero descriptor", s.Rank())
		}
	}
	base := valid[1]
	for _, c := range []struct {
		name string
		edit func(s *TiledSpec)
		must bool
	}{
		{"stride 600", func(s *TiledSpec) { s.Dims[0], s.Strides[0] = 300, 600 }, true},
		{"box row 256 B under 128B swizzle", func(s *TiledSpec) { s.Box[0] = 128 }, true},
		{"box row 24 B", func(s *TiledSpec) { s.Swizzle, s.Box[0] = SwizzleNone, 12 }, false},
		{"box 257", func(s *TiledSpec) { s.Swizzle, s.Box[1] = SwizzleNone, 257 }, false},
		{"address + 8", func(s *TiledSpec) { s.Offset = 8 }, false},
		{"element stride 9", func(s *TiledSpec) { s.ElemStrides = []uint32{1, 9} }, false},
	} {
		s := base
		s.Dims, s.Strides, s.Box = append([]uint64(nil), base.Dims...), append([]uint64(nil), base.Strides...), append([]uint32(nil), base.Box...)
		c.edit(&s)
		verr := s.Validate()
		if verr == nil {
			t.Errorf("%s: Validate accepts it", c.name)
			continue
		}
		_, err := d.encodeTiled(s.DType, s.Global.Ptr+uint64(s.Offset), s.Dims, s.Strides, s.Box, s.elemStrides(),
			s.Swizzle, s.L2, s.OOB, s.String())
		var e *Error
		switch {
		case err == nil && c.must:
			t.Errorf("%s: the driver accepts what Validate rejects (%v)", c.name, verr)
		case err == nil:
			t.Logf("%s: this driver accepts it; Validate follows the documentation (%v)", c.name, verr)
		case !errors.As(err, &e) || e.Call != "cuTensorMapEncodeTiled" || e.Name != "CUDA_ERROR_INVALID_VALUE" ||
			!strings.Contains(err.Error(), "dims "):
			t.Errorf("%s: driver error %v, want CUDA_ERROR_INVALID_VALUE from cuTensorMapEncodeTiled naming the spec", c.name, err)
		default:
			t.Logf("%s: Validate: %v; driver: %v", c.name, verr, err)
		}
	}
}
