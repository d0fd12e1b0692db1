package codeobj

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Report describes the kernels of a code object.
type Report struct {
	Target  string // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx942"
	Arch    string // the processor in Target, e.g. "gfx942"
	Kernels []Kernel
}

// Kernel is one kernel's resources (from the code object metadata), its
// instruction histogram (from the disassembly of its symbol) and the
// occupancy they allow.
type Kernel struct {
	Name string
	// VGPRs is .vgpr_count. On targets with a unified register file
	// (gfx90a, gfx940-gfx942, gfx950) it already counts the AGPRs: the
	// architectural VGPRs rounded up to 4, then the AGPRs (clang -S prints
	// it as TotalNumVgprs). It is what occupancy is computed from.
	VGPRs        int
	AGPRs        int // .agpr_count: accumulation registers, part of VGPRs
	SGPRs        int // .sgpr_count, with VCC, flat scratch and XNACK mask where used
	VGPRSpills   int // .vgpr_spill_count
	SGPRSpills   int // .sgpr_spill_count
	LDSBytes     int // .group_segment_fixed_size: static LDS per workgroup
	ScratchBytes int // .private_segment_fixed_size: per work-item, spills and private arrays
	// MaxWorkgroupSize is .max_flat_workgroup_size: 1024 unless the source
	// bounds it (amdgpu_flat_work_group_size, __launch_bounds__).
	MaxWorkgroupSize int
	WavefrontSize    int
	Instr            Histogram
	// Loop is the histogram of the kernel's hot loop (parseLoops): the
	// loop with the most MFMAs; zero where the kernel has no loop.
	Loop Histogram
	// Occupancy is at MaxWorkgroupSize without dynamic LDS, the largest
	// launch the compiler allowed for; OccupancyAt gives it for the launch
	// actually made.
	Occupancy Occupancy

	limits Limits
	known  bool // limits apply
}

// Spills is the number of register spills (VGPR and SGPR stores to spill
// slots) the compiler made.
func (k Kernel) Spills() int { return k.VGPRSpills + k.SGPRSpills }

// OccupancyAt is the kernel's occupancy when launched with workgroups of wg
// threads and dynLDS bytes of dynamic LDS (beyond LDSBytes); the zero
// Occupancy when the target has no known limits.
func (k Kernel) OccupancyAt(wg, dynLDS int) Occupancy {
	if !k.known {
		return Occupancy{WorkgroupSize: wg}
	}
	l := k.limits
	if k.WavefrontSize > 0 {
		l.WaveSize = k.WavefrontSize
	}
	return l.occupancy(k.VGPRs, k.SGPRs, k.LDSBytes+dynLDS, wg)
}

// Report inspects the code object with llvm-readelf and llvm-objdump.
func (o *Object) Report() (Report, error) {
	return o.ReportContext(context.Background())
}

// ReportContext is Report under ctx.
func (o *Object) ReportContext(ctx context.Context) (Report, error) {
	readelf, err := findTool("", readelfNames)
	if err != nil {
		return Report{}, err
	}
	objdump, err := findTool("", objdumpNames)
	if err != nil {
		return Report{}, err
	}
	dir, err := os.MkdirTemp("", "tilego-hip-")
	if err != nil {
		return Report{}, fmt.Errorf("codeobj: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kernel.hsaco")
	if err := os.WriteFile(path, o.Code, 0o644); err != nil {
		return Report{}, fmt.Errorf("codeobj: %w", err)
	}
	notes, stderr, err := run(ctx, o.timeout, readelf, "--notes", path)
	if err != nil {
		return Report{}, toolError(readelf, err, strings.TrimSpace(stderr))
	}
	disasm, stderr, err := run(ctx, o.timeout, objdump, "-d", path)
	if err != nil {
		return Report{}, toolError(objdump, err, strings.TrimSpace(stderr))
	}
	r, err := ParseReport(notes, disasm)
	if err != nil {
		return Report{}, err
	}
	if r.Arch == "" {
		r.Arch = o.Arch
		r.setLimits()
	}
	return r, nil
}

// ParseReport builds a Report from the text of llvm-readelf --notes and
// llvm-objdump -d on one code object.
func ParseReport(notes, disasm string) (Report, error) {
	target, kernels, err := parseMetadata(notes)
	if err != nil {
		return Report{}, err
	}
	syms, err := parseDisassembly(disasm)
	if err != nil {
		return Report{}, err
	}
	loops := parseLoops(disasm)
	r := Report{Target: target, Arch: archOf(target), Kernels: kernels}
	for i := range r.Kernels {
		k := &r.Kernels[i]
		code, ok := syms[k.Name]
		if !ok {
			return Report{}, fmt.Errorf("codeobj: kernel %s is not in the disassembly", k.Name)
		}
		k.Instr = histogram(code)
		k.Loop = loops[k.Name]
	}
	r.setLimits()
	return r, nil
}

// setLimits attaches the target's limits to every kernel and computes its
// occupancy.
func (r *Report) setLimits() {
	l, ok := LimitsFor(r.Arch)
	for i := range r.Kernels {
		k := &r.Kernels[i]
		k.limits, k.known = l, ok
		k.Occupancy = k.OccupancyAt(k.MaxWorkgroupSize, 0)
	}
}

// archOf takes the processor out of a target ID:
// "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" is "gfx942".
func archOf(target string) string {
	target, _, _ = strings.Cut(target, ":")
	return target[strings.LastIndex(target, "-")+1:]
}

// Kernel returns the kernel named name.
func (r Report) Kernel(name string) (Kernel, bool) {
	for _, k := range r.Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return Kernel{}, false
}

// String is one line per kernel.
func (r Report) String() string {
	var b strings.Builder
	for _, k := range r.Kernels {
		b.WriteString(k.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String is the kernel on one line, e.g.
//
//	k: 12 VGPRs, 4 AGPRs, 14 SGPRs, 0 spills, 1024 B LDS, 8 waves/SIMD; 20 instructions, 1 MFMA, 1 ds_read, 1 ds_write, 1 global_load, 1 s_barrier, 2 s_waitcnt
func (k Kernel) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d VGPRs, %d AGPRs, %d SGPRs, %d spills", k.Name, k.VGPRs, k.AGPRs, k.SGPRs, k.Spills())
	if k.ScratchBytes > 0 {
		fmt.Fprintf(&b, ", %d B scratch", k.ScratchBytes)
	}
	fmt.Fprintf(&b, ", %d B LDS, ", k.LDSBytes)
	switch o := k.Occupancy; {
	case !k.known:
		b.WriteString("? waves/SIMD")
	case o.Limiter != "":
		fmt.Fprintf(&b, "%d waves/SIMD (%s)", o.WavesPerSIMD, o.Limiter)
	default:
		fmt.Fprintf(&b, "%d waves/SIMD", o.WavesPerSIMD)
	}
	fmt.Fprintf(&b, "; %d instructions", k.Instr.Total)
	h := k.Instr
	for _, c := range []struct {
		n    int
		name string
	}{
		{h.MFMA, "MFMA"},
		{h.LDSRead, "ds_read"},
		{h.LDSWrite, "ds_write"},
		{h.GlobalLoad, "global_load"},
		{h.GlobalStore, "global_store"},
		{h.BufferLoad, "buffer_load"},
		{h.BufferStore, "buffer_store"},
		{h.ScratchLoad, "scratch_load"},
		{h.ScratchStore, "scratch_store"},
		{h.Barrier, "s_barrier"},
		{h.Waitcnt, "s_waitcnt"},
	} {
		if c.n > 0 {
			fmt.Fprintf(&b, ", %d %s", c.n, c.name)
		}
	}
	return b.String()
}

// MFMABusy estimates, from the hot loop's instruction counts alone, the
// share of a SIMD's cycles its matrix core is busy while one wave runs
// the loop: lo where nothing overlaps the MFMAs (each vector ALU
// instruction's 4 cycles and each other instruction's issue cycle added
// to them), hi where all of that runs under them. mfmaCycles is the MFMA's
// issue interval at peak: 16 for v_mfma_f32_16x16x16_{f16,bf16} on CDNA3
// (MI300X's 1307 dense f16 TFLOP/s over 304 CUs of 4 SIMDs at 2.1 GHz is
// 512 FLOP a SIMD a cycle; the instruction is 8192). Latencies of memory
// and of dependent MFMAs are not counted: it is an upper bound on what the
// code as scheduled can reach.
func (k Kernel) MFMABusy(mfmaCycles int) (lo, hi float64) {
	h := k.Loop
	m := float64(h.MFMA * mfmaCycles)
	if m == 0 {
		return 0, 0
	}
	other := float64(4*h.VALU + (h.Total - h.MFMA - h.VALU))
	return m / (m + other), m / max(m, other)
}
