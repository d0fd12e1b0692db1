// Does compute-sanitizer's racecheck model named barriers that only part
// of the block meets, and mbarriers? Every kernel here is free of races;
// gpu-suite.sh (SAN=1) runs racecheck on each and prints its summary.
//
//   nvcc -arch=sm_90a -o rc scripts/racecheck_named_barrier.cu
//   compute-sanitizer --tool racecheck ./rc 1|2|...|9
//
// On an H100 with CUDA 13.0 (2026-11-23) k1 reported 129 hazards, k2 and
// k3 none: after warpgroup 0 alone has met a barrier of 128 threads (as a
// warpgroup block's own barrier does, target/cuda/roles.go), racecheck
// reports its later writes as racing with warpgroup 1's reads although
// __syncthreads() separates them. 2026-11-25 (one hazard each is shown):
// k1 1, k4 3, the others none. k5 is how a drawn walk reads its ticket
// since then (FlashAttention's racecheck has been clean with it); k7-k9
// did not find what MLA's hand-off reports come from (a barrier of
// warpgroup 1's own on MLA's edge page, mirroring warpgroup 0's, left its
// 16 reports as they were).
#include <cstdint>
#include <cstdio>

// k1: warpgroup 0 meets a named barrier of its 128 threads, then the whole
// block meets twice around a write by warpgroup 0 that warpgroup 1 reads.
extern "C" __global__ void k1(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) {
    s[tid] = tid;
    asm volatile("bar.sync 4, 128;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) s[tid] = 2 * tid;
  __syncthreads();
  if (tid >= 128) out[tid] = s[tid - 128];
}

// k2: a hand-off (target/cuda/handoff.go): warpgroup 0 writes and arrives,
// warpgroup 1 waits and reads.
extern "C" __global__ void k2(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) {
    s[tid] = tid;
    asm volatile("bar.arrive 8, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 8, 256;" ::: "memory");
    out[tid] = s[tid - 128];
  }
}

// k3: k1 without warpgroup 0's own barrier.
extern "C" __global__ void k3(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) s[tid] = tid;
  __syncthreads();
  if (tid < 128) s[tid] = 2 * tid;
  __syncthreads();
  if (tid >= 128) out[tid] = s[tid - 128];
}

__device__ void mb_init(uint32_t a, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(n) : "memory"); }
__device__ void mb_arrive(uint32_t a) { asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(a) : "memory"); }
__device__ void mb_wait(uint32_t a, int parity) {
  asm volatile("{\n.reg .pred p;\nW%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W%=;\n}" ::"r"(a), "r"(parity) : "memory");
}

// A drawn walk's ticket (target/cuda/spread.go) on a ring of one slot: a
// producer thread waits for the slot to be empty, writes the next ticket
// and arrives on full; the 128 consumer threads wait on full and read the
// ticket, and free the slot as the Read says:
//   k4 (EveryLane): every lane reads; each warp's lane 0 arrives on empty
//      after __syncwarp() (the walks before the twenty-fifth session);
//   k5 (Lane0): lane 0 reads and passes the ticket to the warp by a
//      shuffle, then arrives (tl::lane0_read, since then);
//   k6 (EveryThread): every thread reads and arrives (a count of 128).
enum Read { EveryLane, Lane0, EveryThread };
template <Read R>
__device__ void ticket_ring(float* out) {
  __shared__ __align__(8) unsigned long long bars[2];
  __shared__ int ticket;
  int tid = threadIdx.x, lane = tid % 32;
  uint32_t full = (uint32_t)__cvta_generic_to_shared(&bars[0]), empty = (uint32_t)__cvta_generic_to_shared(&bars[1]);
  if (tid == 0) {
    mb_init(full, 1);
    mb_init(empty, R == EveryThread ? 128 : 4);
  }
  __syncthreads();
  int sum = 0;
  for (int i = 0; i < 4; ++i) {
    if (tid == 128) {
      mb_wait(empty, (i & 1) ^ 1);
      ticket = 100 + i;
      mb_arrive(full);
    } else if (tid < 128) {
      mb_wait(full, i & 1);
      if (R == Lane0) {
        int t = 0;
        if (lane == 0) t = *(volatile int*)&ticket;
        sum += __shfl_sync(0xffffffffu, t, 0);
      } else {
        sum += *(volatile int*)&ticket;
      }
      if (R == EveryThread) {
        mb_arrive(empty);
      } else {
        __syncwarp();
        if (lane == 0) mb_arrive(empty);
      }
    }
  }
  if (tid < 128) out[tid] = sum;
}
extern "C" __global__ void k4(float* out) { ticket_ring<EveryLane>(out); }
extern "C" __global__ void k5(float* out) { ticket_ring<Lane0>(out); }
extern "C" __global__ void k6(float* out) { ticket_ring<EveryThread>(out); }

// k7: k1 with warpgroup 1 meeting a barrier of its own 128 threads too,
// as often as warpgroup 0 meets its.
extern "C" __global__ void k7(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) {
    s[tid] = tid;
    asm volatile("bar.sync 4, 128;" ::: "memory");
  } else {
    asm volatile("bar.sync 5, 128;" ::: "memory");
  }
  __syncthreads();
  if (tid < 128) s[tid] = 2 * tid;
  __syncthreads();
  if (tid >= 128) out[tid] = s[tid - 128];
}

// k8: a hand-off (k2) after warpgroup 0 has met a barrier of its own, as
// MLA's warpgroup 0 does between its pages.
extern "C" __global__ void k8(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) {
    s[tid] = tid;
    asm volatile("bar.sync 4, 128;" ::: "memory");
    asm volatile("bar.arrive 8, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 8, 256;" ::: "memory");
    out[tid] = s[tid - 128];
  }
}

// k9: k8 with warpgroup 1 meeting a barrier of its own first, as often.
extern "C" __global__ void k9(float* out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  if (tid < 128) {
    s[tid] = tid;
    asm volatile("bar.sync 4, 128;" ::: "memory");
    asm volatile("bar.arrive 8, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 5, 128;" ::: "memory");
    asm volatile("bar.sync 8, 256;" ::: "memory");
    out[tid] = s[tid - 128];
  }
}

int main(int argc, char** argv) {
  float* d;
  cudaMalloc(&d, 256 * sizeof(float));
  int k = argc > 1 ? argv[1][0] - '0' : 0;
  if (k == 1) k1<<<1, 256>>>(d);
  if (k == 2) k2<<<1, 256>>>(d);
  if (k == 3) k3<<<1, 256>>>(d);
  if (k == 4) k4<<<1, 160>>>(d);
  if (k == 5) k5<<<1, 160>>>(d);
  if (k == 6) k6<<<1, 160>>>(d);
  if (k == 7) k7<<<1, 256>>>(d);
  if (k == 8) k8<<<1, 256>>>(d);
  if (k == 9) k9<<<1, 256>>>(d);
  cudaError_t err = cudaDeviceSynchronize();
  printf("k%d: %s\n", k, cudaGetErrorString(err));
  return err != cudaSuccess;
}
