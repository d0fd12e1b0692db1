// A stand-in for libamdhip64.so with the prototypes of ROCm's
// hip_runtime_api.h, for testing the package's calls across the C ABI on
// machines without ROCm. "Device" memory is host memory, and launching the
// kernels of kernels.hip runs them on the host.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef void* hipStream_t;
typedef void* hipEvent_t;
typedef void* hipModule_t;
typedef void* hipFunction_t;

enum { ok = 0, invalidValue = 1, invalidDevice = 101, invalidImage = 200, notFound = 500, notReady = 600 };

hipError_t hipInit(unsigned flags) { return flags ? invalidValue : ok; }
hipError_t hipDriverGetVersion(int* v) { *v = 60342134; return ok; }
hipError_t hipRuntimeGetVersion(int* v) { *v = 60342134; return ok; }

const char* hipGetErrorName(hipError_t e) {
  switch (e) {
    case invalidValue: return "hipErrorInvalidValue";
    case invalidDevice: return "hipErrorInvalidDevice";
    case notFound: return "hipErrorNotFound";
  }
  return "hipErrorUnknown";
}
const char* hipGetErrorString(hipError_t e) { return e == invalidValue ? "invalid argument" : "unknown error"; }

static int current = -1;
hipError_t hipGetDeviceCount(int* n) { *n = 1; return ok; }
hipError_t hipSetDevice(int d) {
  if (d != 0) return invalidDevice;
  current = d;
  return ok;
}
hipError_t hipDeviceGetName(char* name, int len, int dev) {
  strncpy(name, "Stub MI300X", len);
  return ok;
}
hipError_t hipDeviceGetAttribute(int* v, int attr, int dev) {
  switch (attr) {
    case 5: *v = 2100000; return ok;      // ClockRate
    case 19: *v = 4 << 20; return ok;     // L2CacheSize
    case 23: *v = 9; return ok;           // ComputeCapabilityMajor
    case 56: *v = 1024; return ok;        // MaxThreadsPerBlock
    case 57: *v = 2048; return ok;        // MaxThreadsPerMultiProcessor
    case 59: *v = 8192; return ok;        // MemoryBusWidth
    case 60: *v = 1300000; return ok;     // MemoryClockRate
    case 61: *v = 4; return ok;           // ComputeCapabilityMinor
    case 63: *v = 304; return ok;         // MultiprocessorCount
    case 71: *v = 65536; return ok;       // MaxRegistersPerBlock
    case 74: *v = 65536; return ok;       // MaxSharedMemoryPerBlock
    case 76: *v = 65536; return ok;       // SharedMemPerMultiprocessor
    case 87: *v = 64; return ok;          // WarpSize
    case 10017: *v = 100000; return ok;   // WallClockRate
  }
  return invalidValue;
}
hipError_t hipDeviceTotalMem(size_t* bytes, int dev) { *bytes = (size_t)192 << 30; return ok; }
hipError_t hipDeviceSynchronize(void) { return current == 0 ? ok : invalidDevice; }
hipError_t hipMemGetInfo(size_t* free, size_t* total) {
  *free = (size_t)190 << 30;
  *total = (size_t)192 << 30;
  return ok;
}
// The R0600 layout: name at 0, gcnArchName at 1160, 1472 bytes.
hipError_t hipGetDevicePropertiesR0600(void* p, int dev) {
  memset(p, 0, 1472);
  strcpy((char*)p, "Stub MI300X");
  strcpy((char*)p + 1160, "gfx942:sramecc+:xnack-");
  return ok;
}

hipError_t hipMalloc(void** p, size_t n) {
  *p = calloc(1, n);
  return *p ? ok : 2;
}
hipError_t hipFree(void* p) { free(p); return ok; }
hipError_t hipMemcpy(void* dst, const void* src, size_t n, int kind) {
  if (kind < 1 || kind > 3) return invalidValue;
  memmove(dst, src, n);
  return ok;
}
hipError_t hipMemset(void* dst, int v, size_t n) { memset(dst, v, n); return ok; }

static char handles[64];
static int nextHandle;
static void* handle(void) { return &handles[nextHandle++ % 64]; }
hipError_t hipStreamCreate(hipStream_t* s) { *s = handle(); return ok; }
hipError_t hipStreamDestroy(hipStream_t s) { return s ? ok : invalidValue; }
hipError_t hipStreamSynchronize(hipStream_t s) { return ok; }
hipError_t hipStreamQuery(hipStream_t s) { return ok; }
hipError_t hipEventCreate(hipEvent_t* e) { *e = handle(); return ok; }
hipError_t hipEventDestroy(hipEvent_t e) { return e ? ok : invalidValue; }
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return e ? ok : invalidValue; }
hipError_t hipEventSynchronize(hipEvent_t e) { return e ? ok : invalidValue; }
hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
  *ms = a != b ? 0.25f : 0;
  return ok;
}

static const unsigned char* loadedImage;
hipError_t hipModuleLoadData(hipModule_t* m, const void* image) {
  if (memcmp(image, "\x7f" "ELF", 4) != 0) return invalidImage;
  loadedImage = image;
  *m = handle();
  return ok;
}
hipError_t hipModuleUnload(hipModule_t m) { loadedImage = NULL; return ok; }

enum { IOTA = 1, AXPB, REVERSE };
static int kernels[4] = {0, IOTA, AXPB, REVERSE};
hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  // The image must still be readable where it was loaded from.
  if (!loadedImage || memcmp(loadedImage, "\x7f" "ELF", 4) != 0) return invalidImage;
  if (!strcmp(name, "iota")) *f = &kernels[IOTA];
  else if (!strcmp(name, "axpb")) *f = &kernels[AXPB];
  else if (!strcmp(name, "reverse_block")) *f = &kernels[REVERSE];
  else return notFound;
  return ok;
}
hipError_t hipModuleGetGlobal(void** p, size_t* bytes, hipModule_t m, const char* name) {
  static int counter;
  *p = &counter;
  *bytes = sizeof counter;
  return ok;
}
hipError_t hipFuncGetAttribute(int* v, int attr, hipFunction_t f) {
  switch (attr) {
    case 0: *v = 1024; return ok;
    case 1: *v = 0; return ok;
    case 3: *v = 0; return ok;
    case 4: *v = *(int*)f == REVERSE ? 6 : 4; return ok;
    case 8: *v = 65536; return ok;
  }
  return invalidValue;
}

// Runs the kernels of kernels.hip on the host, one work-item at a time.
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                 hipStream_t stream, void** params, void** extra) {
  if (extra || !params || gy != 1 || gz != 1 || by != 1 || bz != 1) return invalidValue;
  if (shared > 65536) return invalidValue;
  unsigned n = gx * bx;
  switch (*(int*)f) {
    case IOTA: {
      int* out = *(int**)params[0];
      int count = *(int*)params[1];
      for (unsigned i = 0; i < n; i++)
        if (i < (unsigned)count) out[i] = (int)i;
      return ok;
    }
    case AXPB: {
      float* y = *(float**)params[0];
      const float* x = *(const float**)params[1];
      float a = *(float*)params[2], b = *(float*)params[3];
      long long count = *(long long*)params[4];
      for (unsigned i = 0; i < n; i++)
        if (i < count) y[i] = a * x[i] + b;
      return ok;
    }
    case REVERSE: {
      if (shared < bx * sizeof(int)) return invalidValue;
      int* out = *(int**)params[0];
      const int* in = *(const int**)params[1];
      for (unsigned b = 0; b < gx; b++)
        for (unsigned t = 0; t < bx; t++) out[b * bx + t] = in[b * bx + bx - 1 - t];
      return ok;
    }
  }
  return invalidValue;
}
