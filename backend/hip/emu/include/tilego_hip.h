// tilego device library for AMD GPUs, emulated on the host: the API of
// compiler/cudagen/include/tilego_hip.h for a host build (clang++-19
// -std=c++20 -pthread), so that a generated gfx942 kernel runs on the CPU
// and every index, layout, swizzle, mask and MFMA lane mapping it computes
// can be checked against the interpreter.
//
// Every GPU thread is an OS thread; a block's threads run concurrently and
// blocks run one after another, so the block's LDS is one global array
// (smem, TL_EMU_LDS_BYTES long, defined before this header is included).
// A wave is 64 consecutive threads: cross-lane operations exchange values
// through per-wave arrays between per-wave barriers, and all the lanes
// taking part must call them together, as they do on the GPU.
//
// The vector types, conversions, math, swz and get_h/set_h are the real
// header's own (its host section, included here as tilego_hip_device.h). Only C headers: the
// C++ library's would double the time of a build.
#pragma once
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The device header's uint64_t (unsigned long long) differs from glibc's
// (unsigned long): keep the system's.
#define uint64_t tl_emu_device_uint64_t
#include "tilego_hip_device.h"
#undef uint64_t
#include <stdint.h>

#ifndef TL_EMU_LDS_BYTES
#error "TL_EMU_LDS_BYTES must be defined (the program's dynamic LDS bytes)"
#endif

#define __global__
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)


extern "C" {
float expf(float);
float logf(float);
float exp2f(float);
float log2f(float);
float sqrtf(float);
}
inline float fabsf(float x) { return __builtin_fabsf(x); }
inline float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
inline float fminf(float a, float b) { return __builtin_fminf(a, b); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }

// The block's LDS (one block runs at a time).
extern "C" {
alignas(1024) uint8_t smem[TL_EMU_LDS_BYTES > 0 ? TL_EMU_LDS_BYTES : 16];
}

namespace tl_emu {

struct dim3 {
  unsigned x, y, z;
};
inline thread_local dim3 thread_idx, block_idx;
inline dim3 grid_dim, block_dim;

// What each thread is doing, for the watchdog's report of a hang.
enum State : int { Running, AtSync, AtWave, Returned, BlockEnd };
inline int* states;
inline thread_local int tid = -1;
inline void set_state(int s) {
  if (tid >= 0) __atomic_store_n(&states[tid], s, __ATOMIC_RELAXED);
}

// A reusable barrier of n threads: the last to arrive releases the
// others; the atomics order every thread's memory operations before the
// barrier before every thread's after it.
struct Barrier {
  int n = 0;
  int count = 0;
  unsigned gen = 0;
  void wait() {
    const unsigned g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    if (__atomic_fetch_add(&count, 1, __ATOMIC_ACQ_REL) == n - 1) {
      __atomic_store_n(&count, 0, __ATOMIC_RELAXED);
      __atomic_fetch_add(&gen, 1, __ATOMIC_ACQ_REL);
      syscall(SYS_futex, &gen, FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0);
      return;
    }
    for (int i = 0; i < 16; ++i) {
      if (__atomic_load_n(&gen, __ATOMIC_ACQUIRE) != g) return;
      sched_yield();
    }
    while (__atomic_load_n(&gen, __ATOMIC_ACQUIRE) == g) syscall(SYS_futex, &gen, FUTEX_WAIT_PRIVATE, g, nullptr, nullptr, 0);
  }
};

inline Barrier block_bar, launch_bar;
// Waves (64 lanes) and their halves (32 lanes, a shuffle's reach).
inline Barrier* wave_bars;
inline Barrier* half_bars;
inline uint32_t (*xch)[64][4];  // [wave][lane][word]
inline uint16_t (*xa)[64][4];   // MFMA operands [wave][lane][i]
inline uint16_t (*xb)[64][4];

inline int lane() { return tid % 64; }
inline int wave() { return tid / 64; }
inline void wave_sync() {
  set_state(AtWave);
  wave_bars[wave()].wait();
  set_state(Running);
}
inline void half_sync() {
  set_state(AtWave);
  half_bars[tid / 32].wait();
  set_state(Running);
}


// With stagger_us = D (the launch's), after every block barrier the waves
// set off one after another, D apart, in an order that alternates from
// barrier to barrier and block to block (first to last, then last to
// first), so a wave that reads LDS another wave writes without a barrier
// between them reads it first one way round or the other. Lanes of a wave
// set off together, as they execute together on the GPU.
inline int stagger_us;
inline thread_local long phase;
inline void stagger() {
  if (stagger_us <= 0) return;
  const int waves = (int(block_dim.x) + 63) / 64;
  const long b = long(block_idx.x) + long(block_idx.y) * 7 + long(block_idx.z) * 13;
  const int pos = (phase + b) % 2 == 0 ? wave() : waves - 1 - wave();
  ++phase;
  if (pos > 0) usleep(useconds_t(pos * stagger_us));
}
}  // namespace tl_emu

#define threadIdx tl_emu::thread_idx
#define blockIdx tl_emu::block_idx
#define gridDim tl_emu::grid_dim
#define blockDim tl_emu::block_dim

inline void __syncthreads() {
  tl_emu::set_state(tl_emu::AtSync);
  tl_emu::block_bar.wait();
  tl_emu::set_state(tl_emu::Running);
  tl_emu::stagger();
}

inline float atomicAdd(float* p, float v) {
  uint32_t* u = (uint32_t*)p;
  uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(u, &old, __float_as_uint(__uint_as_float(old) + v), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return __uint_as_float(old);
}

namespace tl {

inline float exp2f_(float x) { return exp2f(x); }
inline float log2f_(float x) { return log2f(x); }
inline float inf() { return __int_as_float(0x7f800000); }
inline float fmax_(float a, float b) { return fmaxf(a, b); }

// An LDS address is the byte offset within the block's LDS.
inline uint32_t smem_addr(const void* p) {
  const uint8_t* q = (const uint8_t*)p;
  if (q < smem || q > smem + sizeof(smem)) {
    fprintf(stderr, "tl_emu: smem_addr of %p, outside the block's LDS\n", p);
    abort();
  }
  return uint32_t(q - smem);
}
inline uint8_t* lds_ptr(uint32_t a) { return smem + a; }

// 16 bytes global -> LDS at once; the part past src_bytes is zero-filled
// and its source is not read.
inline void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  const uint8_t* s = (const uint8_t*)src;
  uint8_t* d = lds_ptr(dst);
  for (int i = 0; i < 16; ++i) d[i] = i < src_bytes ? s[i] : 0;
}
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}
inline void prefetch_l2(const void*) {}

inline int lane_id() { return tl_emu::lane(); }

// Lane (lane ^ m)'s v; m < 32: within the half wave, as on the GPU.
inline uint32_t shfl_xor_u32(uint32_t v, int m) {
  using namespace tl_emu;
  if (m <= 0 || m >= 32) {
    fprintf(stderr, "tl_emu: shfl_xor mask %d outside 1..31\n", m);
    abort();
  }
  xch[wave()][lane()][0] = v;
  half_sync();
  const uint32_t r = xch[wave()][lane() ^ m][0];
  half_sync();
  return r;
}
inline float shfl_xor(float v, int m) { return __uint_as_float(shfl_xor_u32(__float_as_uint(v), m)); }

// Lane q of each quad holds words w0..w3; afterwards it holds lane j's
// word q as wj.
inline void quad_transpose(uint32_t& w0, uint32_t& w1, uint32_t& w2, uint32_t& w3) {
  using namespace tl_emu;
  uint32_t* mine = xch[wave()][lane()];
  mine[0] = w0, mine[1] = w1, mine[2] = w2, mine[3] = w3;
  half_sync();
  const int q = lane() & 3, base = lane() & ~3;
  w0 = xch[wave()][base + 0][q];
  w1 = xch[wave()][base + 1][q];
  w2 = xch[wave()][base + 2][q];
  w3 = xch[wave()][base + 3][q];
  half_sync();
}

// ---- matrix cores ------------------------------------------------------
// v_mfma_f32_16x16x16_f16 and v_mfma_f32_16x16x16_bf16 (CDNA3), D = A·B + C
// for a 16×16×16 tile held by a wave's 64 lanes. The lane mapping is AMD's
// (AMD Matrix Instruction Calculator, CDNA3, `--detail-instruction` of
// v_mfma_f32_16x16x16_f16 / _bf16; CDNA3 ISA guide, section 7.1): lane l
// holds A[l % 16][4*(l/16) + i] and B[4*(l/16) + i][l % 16] in its operand
// element i (i = 0..3), and accumulator register i of lane l is
// D[4*(l/16) + i][l % 16]. Products are exact in f32; the sums are in
// float64, rounded to f32 once.
//
// TL_EMU_WRONG_MFMA transposes the accumulator (register i of lane l is
// D[l % 16][4*(l/16) + i]), for the test that shows a wrong lane mapping
// fails the comparison.
template <class Conv>
inline void mfma_16x16x16(float* c, const uint16_t* a, const uint16_t* b, Conv conv) {
  using namespace tl_emu;
  const int w = wave(), l = lane();
  for (int i = 0; i < 4; ++i) xa[w][l][i] = a[i], xb[w][l][i] = b[i];
  wave_sync();
  float d[4];
  for (int i = 0; i < 4; ++i) {
#ifdef TL_EMU_WRONG_MFMA
    const int row = l % 16, col = 4 * (l / 16) + i;
#else
    const int row = 4 * (l / 16) + i, col = l % 16;
#endif
    double s = 0;
    for (int k = 0; k < 16; ++k) {
      // A[row][k] is lane row + 16*(k/4)'s element k%4; B[k][col] is lane
      // col + 16*(k/4)'s.
      const float x = conv(xa[w][row + 16 * (k / 4)][k % 4]);
      const float y = conv(xb[w][col + 16 * (k / 4)][k % 4]);
      s += double(x * y);
    }
    d[i] = float(s + double(c[i]));
  }
  wave_sync();
  for (int i = 0; i < 4; ++i) c[i] = d[i];
}
inline void mfma_f16_16x16x16(float* c, const uint16_t* a, const uint16_t* b) { mfma_16x16x16(c, a, b, f16_to_f32); }
inline void mfma_bf16_16x16x16(float* c, const uint16_t* a, const uint16_t* b) { mfma_16x16x16(c, a, b, bf16_to_f32); }

inline void red_add_f32x2(float* p, float a, float b) {
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
}

}  // namespace tl

// ---- launch --------------------------------------------------------------
// The host program the Go side generates calls run: it reads the launch
// (buffers, int arguments, grid, block size) from a file, runs every block
// and writes the buffers back.
namespace tl_emu {

// Bytes of guard either side of every buffer: a kernel that writes there
// wrote out of bounds.
constexpr size_t kGuard = 4096;
constexpr uint8_t kGuardByte = 0xa5;

struct Launch {
  int nbufs = 0, nints = 0;
  uint8_t** bufs = nullptr;
  size_t* sizes = nullptr;
  int* ints = nullptr;
  dim3 grid;
  int threads = 0;
  int64_t timeout_ms = 0;
};

inline int cur_block = -1;
inline int finished = 0;

[[noreturn]] inline void die(int code, const char* msg) {
  fputs(msg, stderr);
  fflush(stderr);
  _exit(code);
}

inline int64_t read_i64(FILE* f) {
  int64_t v;
  if (fread(&v, 8, 1, f) != 1) die(2, "tl_emu: short launch file\n");
  return v;
}

// The launch file: int64s (little-endian) nbufs, each buffer's bytes,
// nints, the ints, grid x y z, threads, timeout in ms, stagger in µs;
// then the buffers.
inline Launch read_launch(const char* path, int want_bufs, int want_ints) {
  FILE* f = fopen(path, "rb");
  if (!f) die(2, "tl_emu: cannot open the launch file\n");
  Launch l;
  l.nbufs = int(read_i64(f));
  if (l.nbufs != want_bufs) die(2, "tl_emu: wrong buffer count in the launch file\n");
  l.bufs = (uint8_t**)calloc(l.nbufs + 1, sizeof(uint8_t*));
  l.sizes = (size_t*)calloc(l.nbufs + 1, sizeof(size_t));
  for (int i = 0; i < l.nbufs; ++i) l.sizes[i] = size_t(read_i64(f));
  l.nints = int(read_i64(f));
  if (l.nints != want_ints) die(2, "tl_emu: wrong int count in the launch file\n");
  l.ints = (int*)calloc(l.nints + 1, sizeof(int));
  for (int i = 0; i < l.nints; ++i) l.ints[i] = int(read_i64(f));
  l.grid.x = unsigned(read_i64(f));
  l.grid.y = unsigned(read_i64(f));
  l.grid.z = unsigned(read_i64(f));
  l.threads = int(read_i64(f));
  l.timeout_ms = read_i64(f);
  stagger_us = int(read_i64(f));
  for (int i = 0; i < l.nbufs; ++i) {
    const size_t n = l.sizes[i], total = (n + 2 * kGuard + 4095) / 4096 * 4096;
    uint8_t* base = (uint8_t*)aligned_alloc(4096, total);
    memset(base, kGuardByte, total);
    l.bufs[i] = base + kGuard;
    if (fread(l.bufs[i], 1, n, f) != n) die(2, "tl_emu: short launch file\n");
  }
  fclose(f);
  return l;
}

// A buffer argument, converted to the parameter's pointer type.
struct AnyPtr {
  void* p;
  template <class T>
  operator T*() const { return (T*)p; }
};

inline void on_signal(int sig) {
  char msg[200];
  const int n = snprintf(msg, sizeof msg, "tl_emu: signal %d (%s) in block %d thread %d\n", sig,
                         sig == SIGSEGV ? "segmentation fault" : sig == SIGBUS ? "bus error" : sig == SIGFPE ? "arithmetic exception" : "abort",
                         __atomic_load_n(&cur_block, __ATOMIC_RELAXED), tid);
  if (n > 0) (void)!write(2, msg, size_t(n));
  _exit(4);
}

inline double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// The watchdog reports which threads of the running block wait where when
// the launch outlives its timeout (a barrier some threads never reach).
struct Watch {
  int64_t timeout_ms;
  int threads;
};
inline void* watchdog(void* arg) {
  const Watch w = *(Watch*)arg;
  const double end = now_ms() + double(w.timeout_ms);
  while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
    if (now_ms() > end) {
      static const char* names[] = {"running", "at __syncthreads", "at a wave operation", "returned", "between blocks"};
      fprintf(stderr, "tl_emu: hung: block %d after %lld ms:", __atomic_load_n(&cur_block, __ATOMIC_RELAXED), (long long)w.timeout_ms);
      int lo = 0;
      for (int t = 1; t <= w.threads; ++t) {
        if (t < w.threads && __atomic_load_n(&states[t], __ATOMIC_RELAXED) == __atomic_load_n(&states[lo], __ATOMIC_RELAXED)) continue;
        fprintf(stderr, " threads %d-%d %s;", lo, t - 1, names[__atomic_load_n(&states[lo], __ATOMIC_RELAXED)]);
        lo = t;
      }
      die(3, "\n");
    }
    usleep(20000);
  }
  return nullptr;
}

template <class K>
struct Worker {
  Launch* l;
  K* kernel;
  int t;
  long long blocks;
};

// One GPU thread: every block in order, each entered and left together by
// the whole block (launch_bar, apart from the kernel's own barriers so
// that a __syncthreads some threads skip hangs instead of pairing up).
template <class K>
void* worker(void* arg) {
  Worker<K>& w = *(Worker<K>*)arg;
  const Launch& l = *w.l;
  tid = w.t;
  thread_idx = {unsigned(w.t), 0, 0};
  for (long long b = 0; b < w.blocks; ++b) {
    block_idx = {unsigned(b % l.grid.x), unsigned(b / l.grid.x % l.grid.y), unsigned(b / l.grid.x / l.grid.y)};
    set_state(BlockEnd);
    launch_bar.wait();
    if (w.t == 0) {
      memset(smem, 0xff, sizeof(smem));
      __atomic_store_n(&cur_block, int(b), __ATOMIC_RELAXED);
    }
    launch_bar.wait();
    set_state(Running);
    stagger();
    (*w.kernel)();
    set_state(Returned);
  }
  return nullptr;
}

// run launches kernel over l's grid, blocks in order, one OS thread per GPU
// thread, and writes the buffers to out. Each block starts with its LDS
// filled with 0xff (NaN) bytes, so a read of LDS nothing wrote shows.
template <class K>
int run(Launch& l, const char* out, K kernel) {
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGABRT, on_signal);
  const int n = l.threads;
  grid_dim = l.grid;
  block_dim = {unsigned(n), 1, 1};
  const long long blocks = (long long)l.grid.x * l.grid.y * l.grid.z;
  if (n > 0 && blocks > 0) {
    const int waves = (n + 63) / 64, halves = (n + 31) / 32;
    states = new int[n]();
    wave_bars = new Barrier[waves];
    half_bars = new Barrier[halves];
    for (int w = 0; w < waves; ++w) wave_bars[w].n = n - 64 * w < 64 ? n - 64 * w : 64;
    for (int h = 0; h < halves; ++h) half_bars[h].n = n - 32 * h < 32 ? n - 32 * h : 32;
    xch = new uint32_t[waves][64][4]();
    xa = new uint16_t[waves][64][4]();
    xb = new uint16_t[waves][64][4]();
    block_bar.n = n;
    launch_bar.n = n;
    Watch watch{l.timeout_ms, n};
    pthread_t dog;
    pthread_create(&dog, nullptr, watchdog, &watch);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    pthread_t* ts = new pthread_t[n];
    Worker<K>* ws = new Worker<K>[n];
    for (int t = 0; t < n; ++t) {
      ws[t] = Worker<K>{&l, &kernel, t, blocks};
      if (pthread_create(&ts[t], &attr, worker<K>, &ws[t]) != 0) die(2, "tl_emu: cannot create a thread\n");
    }
    for (int t = 0; t < n; ++t) pthread_join(ts[t], nullptr);
    __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
    pthread_join(dog, nullptr);
  }
  for (int i = 0; i < l.nbufs; ++i) {
    const uint8_t* p = l.bufs[i];
    for (size_t j = 0; j < kGuard; ++j) {
      if (p[-1 - (long)j] != kGuardByte || p[l.sizes[i] + j] != kGuardByte) {
        fprintf(stderr, "tl_emu: the kernel wrote outside buffer %d (%zu bytes)\n", i, l.sizes[i]);
        return 5;
      }
    }
  }
  FILE* f = fopen(out, "wb");
  if (!f) die(2, "tl_emu: cannot create the output file\n");
  for (int i = 0; i < l.nbufs; ++i) {
    if (fwrite(l.bufs[i], 1, l.sizes[i], f) != l.sizes[i]) die(2, "tl_emu: writing the output file\n");
  }
  if (fclose(f) != 0) die(2, "tl_emu: writing the output file\n");
  return 0;
}

}  // namespace tl_emu

// CUDA's warp votes, for the generated code's 32-thread warps (half a
// wave): every lane of the half is there (the emulator launches whole
// waves, and the code votes in converged control flow).
inline unsigned __activemask() { return 0xffffffffu; }
inline bool __all_sync(unsigned mask, bool p) {
  using namespace tl_emu;
  xch[wave()][lane()][1] = p;
  half_sync();
  bool all = true;
  const int base = lane() & 32;
  for (int j = 0; j < 32; ++j) {
    if ((mask >> j) & 1) all = all && xch[wave()][base + j][1] != 0;
  }
  half_sync();
  return all;
}
