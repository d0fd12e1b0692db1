package hip

// AMD GPU code objects. hipModuleLoadData takes an AMDGPU ELF (what clang
// writes with --offload-device-only --no-gpu-bundle-output, a .hsaco) or a
// clang offload bundle of them. Reading the ELF header first turns a wrong
// file or a code object built for another GPU into an error that says so,
// instead of the runtime's bare hipErrorInvalidImage or
// hipErrorNoBinaryForGpu.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// ELF facts used, from LLVM's AMDGPUUsage ("ELF Code Object"): e_machine
// EM_AMDGPU, e_ident[EI_OSABI] ELFOSABI_AMDGPU_HSA for HSA (ROCm) code
// objects, and the e_flags fields of code object v4 and later
// (e_ident[EI_ABIVERSION] >= 2).
const (
	emAMDGPU         = 224
	elfOSABIHSA      = 64
	elfABIVersionV4  = 2
	efMachMask       = 0x0ff // EF_AMDGPU_MACH
	efXNACKMask      = 0x300 // EF_AMDGPU_FEATURE_XNACK_V4
	efSRAMECCMask    = 0xc00 // EF_AMDGPU_FEATURE_SRAMECC_V4
	efFeatureOff     = 2     // a V4 feature field, shifted down: 0 unsupported, 1 any, 2 off, 3 on
	efFeatureOn      = 3
	offloadBundleTag = "__CLANG_OFFLOAD_BUNDLE__"
	compressedBundle = "CCOB"
)

// machNames maps EF_AMDGPU_MACH values to processors: the values clang-19
// writes for each --offload-arch (gfx950's, 0x04f, from AMDGPUUsage).
// Processors not listed are left to the runtime to accept or refuse.
var machNames = map[uint32]string{
	0x02c: "gfx900",
	0x02f: "gfx906",
	0x030: "gfx908",
	0x03f: "gfx90a",
	0x040: "gfx940",
	0x04b: "gfx941",
	0x04c: "gfx942",
	0x04f: "gfx950",
	0x036: "gfx1030",
	0x041: "gfx1100",
	0x04e: "gfx1201",
}

// isBundle reports whether image is a clang offload bundle (plain or
// compressed) rather than a single code object.
func isBundle(image []byte) bool {
	return bytes.HasPrefix(image, []byte(offloadBundleTag)) || bytes.HasPrefix(image, []byte(compressedBundle))
}

// checkCodeObject says why image cannot be an HSA code object, or nil. A
// bundle passes: its entries are the runtime's to choose from.
func checkCodeObject(image []byte) error {
	switch {
	case len(image) == 0:
		return fmt.Errorf("empty image")
	case isBundle(image):
		return nil
	case !bytes.HasPrefix(image, []byte("\x7fELF")):
		return fmt.Errorf("not an AMDGPU code object (no ELF header) nor an offload bundle")
	case len(image) < 64 || image[4] != 2 || image[5] != 1:
		return fmt.Errorf("not a 64-bit little-endian ELF")
	}
	if m := binary.LittleEndian.Uint16(image[18:]); m != emAMDGPU {
		return fmt.Errorf("an ELF for machine %d, not AMDGPU (%d)", m, emAMDGPU)
	}
	if image[7] != elfOSABIHSA {
		return fmt.Errorf("an AMDGPU ELF with OS ABI %d, not HSA (%d)", image[7], elfOSABIHSA)
	}
	return nil
}

// CodeObjectTarget returns the target an AMDGPU code object was built for,
// in gcnArchName form: the processor and the features it fixes, e.g.
// "gfx942" (sramecc and xnack both "any") or "gfx942:sramecc+:xnack-".
func CodeObjectTarget(image []byte) (string, error) {
	if err := checkCodeObject(image); err != nil {
		return "", fmt.Errorf("hip: %v", err)
	}
	if isBundle(image) {
		return "", fmt.Errorf("hip: an offload bundle holds several code objects; no single target")
	}
	flags := binary.LittleEndian.Uint32(image[48:])
	proc, ok := machNames[flags&efMachMask]
	if !ok {
		return "", fmt.Errorf("hip: code object for unknown EF_AMDGPU_MACH %#x", flags&efMachMask)
	}
	if image[8] < elfABIVersionV4 {
		return proc, nil // v3 and older flags: features not read
	}
	target := proc
	for _, f := range []struct {
		name  string
		field uint32
	}{
		{"sramecc", (flags & efSRAMECCMask) >> 10},
		{"xnack", (flags & efXNACKMask) >> 8},
	} {
		switch f.field {
		case efFeatureOn:
			target += ":" + f.name + "+"
		case efFeatureOff:
			target += ":" + f.name + "-"
		}
	}
	return target, nil
}

// targetRuns reports whether code built for target (CodeObjectTarget's
// form) runs on a device whose gcnArchName is device: same processor, and
// every feature the code fixes set the same way on the device.
func targetRuns(target, device string) bool {
	tp, tfeat, _ := strings.Cut(target, ":")
	dp, dfeat, _ := strings.Cut(device, ":")
	if tp != dp {
		return false
	}
	have := strings.Split(dfeat, ":")
	for _, f := range strings.Split(tfeat, ":") {
		if f == "" {
			continue
		}
		name := f[:len(f)-1]
		for _, h := range have {
			if h != f && strings.TrimRight(h, "+-") == name {
				return false
			}
		}
	}
	return true
}
