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
__device__ __forceinline__ float e4m3_to_f32(uint8_t x) {
  uint16_t h;
  asm("{ .reg .b32 t; cvt.rn.f16x2.e4m3x2 t, %1; mov.b32 {%0, _}, t; }" : "=h"(h) : "h"(uint16_t(x)));
  return f16_to_f32(h);
}
__device__ __forceinline__ float e5m2_to_f32(uint8_t x) { return f16_to_f32(uint16_t(x) << 8); }
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
}  // namespace tl

// ---- Hopper (sm_90a) -----------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tl {
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
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
