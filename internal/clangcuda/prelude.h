// What NVRTC gives a CUDA program without includes, declared for clang's
// CUDA front end (-nocudainc -nocudalib --cuda-device-only), so that the
// tests compile generated CUDA C++ to PTX without a CUDA toolkit: the
// C++ is checked (names, types, overloads, asm constraints); the PTX is
// not assembled. Declarations only: nothing is linked.
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __cluster_dims__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
struct __tg_uint3 {
  unsigned x, y, z;
};
extern __device__ const __tg_uint3 threadIdx, blockIdx, blockDim, gridDim;
extern __device__ const int warpSize;
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned = 0xffffffffu);
__device__ unsigned __activemask();
__device__ int __all_sync(unsigned, int);
__device__ int __any_sync(unsigned, int);
__device__ unsigned __ballot_sync(unsigned, int);
__device__ void __trap();
__device__ void __nanosleep(unsigned);
__device__ long long clock64();
__device__ float __shfl_xor_sync(unsigned, float, int, int = 32);
__device__ int __shfl_xor_sync(unsigned, int, int, int = 32);
__device__ unsigned __shfl_xor_sync(unsigned, unsigned, int, int = 32);
__device__ float __shfl_sync(unsigned, float, int, int = 32);
__device__ int __shfl_sync(unsigned, int, int, int = 32);
__device__ unsigned __shfl_sync(unsigned, unsigned, int, int = 32);
__device__ float __uint_as_float(unsigned);
__device__ unsigned __float_as_uint(float);
__device__ float __int_as_float(int);
__device__ int __float_as_int(float);
__device__ unsigned long long __cvta_generic_to_shared(const void*);
__device__ float atomicAdd(float*, float);
__device__ int atomicAdd(int*, int);
__device__ unsigned atomicAdd(unsigned*, unsigned);
__device__ int atomicCAS(int*, int, int);
__device__ unsigned atomicCAS(unsigned*, unsigned, unsigned);
__device__ int atomicExch(int*, int);
__device__ int abs(int);
__device__ long long abs(long long);
__device__ float abs(float);
template <class A, class B>
__device__ inline auto min(A a, B b) { return a < b ? a : b; }
template <class A, class B>
__device__ inline auto max(A a, B b) { return a < b ? b : a; }
extern "C" {
__device__ float expf(float);
__device__ float exp2f(float);
__device__ float logf(float);
__device__ float log2f(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float fminf(float, float);
__device__ float fmaxf(float, float);
__device__ float tanhf(float);
__device__ float erff(float);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float powf(float, float);
__device__ float fabsf(float);
__device__ float log1pf(float);
__device__ float expm1f(float);
__device__ float floorf(float);
__device__ float ceilf(float);
__device__ float truncf(float);
__device__ float roundf(float);
__device__ float rintf(float);
__device__ float __expf(float);
__device__ float __logf(float);
__device__ float __fdividef(float, float);
}
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) int4 {
  int x, y, z, w;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
__device__ inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
__device__ inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
__device__ inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
__device__ inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
__device__ inline float2 make_float2(float x, float y) { return float2{x, y}; }
