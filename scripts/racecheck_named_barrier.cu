// Does compute-sanitizer's racecheck model named barriers that only part
// of the block meets, and mbarriers? Every kernel here is free of races;
// gpu-suite.sh (SAN=1) runs racecheck on each and prints its summary.
//
//   nvcc -arch=sm_90a -o rc scripts/racecheck_named_barrier.cu
//   compute-sanitizer --tool racecheck ./rc 1|2|...|22
//
// What racecheck reports (H100 and H200, CUDA 13.0): k1 draws hazards,
// k2 and k3 none: after warpgroup 0 alone has met a barrier of 128 threads
// (as a warpgroup block's own barrier would as a named barrier), racecheck
// reports its later writes as racing with warpgroup 1's reads although
// __syncthreads() separates them. k4 draws hazards, k5 and k6 none: k5 is
// how a drawn walk reads its ticket (tl::lane0_read). MLA's hand-off loop,
// k10-k22: handed back by bar.arrive (k10-k12) or by the two warpgroups
// meeting at a named barrier (k14-k21) racecheck reports 2-16 hazards;
// handed back on an mbarrier (k13, k22) none. synccheck reports k14 and
// k15 (bar.sync met from two instructions) and nothing else. So the
// compiler hands over on an mbarrier, and a warpgroup's own barrier is an
// mbarrier too where shared memory has room (handoff.go's planHandBars):
// MLA's kernels and fuzzed programs with warpgroup blocks are racecheck-
// clean.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

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

// k2: a hand-off (compiler/cudagen/handoff.go): warpgroup 0 writes and arrives,
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

// A drawn walk's ticket (compiler/cudagen/grid_loop.go) on a ring of one slot: a
// producer thread waits for the slot to be empty, writes the next ticket
// and arrives on full; the 128 consumer threads wait on full and read the
// ticket, and free the slot as the Read says:
//   k4 (EveryLane): every lane reads; each warp's lane 0 arrives on empty
//      after __syncwarp();
//   k5 (Lane0): lane 0 reads and passes the ticket to the warp by a
//      shuffle, then arrives (tl::lane0_read, what the compiler emits);
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

// k10-k15: MLA's hand-off loop (compiler/cudagen/handoff.go) with the block's
// shape: each page warpgroup 0 takes the tiles back, writes the row
// factors and P, and hands them over on bar 8; warpgroup 1 waits on 8,
// reads them and hands them back. The consumers then meet at bar 1 of 256
// threads around the epilogue's write and read of the factor tile. A
// producer warp (threads 256-287) meets none of these barriers. The pages
// are a ring of two slots; the last page of a piece is an edge page.
//   k10: one piece of four pages, handed back on named barrier 9:
//        warpgroup 1 arrives (once before the loop, "nothing to hand back
//        yet", and after each page), warpgroup 0 waits (before each
//        page's writes, and once after the loop): the code before
//        2026-11-25;
//   k11: k10 with warpgroup 0 zeroing its edge page and meeting a barrier
//        of its own before reading it;
//   k12: k11 run for two pieces, as a split part walks its chunks;
//   k13: k12 handed back on an mbarrier of 256 arrivals, warpgroup 0
//        arriving and waiting for the phase it arrived on;
//   k14: k12 handed back by both warpgroups meeting at bar 9: warpgroup 1
//        before it waits for each page's hand-off, and both after the
//        loop (the code since);
//   k15: k14 with a second piece of one page, its edge page its first;
//   k16, k17: k14 and k15 with the two warpgroups meeting at bar 9 by the
//        non-aligned barrier.sync (tl::bar_sync_apart): bar.sync is
//        barrier.sync.aligned, which wants every thread at one instruction;
//   k18: k16 without the edge page (warpgroup 0 meets no barrier alone);
//   k19: k16 with warpgroup 1 meeting a barrier of its own on the edge
//        page too, before its hand-off wait;
//   k20: k16 with the edge page's zeroing ordered by a barrier of all 256
//        consumers (warpgroup 1 meets it before its hand-off wait);
//   k21, k22: k16 and k13 with the producer warp alive until the
//        consumers are done (it waits on an mbarrier that consumer 0
//        arrives at last), as MLA's producer thread is while it loads.
enum Edge { None, Own, Mirrored, All };
enum Back { Arrive, Mbar, Meet, MeetApart };
__device__ void mb_arrive_wait(uint32_t a) {
  asm volatile(
      "{\n.reg .b64 st;\n.reg .pred p;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n"
      "W%=:\nmbarrier.try_wait.shared::cta.b64 p, [%0], st;\n@!p bra W%=;\n}" ::"r"(a)
      : "memory");
}
template <int E, int Pieces, Back B, int LastPages = 4, bool Live = false>
__device__ void handoff_loop(float* out) {
  __shared__ float factors[64], p[128], page[2][128];
  __shared__ __align__(8) unsigned long long back, done;
  int tid = threadIdx.x;
  uint32_t bk = (uint32_t)__cvta_generic_to_shared(&back), dn = (uint32_t)__cvta_generic_to_shared(&done);
  float sum = 0;
  if (tid < 128) page[0][tid] = page[1][tid] = tid;
  if (tid == 0) {
    mb_init(bk, 256);
    mb_init(dn, 1);
  }
  __syncthreads();
  if (tid >= 256) {
    if (Live && tid == 256) mb_wait(dn, 0);
    return;
  }
  auto give_back = [&] {  // warpgroup 1, after its reads
    if (B == Mbar) mb_arrive(bk);
    if (B == Arrive) asm volatile("bar.arrive 9, 256;" ::: "memory");
  };
  auto take_back = [&] {  // warpgroup 0, before its writes
    if (B == Mbar) mb_arrive_wait(bk);
    else if (B == MeetApart) asm volatile("barrier.sync 9, 256;" ::: "memory");
    else asm volatile("bar.sync 9, 256;" ::: "memory");
  };
  int slot = 0;
  for (int piece = 0; piece < Pieces; ++piece) {
    int pages = piece == Pieces - 1 ? LastPages : 4;
    if (tid >= 128) give_back();
    for (int j = 0; j < pages; ++j, slot ^= 1) {
      if (tid < 128) {
        if (E != None && j == pages - 1) {
          page[slot][tid] = 0;
          if (E == All) asm volatile("barrier.sync 10, 256;" ::: "memory");
          else asm volatile("bar.sync 4, 128;" ::: "memory");
        }
        take_back();
        if (tid % 2 == 0) factors[tid / 2] = j + piece + tid;
        p[tid] = j * tid + page[slot][127 - tid];
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.arrive 8, 256;" ::: "memory");
      } else {
        if (E == Mirrored && j == pages - 1) asm volatile("bar.sync 5, 128;" ::: "memory");
        if (E == All && j == pages - 1) asm volatile("barrier.sync 10, 256;" ::: "memory");
        if (B == Meet) asm volatile("bar.sync 9, 256;" ::: "memory");
        if (B == MeetApart) asm volatile("barrier.sync 9, 256;" ::: "memory");
        asm volatile("bar.sync 8, 256;" ::: "memory");
        sum += factors[(tid - 128) / 2] + p[255 - tid];
        give_back();
      }
    }
    if (tid < 128 || B == Meet || B == MeetApart) take_back();
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (tid < 128 && tid % 2 == 0) factors[tid / 2] = 1.0f / (tid + 1);
    asm volatile("bar.sync 1, 256;" ::: "memory");
    sum *= factors[(tid % 128) / 2];
    asm volatile("bar.sync 1, 256;" ::: "memory");
  }
  out[tid] = sum;
  if (tid == 0) mb_arrive(dn);
}
extern "C" __global__ void k10(float* out) { handoff_loop<None, 1, Arrive>(out); }
extern "C" __global__ void k11(float* out) { handoff_loop<Own, 1, Arrive>(out); }
extern "C" __global__ void k12(float* out) { handoff_loop<Own, 2, Arrive>(out); }
extern "C" __global__ void k13(float* out) { handoff_loop<Own, 2, Mbar>(out); }
extern "C" __global__ void k14(float* out) { handoff_loop<Own, 2, Meet>(out); }
extern "C" __global__ void k15(float* out) { handoff_loop<Own, 2, Meet, 1>(out); }
extern "C" __global__ void k16(float* out) { handoff_loop<Own, 2, MeetApart>(out); }
extern "C" __global__ void k17(float* out) { handoff_loop<Own, 2, MeetApart, 1>(out); }
extern "C" __global__ void k18(float* out) { handoff_loop<None, 2, MeetApart>(out); }
extern "C" __global__ void k19(float* out) { handoff_loop<Mirrored, 2, MeetApart>(out); }
extern "C" __global__ void k20(float* out) { handoff_loop<All, 2, MeetApart>(out); }
extern "C" __global__ void k21(float* out) { handoff_loop<Own, 2, MeetApart, 4, true>(out); }
extern "C" __global__ void k22(float* out) { handoff_loop<Own, 2, Mbar, 4, true>(out); }

int main(int argc, char** argv) {
  float* d;
  cudaMalloc(&d, 288 * sizeof(float));
  int k = argc > 1 ? atoi(argv[1]) : 0;
  if (k == 1) k1<<<1, 256>>>(d);
  if (k == 2) k2<<<1, 256>>>(d);
  if (k == 3) k3<<<1, 256>>>(d);
  if (k == 4) k4<<<1, 160>>>(d);
  if (k == 5) k5<<<1, 160>>>(d);
  if (k == 6) k6<<<1, 160>>>(d);
  if (k == 7) k7<<<1, 256>>>(d);
  if (k == 8) k8<<<1, 256>>>(d);
  if (k == 9) k9<<<1, 256>>>(d);
  if (k == 10) k10<<<1, 288>>>(d);
  if (k == 11) k11<<<1, 288>>>(d);
  if (k == 12) k12<<<1, 288>>>(d);
  if (k == 13) k13<<<1, 288>>>(d);
  if (k == 14) k14<<<1, 288>>>(d);
  if (k == 15) k15<<<1, 288>>>(d);
  if (k == 16) k16<<<1, 288>>>(d);
  if (k == 17) k17<<<1, 288>>>(d);
  if (k == 18) k18<<<1, 288>>>(d);
  if (k == 19) k19<<<1, 288>>>(d);
  if (k == 20) k20<<<1, 288>>>(d);
  if (k == 21) k21<<<1, 288>>>(d);
  if (k == 22) k22<<<1, 288>>>(d);
  cudaError_t err = cudaDeviceSynchronize();
  printf("k%d: %s\n", k, cudaGetErrorString(err));
  return err != cudaSuccess;
}
