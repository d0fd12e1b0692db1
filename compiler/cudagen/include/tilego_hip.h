// tilego device library for AMD GPUs (gfx942): the primitives generated
// kernels call, with the names the CUDA library (tilego.cuh) gives them, in
// clang's HIP dialect with its AMDGPU builtins. It needs no ROCm headers:
// clang -x hip -nogpuinc compiles it. Storage types are raw bits (uint16_t
// for f16/bf16, uint8_t for f8) and every rounding is spelled out, so the
// results match the interpreter's bit for bit where CUDA's do.
//
// A wave has 64 lanes. The generated code's warps are 32 threads, as on
// NVIDIA: a wave is two of them, and shfl_xor with a mask under 32 stays
// within its half, as a warp shuffle does.
#pragma once
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;

#if defined(__AMDGCN__)
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline)) inline
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// The threads a block is launched with; CUDA's second argument (blocks an
// SM) has no counterpart here.
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, TL_FIRST(__VA_ARGS__, 0))))
#define TL_FIRST(a, ...) a

struct tl_dim3 {
  unsigned x, y, z;
};
__device__ __forceinline__ tl_dim3 tl_thread_idx() {
  return {__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()};
}
__device__ __forceinline__ tl_dim3 tl_block_idx() {
  return {__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()};
}
// The dispatch packet (HSA's hsa_kernel_dispatch_packet_t) holds the
// workgroup sizes (16-bit, from byte 4) and the grid sizes in work-items
// (32-bit, from byte 12).
__device__ __forceinline__ tl_dim3 tl_grid_dim() {
  const __attribute__((address_space(4))) uint8_t* p = (const __attribute__((address_space(4))) uint8_t*)__builtin_amdgcn_dispatch_ptr();
  const __attribute__((address_space(4))) uint16_t* wg = (const __attribute__((address_space(4))) uint16_t*)(p + 4);
  const __attribute__((address_space(4))) uint32_t* gr = (const __attribute__((address_space(4))) uint32_t*)(p + 12);
  return {gr[0] / wg[0], gr[1] / wg[1], gr[2] / wg[2]};
}
#define threadIdx tl_thread_idx()
#define blockIdx tl_block_idx()
#define gridDim tl_grid_dim()

// A block-wide barrier that also orders shared and global memory among
// the block's threads, as __syncthreads does.
__device__ __forceinline__ void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__device__ __forceinline__ float fabsf(float x) { return __builtin_fabsf(x); }
__device__ __forceinline__ float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__device__ __forceinline__ float fminf(float a, float b) { return __builtin_fminf(a, b); }
__device__ __forceinline__ float expf(float x) { return __builtin_expf(x); }
__device__ __forceinline__ float logf(float x) { return __builtin_logf(x); }
__device__ __forceinline__ float sqrtf(float x) { return __builtin_sqrtf(x); }
__device__ __forceinline__ float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
__device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ long long min(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long max(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ int abs(int a) { return a < 0 ? -a : a; }
__device__ __forceinline__ long long abs(long long a) { return a < 0 ? -a : a; }

// Global f32 adds at device scope (global_atomic_add_f32 on gfx942).
__device__ __forceinline__ float atomicAdd(float* p, float v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#else
// A host build of the conversions below, for tests that compare them with
// the interpreter's rounding (package fuzz's TestHIPConversions).
#define __device__
#define __forceinline__ inline
#endif

// CUDA's vector types, as the generated code uses them for 8- and 16-byte
// loads and stores.
struct __attribute__((aligned(8))) uint2 {
  uint32_t x, y;
};
struct __attribute__((aligned(16))) uint4 {
  uint32_t x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
__device__ __forceinline__ uint2 make_uint2(uint32_t x, uint32_t y) { return {x, y}; }
__device__ __forceinline__ uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return {x, y, z, w}; }
__device__ __forceinline__ float2 make_float2(float x, float y) { return {x, y}; }
__device__ __forceinline__ float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

__device__ __forceinline__ float __uint_as_float(uint32_t u) { return __builtin_bit_cast(float, u); }
__device__ __forceinline__ float __int_as_float(int u) { return __builtin_bit_cast(float, u); }
__device__ __forceinline__ uint32_t __float_as_uint(float f) { return __builtin_bit_cast(uint32_t, f); }
__device__ __forceinline__ int __float_as_int(float f) { return __builtin_bit_cast(int, f); }

namespace tl {

// ---- conversions -------------------------------------------------------
__device__ __forceinline__ float bf16_to_f32(uint16_t x) { return __uint_as_float(uint32_t(x) << 16); }
__device__ __forceinline__ float f16_to_f32(uint16_t x) { return float(__builtin_bit_cast(_Float16, x)); }
// Round to nearest even; a NaN stays a (quiet) NaN.
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ uint16_t f32_to_f16(float f) { return __builtin_bit_cast(uint16_t, (_Float16)f); }
// Toward zero.
__device__ __forceinline__ uint16_t f32_to_bf16_rz(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  return uint16_t(u >> 16);
}
__device__ __forceinline__ uint16_t f32_to_f16_rz(float f) {
  // The nearest f16 toward zero: round to nearest, then step back one ulp
  // toward zero where that went past f in magnitude.
  uint16_t h = f32_to_f16(f);
  const float a = __builtin_fabsf(f), b = __builtin_fabsf(f16_to_f32(h));
  if (a == a && b > a) h = uint16_t(h - 1);
  return h;
}
// Ties away from zero (as tilego.cuh: add half an ulp to the magnitude and
// truncate; NaN, infinities and results out of f16's normal range take the
// nearest-even path).
__device__ __forceinline__ uint16_t f32_to_bf16_ra(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f32_to_bf16_rz(f);
  return uint16_t((u + 0x8000u) >> 16);
}
__device__ __forceinline__ uint16_t f32_to_f16_ra(float f) {
  const float a = __builtin_fabsf(f);
  if (!(a < 65520.0f) || a < 6.103515625e-05f) return f32_to_f16(f);
  const uint32_t u = __float_as_uint(f) + 0x1000u;
  return f32_to_f16_rz(__uint_as_float(u & ~0x1fffu));
}

// OCP 8-bit floats, rounded to nearest even with saturation to the largest
// finite value (PTX's cvt.rn.satfinite): E4M3 (bias 7, largest 448, no
// infinities, NaN 0x7f) and E5M2 (bias 15, largest 57344). gfx942's own
// fp8 instructions use the FNUZ encodings, so these are spelled out (as
// tilego.cuh's are for sm_80, which has no f8 conversions).
// f8_round rounds f to mbits of mantissa and exponent bias, saturating to
// maxEnc.
__device__ __forceinline__ uint8_t f8_round(float f, int mbits, int bias, uint8_t maxEnc, uint8_t nan) {
  const uint32_t u = __float_as_uint(f);
  const uint8_t s = uint8_t((u >> 24) & 0x80u);
  float a = __builtin_fabsf(f);
  if (a != a) return uint8_t(s | nan);
  const int minExp = 1 - bias;
  int e = int((u >> 23) & 0xffu) - 127;
  if (e < minExp) e = minExp;  // subnormal: the smallest normal's step
  // a / 2^(e - mbits) is exact (a power-of-two scale); rint rounds it to
  // nearest even.
  const float q = __builtin_rintf(__builtin_ldexpf(a, mbits - e));
  uint32_t enc;
  if (q >= float(2 << mbits)) {  // rounded up to the next power of two
    enc = uint32_t(e + 1 + bias) << mbits;
  } else if (q >= float(1 << mbits)) {
    enc = (uint32_t(e + bias) << mbits) | (uint32_t(q) - (1u << mbits));
  } else {  // subnormal (or zero)
    enc = uint32_t(q);
  }
  if (a > 1e30f || enc > maxEnc) enc = maxEnc;
  return uint8_t(s | enc);
}
__device__ __forceinline__ uint8_t f32_to_e4m3(float f) { return f8_round(f, 3, 7, 0x7e, 0x7f); }
__device__ __forceinline__ uint8_t f32_to_e5m2(float f) { return f8_round(f, 2, 15, 0x7b, 0x7f); }
__device__ __forceinline__ float e4m3_to_f32(uint8_t x) {
  const float s = (x & 0x80) ? -1.0f : 1.0f;
  const int e = (x >> 3) & 15, m = x & 7;
  if ((x & 0x7f) == 0x7f) return __builtin_nanf("");
  if (e == 0) return s * __builtin_ldexpf(float(m), -9);
  return s * __builtin_ldexpf(float(8 + m), e - 10);
}
__device__ __forceinline__ float e5m2_to_f32(uint8_t x) { return f16_to_f32(uint16_t(uint16_t(x) << 8)); }
// ---- math functions ------------------------------------------------------
// Without ROCm's device library, the functions beyond exp and log are
// written here from exp and log, each accurate near 0 where the plain
// formula cancels. TestHIPMath measures their error against float64.
// e^x - 1: a Taylor polynomial below 0.5 in magnitude, exp above.
__device__ __forceinline__ float expm1_(float x) {
  const float a = __builtin_fabsf(x);
  if (a < 0.5f) {
    return x * (1.0f + x * (0.5f + x * (1.0f / 6 + x * (1.0f / 24 + x * (1.0f / 120 + x * (1.0f / 720 + x * (1.0f / 5040 + x * (1.0f / 40320))))))));
  }
  return __builtin_expf(x) - 1.0f;
}
// ln(1 + x): u = 1 + x rounded, and ln(u)·x/(u - 1) corrects for that
// rounding (Goldberg).
__device__ __forceinline__ float log1p_(float x) {
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  if (u == __builtin_inff() || !(x > -1.0f)) return __builtin_logf(u);
  return __builtin_logf(u) * (x / (u - 1.0f));
}
// tanh x = -expm1(-2|x|) / (expm1(-2|x|) + 2), signed; 1 from 9 on.
__device__ __forceinline__ float tanh_(float x) {
  const float a = __builtin_fabsf(x);
  if (!(a < 9.0f)) return a != a ? x : __builtin_copysignf(1.0f, x);
  const float e = expm1_(-2.0f * a);
  return __builtin_copysignf(-e / (e + 2.0f), x);
}
// x^y as exp2(y·log2|x|): relative error about |y·log2 x|·2^-24 beyond
// exp2's and log2's own; a negative x only to an integer power (an odd one
// negative), as C's pow.
__device__ __forceinline__ float pow_(float x, float y) {
  const float ax = __builtin_fabsf(x);
  if (y == 0.0f || x == 1.0f || (ax == 1.0f && __builtin_fabsf(y) == __builtin_inff())) return 1.0f;
  if (x != x || y != y) return x + y;
  const bool whole = __builtin_truncf(y) == y;
  const bool odd = whole && __builtin_fabsf(y) < 16777216.0f && (int(y) & 1);
  if (x < 0.0f && !whole) return ax == __builtin_inff() ? (y > 0.0f ? __builtin_inff() : 0.0f) : __builtin_nanf("");
  const float r = __builtin_exp2f(y * __builtin_log2f(ax));
  return odd && __builtin_signbitf(x) ? -r : r;
}
// erf: its Taylor series below 0.5 in magnitude, else 1 - erfc with
// erfc's rational approximation of fractional error under 1.2e-7
// (Numerical Recipes' erfcc); 1 from 4 on.
__device__ __forceinline__ float erf_(float x) {
  const float a = __builtin_fabsf(x);
  if (a < 0.5f) {
    const float z = x * x;
    return x * 1.12837916709551257f * (1.0f + z * (-1.0f / 3 + z * (1.0f / 10 + z * (-1.0f / 42 + z * (1.0f / 216 + z * (-1.0f / 1320 + z * (1.0f / 9360)))))));
  }
  if (!(a < 4.0f)) return a != a ? x : __builtin_copysignf(1.0f, x);
  const float t = 1.0f / (1.0f + 0.5f * a);
  const float p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  return __builtin_copysignf(1.0f - t * __builtin_expf(p - a * a), x);
}
// 1 / (1 + e^-x); e^x itself below -80, where e^-x overflows but the
// result is still a (subnormal) float.
// sin and cos: x = k·π/2 + r with |r| <= π/4, π/2 in three parts whose
// first two have 11 significant bits (so k times them is exact up to
// k = 2^13, |x| near 12,000), then their Taylor series in r (degree 9 and
// 10: under 3e-9 on the interval).
__device__ __forceinline__ void sincos_r(float x, float& r, int& q) {
  const float k = __builtin_rintf(x * 0.636619772f);
  r = __builtin_fmaf(k, -1.5703125f, x);
  r = __builtin_fmaf(k, -4.837512969970703e-4f, r);
  r = __builtin_fmaf(k, -7.549790126404332e-8f, r);
  q = int(k) & 3;
}
__device__ __forceinline__ float sin_poly(float r) {
  const float z = r * r;
  return r + r * z * (-1.0f / 6 + z * (1.0f / 120 + z * (-1.0f / 5040 + z * (1.0f / 362880))));
}
__device__ __forceinline__ float cos_poly(float r) {
  const float z = r * r;
  return 1.0f + z * (-0.5f + z * (1.0f / 24 + z * (-1.0f / 720 + z * (1.0f / 40320 + z * (-1.0f / 3628800)))));
}
__device__ __forceinline__ float sin_(float x) {
  if (!(__builtin_fabsf(x) < __builtin_inff())) return x - x;  // NaN for infinities, as sin's
  float r;
  int q;
  sincos_r(x, r, q);
  const float v = (q & 1) ? cos_poly(r) : sin_poly(r);
  return (q & 2) ? -v : v;
}
__device__ __forceinline__ float cos_(float x) {
  if (!(__builtin_fabsf(x) < __builtin_inff())) return x - x;
  float r;
  int q;
  sincos_r(x, r, q);
  const float v = (q & 1) ? sin_poly(r) : cos_poly(r);
  return ((q + 1) & 2) ? -v : v;
}
__device__ __forceinline__ float sigmoid_(float x) { return x < -80.0f ? __builtin_expf(x) : 1.0f / (1.0f + __builtin_expf(-x)); }

// Two f32 to a packed pair, lo in the low half.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  return uint32_t(f32_to_bf16(lo)) | (uint32_t(f32_to_bf16(hi)) << 16);
}
__device__ __forceinline__ uint32_t pack_f16(float lo, float hi) {
  return uint32_t(f32_to_f16(lo)) | (uint32_t(f32_to_f16(hi)) << 16);
}
// A packed pair to two f32, lo from the low half.
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float f16_lo(uint32_t w) { return f16_to_f32(uint16_t(w)); }
__device__ __forceinline__ float f16_hi(uint32_t w) { return f16_to_f32(uint16_t(w >> 16)); }

#if defined(__AMDGCN__)
// ---- math --------------------------------------------------------------
// v_exp_f32 and v_log_f32: base-2, approximate, as ex2.approx and
// lg2.approx are on NVIDIA.
__device__ __forceinline__ float exp2f_(float x) { return __builtin_amdgcn_exp2f(x); }
__device__ __forceinline__ float log2f_(float x) { return __builtin_amdgcn_logf(x); }
__device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float fmax_(float a, float b) { return __builtin_fmaxf(a, b); }

// ---- shared memory -----------------------------------------------------
// An LDS address is 32 bits wide, as a CUDA shared address is.
typedef __attribute__((address_space(3))) uint8_t lds_u8;
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return __builtin_bit_cast(uint32_t, (const lds_u8*)p);
}
__device__ __forceinline__ lds_u8* lds_ptr(uint32_t a) { return __builtin_bit_cast(lds_u8*, a); }

// cp_async16 copies 16 bytes global -> shared at once (src_bytes < 16
// zero-fills the rest): the loads complete before the code that follows
// reads the tile, so the group waits have nothing to wait for.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  const uint8_t* s = (const uint8_t*)src;
  lds_u8* d = lds_ptr(dst);
  if (src_bytes >= 16) {
    typedef __attribute__((__vector_size__(16))) uint32_t u32x4;
    *(__attribute__((address_space(3))) u32x4*)d = *(const u32x4*)s;
    return;
  }
  for (int i = 0; i < 16; ++i) d[i] = i < src_bytes ? s[i] : 0;
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N>
__device__ __forceinline__ void cp_async_wait() {}
__device__ __forceinline__ void prefetch_l2(const void*) {}

// ---- cross-lane ----------------------------------------------------------
__device__ __forceinline__ int lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
__device__ __forceinline__ uint32_t shfl_xor_u32(uint32_t v, int m) {
  return uint32_t(__builtin_amdgcn_ds_bpermute((lane_id() ^ m) << 2, int(v)));
}
__device__ __forceinline__ float shfl_xor(float v, int m) { return __uint_as_float(shfl_xor_u32(__float_as_uint(v), m)); }

// quad_transpose: lane q of each quad (q = lane % 4) holds words w0..w3;
// afterwards it holds lane j's word q as wj (tilego.cuh's), in four rounds
// of ds_bpermute.
__device__ __forceinline__ void quad_transpose(uint32_t& w0, uint32_t& w1, uint32_t& w2, uint32_t& w3) {
  const int q = lane_id() & 3;
  const uint32_t in[4] = {w0, w1, w2, w3};
  uint32_t out[4];
  // Round r: every lane offers its word (lane + r) & 3; lane q reads the
  // lane p = (q - r) & 3 of its quad, whose offer is word (p + r) & 3 = q.
  for (int r = 0; r < 4; ++r) {
    const int offer = (q + r) & 3;
    const uint32_t v = offer == 0 ? in[0] : offer == 1 ? in[1] : offer == 2 ? in[2] : in[3];
    const int p = (q - r) & 3;
    out[p] = uint32_t(__builtin_amdgcn_ds_bpermute(((lane_id() & ~3) | p) << 2, int(v)));
  }
  w0 = out[0];
  w1 = out[1];
  w2 = out[2];
  w3 = out[3];
}

// ---- matrix cores ------------------------------------------------------
// c[0..3] += A·B for one 16×16×16 step of a wave: a and b are this lane's
// four 16-bit operand elements (raw bits), c its four accumulator values,
// in the lane order of AMD's tables (layout.MFMAAccumulator).
typedef float tl_f32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 tl_f16x4 __attribute__((ext_vector_type(4)));
typedef short tl_i16x4 __attribute__((ext_vector_type(4)));
__device__ __forceinline__ void mfma_f16_16x16x16(float* c, const uint16_t* a, const uint16_t* b) {
  const tl_f16x4 va = {__builtin_bit_cast(_Float16, a[0]), __builtin_bit_cast(_Float16, a[1]), __builtin_bit_cast(_Float16, a[2]), __builtin_bit_cast(_Float16, a[3])};
  const tl_f16x4 vb = {__builtin_bit_cast(_Float16, b[0]), __builtin_bit_cast(_Float16, b[1]), __builtin_bit_cast(_Float16, b[2]), __builtin_bit_cast(_Float16, b[3])};
  tl_f32x4 vc = {c[0], c[1], c[2], c[3]};
  vc = __builtin_amdgcn_mfma_f32_16x16x16f16(va, vb, vc, 0, 0, 0);
  c[0] = vc[0], c[1] = vc[1], c[2] = vc[2], c[3] = vc[3];
}
__device__ __forceinline__ void mfma_bf16_16x16x16(float* c, const uint16_t* a, const uint16_t* b) {
  const tl_i16x4 va = {short(a[0]), short(a[1]), short(a[2]), short(a[3])};
  const tl_i16x4 vb = {short(b[0]), short(b[1]), short(b[2]), short(b[3])};
  tl_f32x4 vc = {c[0], c[1], c[2], c[3]};
  vc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(va, vb, vc, 0, 0, 0);
  c[0] = vc[0], c[1] = vc[1], c[2] = vc[2], c[3] = vc[3];
}

// ---- atomics -----------------------------------------------------------
__device__ __forceinline__ void red_add_f32x2(float* p, float a, float b) {
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
}

#endif  // __AMDGCN__
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
// 16-bit fragments live two to a 32-bit register; element i is the low
// half of a[i/2] when i is even.
__device__ __forceinline__ uint16_t get_h(const uint32_t* a, int i) { return uint16_t(a[i >> 1] >> ((i & 1) * 16)); }
__device__ __forceinline__ void set_h(uint32_t* a, int i, uint16_t v) {
  const uint32_t s = (i & 1) * 16;
  a[i >> 1] = (a[i >> 1] & ~(0xffffu << s)) | (uint32_t(v) << s);
}
}  // namespace tl

#if defined(__AMDGCN__)
// CUDA's warp votes for the generated code's 32-thread warps: the half of
// the wave's exec mask or ballot that holds this lane.
__device__ __forceinline__ unsigned __activemask() {
  return unsigned(__builtin_amdgcn_read_exec() >> (tl::lane_id() & 32));
}
__device__ __forceinline__ bool __all_sync(unsigned mask, bool p) {
  const unsigned half = unsigned(__builtin_amdgcn_ballot_w64(p) >> (tl::lane_id() & 32));
  return (half & mask) == mask;
}
#endif
