package hip

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// testdata/kernels.hsaco is testdata/kernels.hip built for the MI300X with
// clang 19 (no ROCm needed); rebuild it with go generate.
//go:generate clang-19 -x hip --offload-arch=gfx942 --offload-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3 -o testdata/kernels.hsaco testdata/kernels.hip

func readKernels(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/kernels.hsaco")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// elfHeader is a minimal 64-byte AMDGPU ELF header with the given e_flags
// and ABI version.
func elfHeader(flags uint32, abiVersion byte) []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	h[7], h[8] = elfOSABIHSA, abiVersion
	binary.LittleEndian.PutUint16(h[18:], emAMDGPU)
	binary.LittleEndian.PutUint32(h[48:], flags)
	return h
}

func TestCodeObjectTarget(t *testing.T) {
	if got, err := CodeObjectTarget(readKernels(t)); err != nil || got != "gfx942" {
		t.Errorf("testdata/kernels.hsaco: target %q, %v; want gfx942", got, err)
	}
	// e_flags as clang-19 writes them (llvm-readelf names the fields).
	for _, c := range []struct {
		flags uint32
		abi   byte
		want  string
	}{
		{0x54c, 3, "gfx942"},                 // sramecc any, xnack any
		{0xe4c, 3, "gfx942:sramecc+:xnack-"}, // --offload-arch=gfx942:sramecc+:xnack-
		{0xb4c, 2, "gfx942:sramecc-:xnack+"},
		{0x53f, 3, "gfx90a"},
		{0x54f, 3, "gfx950"},
		{0x041, 3, "gfx1100"}, // no sramecc or xnack: fields 0
		{0x12c, 3, "gfx900"},  // xnack any
		{0x34c, 1, "gfx942"},  // code object v3: features not read
	} {
		if got, err := CodeObjectTarget(elfHeader(c.flags, c.abi)); err != nil || got != c.want {
			t.Errorf("e_flags %#x: %q, %v; want %q", c.flags, got, err, c.want)
		}
	}
	if _, err := CodeObjectTarget(elfHeader(0x7e, 3)); err == nil || !strings.Contains(err.Error(), "0x7e") {
		t.Errorf("unknown mach: %v", err)
	}
	if _, err := CodeObjectTarget([]byte(offloadBundleTag + "...")); err == nil || !strings.Contains(err.Error(), "bundle") {
		t.Errorf("bundle: %v", err)
	}
}

func TestCheckCodeObject(t *testing.T) {
	if err := checkCodeObject(readKernels(t)); err != nil {
		t.Errorf("testdata/kernels.hsaco: %v", err)
	}
	for _, ok := range [][]byte{[]byte(offloadBundleTag + "\x01"), []byte("CCOB\x01\x00")} {
		if err := checkCodeObject(ok); err != nil {
			t.Errorf("%q: %v", ok[:8], err)
		}
	}
	self, err := os.Executable() // this test binary: an ELF for the host
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	mesa := elfHeader(0x54c, 3)
	mesa[7] = 65 // ELFOSABI_AMDGPU_PAL
	for _, c := range []struct {
		name  string
		image []byte
		want  string
	}{
		{"empty", nil, "empty image"},
		{"PTX", []byte(".version 8.0\n.target sm_90\n"), "no ELF header"},
		{"32-bit ELF", append([]byte("\x7fELF\x01\x01"), make([]byte, 64)...), "64-bit little-endian"},
		{"short ELF", []byte("\x7fELF\x02\x01\x01"), "64-bit little-endian"},
		{"host ELF", host[:64], "not AMDGPU (224)"},
		{"PAL ELF", mesa, "OS ABI 65, not HSA (64)"},
	} {
		if err := checkCodeObject(c.image); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestTargetRuns(t *testing.T) {
	const mi300x = "gfx942:sramecc+:xnack-"
	for _, c := range []struct {
		target, device string
		want           bool
	}{
		{"gfx942", mi300x, true},
		{"gfx942:sramecc+:xnack-", mi300x, true},
		{"gfx942:sramecc+", mi300x, true},
		{"gfx942:xnack+", mi300x, false},
		{"gfx942:sramecc-:xnack-", mi300x, false},
		{"gfx90a", mi300x, false},
		{"gfx94", mi300x, false},
		{"gfx1100", "gfx1100", true},
		{"gfx942:xnack-", "gfx942", true}, // a device not reporting a feature
	} {
		if got := targetRuns(c.target, c.device); got != c.want {
			t.Errorf("targetRuns(%q, %q) = %v, want %v", c.target, c.device, got, c.want)
		}
	}
}
