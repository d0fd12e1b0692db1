// tilego device library: the few primitives generated kernels call.
// Storage types are raw bits (uint16_t for f16/bf16, uint8_t for f8) so the
// generated code needs no CUDA headers and rounding is under our control.
#pragma once
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

namespace tl {

// ---- conversions -------------------------------------------------------
__device__ __forceinline__ float bf16_to_f32(uint16_t x) { return __uint_as_float(uint32_t(x) << 16); }
__device__ __forceinline__ float f16_to_f32(uint16_t x) {
  float f;
  asm("{ .reg .f16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(x));
  return f;
}
// Round to nearest even (the default output cast).
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
__device__ __forceinline__ uint16_t f32_to_f16(float f) {
  uint16_t r;
  asm("{ .reg .f16 h; cvt.rn.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r) : "f"(f));
  return r;
}
// Toward zero.
__device__ __forceinline__ uint16_t f32_to_bf16_rz(float f) {
  uint16_t r;
  asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
__device__ __forceinline__ uint16_t f32_to_f16_rz(float f) {
  uint16_t r;
  asm("{ .reg .f16 h; cvt.rz.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r) : "f"(f));
  return r;
}
// Ties away from zero: add half an ulp of the target to the magnitude and
// truncate (NaN and infinities pass through the rz path unchanged).
__device__ __forceinline__ uint16_t f32_to_bf16_ra(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f32_to_bf16_rz(f);
  return uint16_t((u + 0x8000u) >> 16);
}
__device__ __forceinline__ uint16_t f32_to_f16_ra(float f) {
  // f16 has 13 fewer mantissa bits than f32; for normal results adding half
  // of the dropped part then truncating rounds ties away.
  float a = fabsf(f);
  if (!(a < 65520.0f) || a < 6.103515625e-05f) return f32_to_f16(f);
  uint32_t u = __float_as_uint(f) + 0x1000u;
  return f32_to_f16_rz(__uint_as_float(u & ~0x1fffu));
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
__device__ __forceinline__ float e4m3_to_f32(uint8_t x) {
  uint16_t h;
  asm("{ .reg .b32 t; cvt.rn.f16x2.e4m3x2 t, %1; mov.b32 {%0, _}, t; }" : "=h"(h) : "h"(uint16_t(x)));
  return f16_to_f32(h);
}
__device__ __forceinline__ uint8_t f32_to_e4m3(float f) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(r) : "f"(f));
  return uint8_t(r);
}
__device__ __forceinline__ uint8_t f32_to_e5m2(float f) {
  uint16_t r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %1;" : "=h"(r) : "f"(f));
  return uint8_t(r);
}
#else
// Before sm_89 PTX has no f8 conversions: the same results in integer and
// f32 arithmetic (as tilego_hip.h's f8_round, for gfx942, whose own fp8
// instructions take other encodings; both must equal tensor.Bits). Round to nearest even at the format's quantum for the
// value's exponent (clamped to the subnormal one), saturate past the
// largest finite value; NaN gives the format's NaN.
template <int MANT, int BIAS>
__device__ __forceinline__ uint8_t f32_to_f8_sat(float f, float max_finite, uint8_t max_bits, uint8_t nan) {
  uint8_t sign = uint8_t((__float_as_uint(f) >> 24) & 0x80u);
  float a = fabsf(f);
  if (a != a) return nan;
  if (a >= max_finite) return sign | max_bits;
  int e = max(int(__float_as_uint(a) >> 23) - 127, 1 - BIAS);
  float q = __uint_as_float(uint32_t(e - MANT + 127) << 23);  // the quantum, 2^(e-MANT)
  int r = int(rintf(a / q));  // exact division by a power of two; ties to even
  // r in [0, 2^(MANT+1)]; adding it to the biased exponent's field carries
  // into the exponent where r reaches 2^(MANT+1), and a subnormal's field is r.
  return sign | uint8_t(((e + BIAS - 1) << MANT) + r);
}
__device__ __forceinline__ float e4m3_to_f32(uint8_t x) {
  uint32_t e = (x >> 3) & 15u, m = x & 7u;
  float a = (x & 0x7fu) == 0x7fu ? __uint_as_float(0x7fc00000u)
            : e == 0             ? float(m) * 0.001953125f  // m * 2^-9
                                 : __uint_as_float(((e + 120u) << 23) | (m << 20));
  return (x & 0x80u) ? -a : a;
}
__device__ __forceinline__ uint8_t f32_to_e4m3(float f) { return f32_to_f8_sat<3, 7>(f, 448.0f, 0x7e, 0x7f); }
__device__ __forceinline__ uint8_t f32_to_e5m2(float f) { return f32_to_f8_sat<2, 15>(f, 57344.0f, 0x7b, 0x7e); }
#endif
__device__ __forceinline__ float e5m2_to_f32(uint8_t x) { return f16_to_f32(uint16_t(x) << 8); }
// Two f32 to a packed pair, lo in the low half (the mma operand order).
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t pack_f16(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// A packed pair to two f32, lo from the low half: a shift and a mask for
// bf16, where taking each half apart first costs a byte permute more.
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float f16_lo(uint32_t w) { return f16_to_f32(uint16_t(w)); }
__device__ __forceinline__ float f16_hi(uint32_t w) { return f16_to_f32(uint16_t(w >> 16)); }

// ---- math --------------------------------------------------------------
__device__ __forceinline__ float exp2f_(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float log2f_(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }
// The language's other math functions: CUDA's (its math library's error
// bounds), and 1 / (1 + e^-x), e^x itself below -80 (where e^-x
// overflows but the result is still a subnormal float).
__device__ __forceinline__ float tanh_(float x) { return tanhf(x); }
__device__ __forceinline__ float erf_(float x) { return erff(x); }
__device__ __forceinline__ float log1p_(float x) { return log1pf(x); }
__device__ __forceinline__ float expm1_(float x) { return expm1f(x); }
__device__ __forceinline__ float sin_(float x) { return sinf(x); }
__device__ __forceinline__ float pow_(float x, float y) { return powf(x, y); }
__device__ __forceinline__ float cos_(float x) { return cosf(x); }
__device__ __forceinline__ float sigmoid_(float x) { return x < -80.0f ? expf(x) : 1.0f / (1.0f + expf(-x)); }

// ---- shared memory -----------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy global -> shared; src_bytes < 16 zero-fills
// the rest (0 for a chunk wholly outside the tensor).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t* r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t* r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t* r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t* r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

// ---- tensor cores ------------------------------------------------------
__device__ __forceinline__ void mma_bf16_16816(float* c, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_f16_16816(float* c, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- warp reductions -----------------------------------------------------
__device__ __forceinline__ float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ float fmax_(float a, float b) { return fmaxf(a, b); }

}  // namespace tl

namespace tl {
// Byte offset of element (row, col) of a shared tile of ROWS rows cut
// into panels of PW bytes a row, EB-byte elements, whose 16-byte chunks are
// XOR-swizzled within each panel row: chunk ^= (row / REP) % N.
template <int PW, int ROWS, int EB, int N, int REP>
__device__ __forceinline__ int swz(int row, int col) {
  const int byte = col * EB, panel = byte / PW, within = byte % PW;
  const int chunk = (within >> 4) ^ ((row / REP) % N);
  return panel * (ROWS * PW) + row * PW + (chunk << 4) + (within & 15);
}
}  // namespace tl

namespace tl {
// 16-bit fragments live two to a 32-bit register (the layout the tensor
// cores want); element i is the low half of a[i/2] when i is even.
__device__ __forceinline__ uint16_t get_h(const uint32_t* a, int i) {
  return uint16_t(a[i >> 1] >> ((i & 1) * 16));
}
__device__ __forceinline__ void set_h(uint32_t* a, int i, uint16_t v) {
  const uint32_t s = (i & 1) * 16;
  a[i >> 1] = (a[i >> 1] & ~(0xffffu << s)) | (uint32_t(v) << s);
}
// ticket (Ticket) adds 1 to a counter other blocks add to and returns the
// count before: acquire-release at GPU scope, so that the writes this
// thread has seen (the block's, after a barrier) are ordered before the
// add, and its later reads after the adds before it.
__device__ __forceinline__ int ticket(int* p) {
  int v;
  asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// signal (Signal) adds 1 with release semantics and returns nothing: the
// thread does not wait for the add.
__device__ __forceinline__ void signal(int* p) {
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(p) : "memory");
}
// wait_count (WaitCount, compiler/cudagen/block_counter.go) polls a counter that
// another kernel's blocks add to until it reaches n: acquire loads, so
// what they wrote before their adds is seen after it. It backs off
// between polls, and traps after about a minute of them (2^28 polls of at
// least 256 ns) rather than hang on a count that never comes.
__device__ __forceinline__ void wait_count(const int* p, int n) {
  for (long long polls = 0;; ++polls) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    if (v >= n) break;
    if (polls >= (1ll << 28)) __trap();
    __nanosleep(256);
  }
}
}  // namespace tl

// ---- Hopper (sm_90a) -----------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tl {
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// Arrives at named barrier id without waiting for it: with bar_sync by
// other threads, one warpgroup signals another (n counts both).
__device__ __forceinline__ void bar_arrive(uint32_t id, uint32_t n) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

// Orders this thread's generic-proxy writes to shared memory (plain stores,
// cp.async) before later async-proxy reads (wgmma, TMA).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// A wgmma shared-memory matrix descriptor: start address, leading and
// stride byte offsets (all >> 4), swizzle mode (1 = 128B, 2 = 64B, 3 = 32B).
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (uint64_t(mode) << 62);
}
}  // namespace tl
#endif

// ==== mbarriers (sm_80+) ==================================================
// A 64-bit shared-memory barrier with a phase bit. A phase completes when
// its expected arrivals have arrived (and, with TMA, its expected
// transaction bytes have landed); waiters name the phase by parity or by
// the state their arrival returned.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
namespace tl {
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}
// After mbar_init, before other threads or TMA (the async proxy) use the
// barrier; then a __syncthreads (or cluster barrier) publishes it. Before
// sm_90 there is no async proxy or cluster, and the __syncthreads is enough.
__device__ __forceinline__ void fence_mbar_init() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// Arrives and waits for the phase it arrived in (by its state, not a
// parity): a barrier of the threads that expect each other, as bar_sync,
// for a group that meets no other barrier in step (a warpgroup's own).
// try_wait (sm_90) waits a while in hardware before giving up; test_wait
// returns at once.
__device__ __forceinline__ void mbar_arrive_wait(uint32_t bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "{ .reg .b64 st; .reg .pred p; mbarrier.arrive.shared::cta.b64 st, [%0];\n"
      "W%=: mbarrier.try_wait.shared::cta.b64 p, [%0], st; @!p bra W%=; }" ::"r"(bar)
      : "memory");
#else
  asm volatile(
      "{ .reg .b64 st; .reg .pred p; mbarrier.arrive.shared::cta.b64 st, [%0];\n"
      "W%=: mbarrier.test_wait.shared::cta.b64 p, [%0], st; @!p bra W%=; }" ::"r"(bar)
      : "memory");
#endif
}
}  // namespace tl
#endif

// ==== helpers of every target (sm_80+) ===================================
namespace tl {
// Fetches the 128-byte line holding p into L2 (a hint).
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
// Adds two f32 to adjacent global words: one vector reduction on sm_90
// and later, two atomics before.
__device__ __forceinline__ void red_add_f32x2(float* p, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
#endif
}
// lane0_read: the int at p as lane 0 of the warp reads it, for every lane
// (all must take part). A drawn walk's ticket is read so: the lane that
// reads the slot is the one that frees it, which racecheck can follow (a
// read by the other lanes, ordered by __syncwarp before lane 0's
// arrival, it reported as racing with the producer's next write).
__device__ __forceinline__ int lane0_read(const volatile int* p) {
  int v = 0;
  if ((threadIdx.x & 31) == 0) v = *p;
  return __shfl_sync(0xffffffffu, v, 0);
}
// spin_cycles waits about n of the SM's clock cycles (a late start:
// Kernel.Late in the compiler).
__device__ __forceinline__ void spin_cycles(long long n) {
  const long long t0 = clock64();
  while (clock64() - t0 < n) {
  }
}
// globaltimer is the GPU's nanosecond timer (%globaltimer): stamps for the
// timeline of a hand-edited program (TILEGO_STAMPS, backend/cuda/stamps.go).
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
// quad_transpose: lane q of each quad (q = lane % 4) holds words w0..w3;
// afterwards it holds lane j's word q as wj. Two exchanges of two words:
// with lane q^2 the words whose index has bit 1 unlike q's, then with
// lane q^1 those whose bit 0 is; every lane of the warp must take part.
__device__ __forceinline__ void quad_transpose(uint32_t& w0, uint32_t& w1, uint32_t& w2, uint32_t& w3) {
  const int q = threadIdx.x & 3;
  const bool b1 = q & 2, b0 = q & 1;
  const uint32_t k0 = b1 ? w2 : w0, k1 = b1 ? w3 : w1;  // kept: words (bit 1 = q's bit 1)
  const uint32_t r0 = __shfl_xor_sync(0xffffffffu, b1 ? w0 : w2, 2);
  const uint32_t r1 = __shfl_xor_sync(0xffffffffu, b1 ? w1 : w3, 2);
  // v[x] is lane (q ^ x)'s word q.
  const uint32_t v0 = b0 ? k1 : k0, v2 = b0 ? r1 : r0;
  const uint32_t v1 = __shfl_xor_sync(0xffffffffu, b0 ? k0 : k1, 1);
  const uint32_t v3 = __shfl_xor_sync(0xffffffffu, b0 ? r0 : r1, 1);
  w0 = b1 ? (b0 ? v3 : v2) : (b0 ? v1 : v0);  // w[j] = v[j ^ q]
  w1 = b1 ? (b0 ? v2 : v3) : (b0 ? v0 : v1);
  w2 = b1 ? (b0 ? v1 : v0) : (b0 ? v3 : v2);
  w3 = b1 ? (b0 ? v0 : v1) : (b0 ? v2 : v3);
}
}  // namespace tl

// ==== TMA and mbarrier pipelines (sm_90+) ================================
// Groundwork for lowering tile copies to TMA with producer/consumer warp
// specialization. Nothing above uses it. The instructions exist only from
// sm_90 on, so all of it is compiled out for older targets (the sm_80 path
// sees none of it); setmaxnreg further needs the arch-specific sm_90a.
// Barriers and shared buffers are 32-bit shared addresses (smem_addr), tensor
// maps the generic address of a `const __grid_constant__ tl::TensorMap`
// kernel parameter; coordinates are element indices, innermost dim first.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TL_TMA 1  // what follows is available
namespace tl {
// A CUtensorMap (runtime/cuda TensorMap) as a kernel parameter. It must stay
// in parameter space (__grid_constant__): TMA reads it through its address.
struct __align__(64) TensorMap {
  uint64_t bits[16];
};

// One arrival (release: this thread's earlier shared-memory reads and writes
// happen before the phase completes). Consumers use it to free a slot.
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// One arrival that also expects `bytes` more transaction bytes this phase:
// the producer's call before issuing TMA loads that complete_tx on `bar`.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// True once the phase with this parity has completed (acquire: what the
// phase published is then visible). Parity p is the current phase's or the
// one before it: on a fresh barrier parity 1 is complete at once, which lets
// a producer's first wait on an empty slot fall through. try_wait blocks for
// a while in hardware before giving up, so loops on it do not hammer smem.
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// Synchronizes the n threads (a multiple of 32) that reach named barrier id
// (1-15; 0 is __syncthreads'): a warp-specialized kernel's consumer
// warpgroups, without its producer.
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t n) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
// bar_sync for threads that meet there from different barrier
// instructions (a hand-back, handoff.go): bar.sync is barrier.sync.aligned,
// which wants every thread at the same one.
__device__ __forceinline__ void bar_sync_apart(uint32_t id, uint32_t n) {
  asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later
// async-proxy accesses (a TMA store of what threads wrote). Same instruction
// as fence_proxy_async, which exists only in sm_90a builds.
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// -- TMA. prefetch_tensormap brings a descriptor into the TMA unit's cache
// ahead of the first copy (one thread, once per kernel).
__device__ __forceinline__ void prefetch_tensormap(const void* tm) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(tm)) : "memory");
}
// Loads the box at coordinates (c0, c1, ...) into shared memory at dst
// (128-byte aligned; 1024 for the 128B swizzle pattern to start at row 0)
// and completes its byte count on bar. Out-of-bounds elements are filled
// (zeros) and still counted. Issued by one thread.
// ---- clusters of two (compiler/cudagen/cluster.go) -----------------------------
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// Every thread of both blocks (exited ones aside) meets here: after the
// barriers are set up, so no remote arrival or multicast finds one
// uninitialized, and before exit, so none lands in a block that is gone.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// One arrival on the barrier at shared offset `bar` of the cluster's block
// `rank`. Release at CTA scope, as a local arrival: it orders this
// thread's reads of the slot (its wgmmas already waited for) before the
// partner's producer refills it; release at cluster scope costs a memory
// barrier each time (ERRBAR: 37% of the stall samples, docs/perf.md).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(bar),
      "r"(rank)
      : "memory");
}
// A TMA load whose box lands at the same shared offset, and completes on
// the same barrier offset, in every block of `mask`.
__device__ __forceinline__ void tma_load_mc_2d(uint32_t dst, const void* tm, int c0, int c1, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_mc_3d(uint32_t dst, const void* tm, int c0, int c1, int c2, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_mc_4d(uint32_t dst, const void* tm, int c0, int c1, int c2, int c3, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "h"(mask)
      : "memory");
}
// L2 policies for a copy's cache hint (ir.CacheHint), all of the lines.
__device__ __forceinline__ uint64_t l2_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t l2_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// A store to global memory of two f32, or of 32 bits (two 16-bit
// elements), with an L2 policy.
__device__ __forceinline__ void st_global_f32x2_hint(void* p, float a, float b, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.v2.f32 [%0], {%1, %2}, %3;" ::"l"(p), "f"(a), "f"(b), "l"(pol) : "memory");
}
__device__ __forceinline__ void st_global_b32_hint(void* p, uint32_t v, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(p), "r"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ void st_global_v4_hint(void* p, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d), "l"(pol) : "memory");
}
// tma_load_Nd with an L2 policy (l2_evict_first, l2_evict_last).
__device__ __forceinline__ void tma_load_1d_hint(uint32_t dst, const void* tm, int c0, uint32_t bar, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2}], [%3], %4;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(bar), "l"(pol)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const void* tm, int c0, int c1, uint32_t bar, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar), "l"(pol)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d_hint(uint32_t dst, const void* tm, int c0, int c1, int c2, uint32_t bar, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "l"(pol)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d_hint(uint32_t dst, const void* tm, int c0, int c1, int c2, int c3, uint32_t bar, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "l"(pol)
      : "memory");
}
__device__ __forceinline__ void tma_load_1d(uint32_t dst, const void* tm, int c0, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" ::"r"(dst),
               "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tm, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* tm, int c0, int c1, int c2, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const void* tm, int c0, int c1, int c2, int c3, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// Stores the box at src to the tensor at (c0, c1); elements outside the
// tensor are dropped. Threads that wrote src must fence_async_shared() and
// synchronize before the one issuing thread calls this; then bulk_commit()
// and bulk_wait_read<0>() before src is overwritten or the CTA exits.
// tma_reduce_add_Nd adds an f32 box of shared memory into global memory
// (the L2 adds element by element), in the bulk group like tma_store_Nd.
__device__ __forceinline__ void tma_reduce_add_2d(const void* tm, int c0, int c1, uint32_t src) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add_3d(const void* tm, int c0, int c1, int c2, uint32_t src) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add_4d(const void* tm, int c0, int c1, int c2, int c3, uint32_t src) {
  asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_2d(const void* tm, int c0, int c1, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_3d(const void* tm, int c0, int c1, int c2, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_4d(const void* tm, int c0, int c1, int c2, int c3, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(
                   reinterpret_cast<uint64_t>(tm)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most N committed bulk groups still read their shared source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Waits until at most N committed bulk groups are incomplete (writes done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// ---- programmatic dependent launch (StartEarly, NextEarly; chain.go) ------
// grid_launch_next lets the kernel after this one on the stream launch, if
// it was launched to start early, once every block of this one has passed
// it; grid_wait holds the thread until the kernel before this one on the
// stream has ended and its writes show (at once for a plain launch).
__device__ __forceinline__ void grid_launch_next() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void grid_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
}  // namespace tl
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define TL_SETMAXNREG 1
namespace tl {
// Moves registers between the warpgroups of a CTA: a producer warpgroup
// that only issues TMA gives registers back (dec) so the consumer
// warpgroups can take them (inc). Every warp of a warpgroup must execute the
// same call; the per-thread count must be a multiple of 8 in 24..256. The
// kernel needs __launch_bounds__(threads, 1) so ptxas fixes the count at
// entry (168 for 384 threads), and the counts must balance it (40 + 2 * 232
// = 3 * 168): inc blocks until the CTA's pool has the registers.
template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg count");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg count");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
}  // namespace tl
#endif
// ==== end TMA and mbarrier =================================================
