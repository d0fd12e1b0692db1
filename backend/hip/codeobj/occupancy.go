package codeobj

import "strings"

// Limits are the resources of one compute unit that bound how many waves
// of a kernel can be resident at once.
//
// Sources for the CDNA2/CDNA3 values:
//   - LLVM, lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp (IsaInfo): targets
//     with the gfx90a instructions (gfx90a, gfx940-gfx942, gfx950) have
//     getMaxWavesPerEU 8, getTotalNumVGPRs 512, getVGPRAllocGranule 8 and
//     getEUsPerCU 4; gfx8 and later have getTotalNumSGPRs 800 and
//     getSGPRAllocGranule 16.
//   - The MI200 ISA guide, section 3.6.4, as cited by LLVM commit b7611370:
//     the 512 registers per lane are one file shared by architectural
//     VGPRs and AGPRs, at most 256 of each.
//   - ROCm "GPU hardware specifications" table: MI300X (gfx942) has, per
//     CU, 64 KiB of LDS, a 512 KiB VGPR file (4 SIMDs * 512 registers * 64
//     lanes * 4 bytes) and a 12.5 KiB SGPR file (4 * 800 * 4 bytes);
//     MI350X/MI355X (gfx950) have 160 KiB of LDS.
//   - ROCm clr, hipamd/src/hip_platform.cpp
//     (ihipOccupancyMaxActiveBlocksPerMultiprocessor), the runtime's own
//     occupancy rule: 8 waves per SIMD on gfx9 ("SPI 32 per CU"); register
//     waves are VGPRs per SIMD over the VGPR count rounded up to the
//     granule, capped by 800 over the SGPR count rounded up to 16; blocks
//     per CU are SIMDs * waves * wave size over the block size rounded up
//     to whole waves, and at most LDS per CU over LDS per block.
//
// The occupancy method follows the runtime's rule; its comment says where
// LLVM's differs.
type Limits struct {
	SIMDsPerCU      int // execution units a workgroup's waves are spread over
	MaxWavesPerSIMD int // wave slots per SIMD
	WaveSize        int // lanes per wave
	VGPRsPerSIMD    int // per lane, VGPRs and AGPRs together
	VGPRGranule     int // a wave's VGPRs are allocated in blocks of this many
	SGPRsPerSIMD    int
	SGPRGranule     int
	LDSPerCU        int // bytes shared by the workgroups resident on a CU
}

var cdna = Limits{
	SIMDsPerCU:      4,
	MaxWavesPerSIMD: 8,
	WaveSize:        64,
	VGPRsPerSIMD:    512,
	VGPRGranule:     8,
	SGPRsPerSIMD:    800,
	SGPRGranule:     16,
	LDSPerCU:        64 << 10,
}

// LimitsFor returns the limits of arch (a target ID such as "gfx942" or
// "gfx942:sramecc+:xnack-"); false for targets this package has no rules for.
func LimitsFor(arch string) (Limits, bool) {
	arch, _, _ = strings.Cut(arch, ":")
	switch arch {
	case "gfx90a", "gfx940", "gfx941", "gfx942":
		return cdna, true
	case "gfx950":
		l := cdna
		l.LDSPerCU = 160 << 10
		return l, true
	}
	return Limits{}, false
}

// Limiters named in Occupancy.Limiter.
const (
	LimitVGPR      = "VGPR"
	LimitSGPR      = "SGPR"
	LimitLDS       = "LDS"
	LimitWorkgroup = "workgroup size" // wave slots do not divide into whole workgroups
)

// Occupancy is how many waves of a kernel one CU holds at a given
// workgroup size. Workgroups are resident whole, so every resource is
// first turned into a number of workgroups per CU.
type Occupancy struct {
	WorkgroupSize     int // threads per workgroup assumed
	WavesPerWorkgroup int
	// VGPRWaves and SGPRWaves are the waves per SIMD each register file
	// allows on its own, at most MaxWavesPerSIMD.
	VGPRWaves, SGPRWaves int
	// LDSWorkgroups is the workgroups per CU the LDS allows on its own;
	// zero when the kernel uses no LDS.
	LDSWorkgroups   int
	WorkgroupsPerCU int
	WavesPerCU      int
	// WavesPerSIMD is WavesPerCU spread evenly over the SIMDs, rounded up:
	// the waves on the fullest SIMD.
	WavesPerSIMD int
	// Limiter is what stops WavesPerCU short of every wave slot (one of the
	// Limit constants), or "" when all are used.
	Limiter string
}

// occupancy computes the occupancy of a kernel that uses vgprs (VGPRs and
// AGPRs together, as .vgpr_count), sgprs and lds bytes per workgroup, at
// workgroup size wg.
//
// Two differences from the occupancy LLVM prints (clang -S, "; Occupancy"):
// LLVM counts waves per SIMD alone, so it may report waves that no whole
// workgroup can use (201 VGPRs: 2 waves per SIMD, yet a 16-wave workgroup
// does not fit); and its SGPR table (getOccupancyWithNumSGPRs) allows 8
// waves up to 100 SGPRs where the runtime's rounding to 16 allows 7 from
// 97 on.
func (l Limits) occupancy(vgprs, sgprs, lds, wg int) Occupancy {
	o := Occupancy{WorkgroupSize: wg}
	if wg <= 0 || l.SIMDsPerCU == 0 {
		return o
	}
	o.WavesPerWorkgroup = ceilDiv(wg, l.WaveSize)
	o.VGPRWaves = min(l.MaxWavesPerSIMD, l.VGPRsPerSIMD/alignUp(max(vgprs, 1), l.VGPRGranule))
	o.SGPRWaves = min(l.MaxWavesPerSIMD, l.SGPRsPerSIMD/alignUp(max(sgprs, 1), l.SGPRGranule))

	// Workgroups per CU under each limit; the waves of a workgroup may sit
	// on any SIMD, so a per-SIMD limit counts for SIMDsPerCU of them.
	w := o.WavesPerWorkgroup
	slots := l.SIMDsPerCU * l.MaxWavesPerSIMD / w
	byVGPR := l.SIMDsPerCU * o.VGPRWaves / w
	bySGPR := l.SIMDsPerCU * o.SGPRWaves / w
	byLDS := slots
	if lds > 0 {
		o.LDSWorkgroups = l.LDSPerCU / lds
		byLDS = o.LDSWorkgroups
	}
	o.WorkgroupsPerCU = min(slots, byVGPR, bySGPR, byLDS)
	o.WavesPerCU = o.WorkgroupsPerCU * w
	o.WavesPerSIMD = ceilDiv(o.WavesPerCU, l.SIMDsPerCU)

	switch {
	case o.WavesPerCU == l.SIMDsPerCU*l.MaxWavesPerSIMD:
	case byVGPR == o.WorkgroupsPerCU && byVGPR < slots:
		o.Limiter = LimitVGPR
	case bySGPR == o.WorkgroupsPerCU && bySGPR < slots:
		o.Limiter = LimitSGPR
	case byLDS == o.WorkgroupsPerCU && byLDS < slots:
		o.Limiter = LimitLDS
	default:
		o.Limiter = LimitWorkgroup
	}
	return o
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func alignUp(a, b int) int { return ceilDiv(a, b) * b }
