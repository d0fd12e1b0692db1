package codeobj

import (
	"strings"
	"testing"
)

// The test kernels, compiled together as one code object (testSource) so
// that the report of a multi-kernel object is tested too. testdata holds
// the tools' output for it (go test -run TestCaptured -update rewrites it).

const prelude = `typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float4_ __attribute__((ext_vector_type(4)));
#define KERNEL extern "C" __attribute__((global))
#define WG(n) __attribute__((amdgpu_flat_work_group_size(n, n)))
#define TID() ((int)__builtin_amdgcn_workitem_id_x())
#define BID() ((int)__builtin_amdgcn_workgroup_id_x())
`

// want is what a kernel's report must show.
type want struct {
	lds        int  // LDS bytes, exactly
	ldsTraffic bool // ds_read, ds_write and s_barrier each at least once
	global     bool // global_load and global_store each at least once
	mfma       bool // at least one MFMA
	spills     bool // VGPR spills stored to scratch; no spills when false
	scratch    int  // at least this many bytes of scratch
	vgprs      int  // .vgpr_count exactly, when nonzero
	agprs      int  // .agpr_count exactly
	maxWG      int  // .max_flat_workgroup_size
	waves      int  // waves per SIMD at maxWG
	limiter    string
	// llvm is the compiler's own occupancy (clang -S, "; Occupancy:"),
	// which does not require whole workgroups to fit.
	llvm int
}

var testKernels = []struct {
	name, src string
	want      want
}{
	{
		// 256 floats through LDS: 1 KiB, far from any limit; a default
		// (1024-thread) workgroup is 16 waves, 4 per SIMD, and two fit.
		name: "copy_lds",
		src: `KERNEL void copy_lds(const float* in, float* out) {
  __attribute__((shared)) float buf[256];
  int t = TID() & 255, b = BID();
  buf[t] = in[b * 256 + t];
  __builtin_amdgcn_s_barrier();
  out[b * 256 + t] = buf[255 - t];
}
`,
		want: want{lds: 1024, ldsTraffic: true, global: true, maxWG: 1024, waves: 8, llvm: 8},
	},
	{
		name: "mfma_16x16x16",
		src: `KERNEL void mfma_16x16x16(const half4* a, const half4* b, float4_* c) {
  int t = TID();
  float4_ acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[t], b[t], acc, 0, 0, 0);
  c[t] = acc;
}
`,
		want: want{mfma: true, global: true, maxWG: 1024, waves: 8, llvm: 8},
	},
	{
		// Clobbering v63 and a63 makes the kernel hold 64 VGPRs and 64
		// AGPRs: 128 of the 512-entry unified file, so 512/128 = 4 waves
		// per SIMD; 4-wave workgroups, so 4 per CU.
		name: "agpr_file",
		src: `KERNEL WG(256) void agpr_file(float* out) {
  asm volatile("" ::: "v63", "a63");
  out[TID()] = 1.0f;
}
`,
		want: want{vgprs: 128, agprs: 64, maxWG: 256, waves: 4, limiter: LimitVGPR, llvm: 4},
	},
	{
		// 201 VGPRs round up to 208: 512/208 = 2 waves per SIMD, 8 per CU,
		// less than a 1024-thread workgroup's 16, which therefore cannot be
		// launched; the compiler, counting waves alone, says 2.
		name: "vgpr_201",
		src: `KERNEL void vgpr_201(float* out) {
  asm volatile("" ::: "v200");
  out[TID()] = 1.0f;
}
`,
		want: want{vgprs: 201, maxWG: 1024, waves: 0, limiter: LimitVGPR, llvm: 2},
	},
	{
		// 64 live values per thread under a 32-VGPR budget: spills.
		name: "spill",
		src: `KERNEL __attribute__((amdgpu_num_vgpr(32))) void spill(const float* in, float* out) {
  int t = TID();
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; i++) v[i] = in[t + i * 256];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; i++) s += v[i] * v[63 - i];
#pragma unroll
  for (int i = 0; i < 64; i++) out[t + i * 256] = v[i] * s;
}
`,
		want: want{global: true, spills: true, scratch: 4, maxWG: 1024, waves: 8, llvm: 8},
	},
	{
		// A 4 KiB private array indexed at run time lives in scratch
		// without any spill.
		name: "private_array",
		src: `KERNEL void private_array(float* out, int n) {
  float arr[1024];
  int t = TID();
  for (int i = 0; i < 1024; i++) arr[(i * 7 + t) & 1023] = out[i * 64 + t] * 2.0f;
  out[t] = arr[n & 1023];
}
`,
		want: want{global: true, scratch: 4096, maxWG: 1024, waves: 8, llvm: 8},
	},
	{
		// 40 KiB of the CU's 64 KiB: one 4-wave workgroup per CU, one wave
		// per SIMD.
		name: "lds_40k",
		src: `KERNEL WG(256) void lds_40k(float* out) {
  __attribute__((shared)) float buf[10240];
  int t = TID();
  for (int i = t; i < 10240; i += 256) buf[i] = out[i];
  __builtin_amdgcn_s_barrier();
  out[BID() * 256 + t] = buf[10239 - t];
}
`,
		want: want{lds: 40960, ldsTraffic: true, global: true, maxWG: 256, waves: 1, limiter: LimitLDS, llvm: 1},
	},
	{
		// 16 KiB: four workgroups per CU, four waves per SIMD.
		name: "lds_16k",
		src: `KERNEL WG(256) void lds_16k(float* out) {
  __attribute__((shared)) float buf[4096];
  int t = TID();
  for (int i = t; i < 4096; i += 256) buf[i] = out[i];
  __builtin_amdgcn_s_barrier();
  out[BID() * 256 + t] = buf[4095 - t];
}
`,
		want: want{lds: 16384, ldsTraffic: true, global: true, maxWG: 256, waves: 4, limiter: LimitLDS, llvm: 4},
	},
}

// testSource is every test kernel in one translation unit.
func testSource() string {
	var b strings.Builder
	b.WriteString(prelude)
	for _, k := range testKernels {
		b.WriteString(k.src)
	}
	return b.String()
}

// checkKernel compares a kernel's report with w.
func checkKernel(t *testing.T, k Kernel, w want) {
	t.Helper()
	h := k.Instr
	if k.LDSBytes != w.lds {
		t.Errorf("LDS = %d B, want %d", k.LDSBytes, w.lds)
	}
	if w.ldsTraffic && (h.LDSRead == 0 || h.LDSWrite == 0 || h.Barrier == 0) {
		t.Errorf("ds_read %d, ds_write %d, s_barrier %d: want each > 0", h.LDSRead, h.LDSWrite, h.Barrier)
	}
	if !w.ldsTraffic && h.LDSRead+h.LDSWrite+h.Barrier != 0 {
		t.Errorf("ds_read %d, ds_write %d, s_barrier %d: want none", h.LDSRead, h.LDSWrite, h.Barrier)
	}
	if w.global && (h.GlobalLoad == 0 || h.GlobalStore == 0) {
		t.Errorf("global_load %d, global_store %d: want each > 0", h.GlobalLoad, h.GlobalStore)
	}
	if w.mfma != (h.MFMA > 0) {
		t.Errorf("MFMA = %d, want some: %v", h.MFMA, w.mfma)
	}
	if w.spills && (k.VGPRSpills == 0 || h.ScratchStore == 0) || !w.spills && k.Spills() != 0 {
		t.Errorf("VGPR spills %d, SGPR spills %d, scratch_store %d: want spills: %v", k.VGPRSpills, k.SGPRSpills, h.ScratchStore, w.spills)
	}
	if w.scratch > 0 && (k.ScratchBytes < w.scratch || h.ScratchStore == 0) || w.scratch == 0 && k.ScratchBytes != 0 {
		t.Errorf("scratch %d B, scratch_store %d: want at least %d B (none if 0)", k.ScratchBytes, h.ScratchStore, w.scratch)
	}
	if w.vgprs != 0 && k.VGPRs != w.vgprs {
		t.Errorf("VGPRs = %d, want %d", k.VGPRs, w.vgprs)
	}
	if k.AGPRs != w.agprs {
		t.Errorf("AGPRs = %d, want %d", k.AGPRs, w.agprs)
	}
	if k.SGPRs == 0 || k.WavefrontSize != 64 {
		t.Errorf("SGPRs %d, wavefront %d: want > 0 and 64", k.SGPRs, k.WavefrontSize)
	}
	if k.MaxWorkgroupSize != w.maxWG {
		t.Errorf("max workgroup = %d, want %d", k.MaxWorkgroupSize, w.maxWG)
	}
	if o := k.Occupancy; o.WavesPerSIMD != w.waves || o.Limiter != w.limiter {
		t.Errorf("occupancy %d waves/SIMD limited by %q, want %d by %q (%+v)", o.WavesPerSIMD, o.Limiter, w.waves, w.limiter, o)
	}
	if h.Total == 0 {
		t.Error("no instructions")
	}
}
