package cudagen

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tilego/tilego/ir"
)

// sharedOptin is the shared memory a block may opt in to on each
// architecture (cudaDevAttrMaxSharedMemoryPerBlockOptin): what a launch
// gets at most, so what Build should allow.
var sharedOptin = map[string]int{
	"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_87": 163 * 1024, "sm_89": 99 * 1024,
	"sm_90": 227 * 1024, "sm_90a": 227 * 1024,
	"gfx942": 64 * 1024, // LDS a workgroup may allocate on CDNA3
}

// sharedLimit is the shared memory a block of arch may have.
func sharedLimit(arch string) int {
	if n, ok := sharedOptin[arch]; ok {
		return n
	}
	return ir.DefaultLimits.MaxSharedBytes
}

// smVersion is an NVIDIA arch's number (90 for sm_90a); ok is false for
// any other arch.
func smVersion(arch string) (n int, ok bool) {
	if !strings.HasPrefix(arch, "sm_") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(arch, "sm_"), "a"))
	return n, err == nil
}

// mbarriers: arch has shared-memory mbarriers (NVIDIA's, sm_80 on).
func mbarriers(arch string) bool {
	n, ok := smVersion(arch)
	return ok && n >= 80
}

// Limits are arch's resources and rules, for tl's Build: the shared memory
// a block may opt in to and the threads it may have, and a check that
// compiles the program for arch (pure Go, no NVRTC: cheap) so that Build
// refuses, at the op's file:line, every program Compile would refuse.
// An architecture not in the table gets ir.DefaultLimits' resources; ""
// is sm_80, as for Compile.
func Limits(arch string) ir.Limits { return LimitsFor(Options{Arch: arch}) }

// LimitsFor is Limits for code generated with opts.
func LimitsFor(opts Options) ir.Limits {
	arch := opts.Arch
	if arch == "" {
		arch = "sm_80"
	}
	opts.Arch = arch
	return DeviceLimits(ir.Limits{MaxSharedBytes: sharedLimit(arch), MaxThreads: 1024}, opts)
}

// DeviceLimits is lim, a device's resources, with the check that a program
// compiles with opts and fits lim's shared memory once pipelined: what
// Build should allow for that device.
func DeviceLimits(lim ir.Limits, opts Options) ir.Limits {
	lim.Target = func(f *ir.Func) error {
		p, err := compile(f, opts, "") // no TILEGO_DUMP: Compile dumps it again
		if err == nil && p.Shared > lim.MaxSharedBytes {
			err = overShared(f, p.Shared, opts.Arch, lim.MaxSharedBytes)
		}
		return errorList(f, err)
	}
	return lim
}

// errorList is err as Build returns errors, an ir.ErrorList; an error
// without a position (none should be left) is placed at the kernel.
func errorList(f *ir.Func, err error) error {
	var list ir.ErrorList
	var one *ir.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &list):
		return list
	case errors.As(err, &one):
		return ir.ErrorList{one}
	}
	pos := f.Pos
	if f.Kernel != nil {
		pos = f.Kernel.P
	}
	return ir.ErrorList{{Op: "kernel", Pos: pos, Msg: err.Error()}}
}
