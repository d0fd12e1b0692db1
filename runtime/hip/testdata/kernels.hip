// Test kernels for runtime/hip, compiled without HIP headers (-nogpuinc),
// so builtins stand in for threadIdx, blockIdx, blockDim and __syncthreads.
#define KERNEL extern "C" __attribute__((global))

static __attribute__((device)) unsigned gid() {
  return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
         __builtin_amdgcn_workitem_id_x();
}

// iota writes each thread's global index.
KERNEL void iota(int* out, int n) {
  unsigned i = gid();
  if (i < (unsigned)n) out[i] = (int)i;
}

// axpb computes y = a*x + b over n elements (a 64-bit count).
KERNEL void axpb(float* y, const float* x, float a, float b, long long n) {
  unsigned i = gid();
  if (i < n) y[i] = __builtin_fmaf(a, x[i], b);
}

// reverse_block reverses each block's slice of in through dynamic LDS.
KERNEL void reverse_block(int* out, const int* in) {
  extern __attribute__((shared)) int lds[];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned nt = __builtin_amdgcn_workgroup_size_x();
  unsigned base = __builtin_amdgcn_workgroup_id_x() * nt;
  lds[t] = in[base + t];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[base + t] = lds[nt - 1 - t];
}
