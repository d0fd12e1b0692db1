package cudagen

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"strings"
)

//go:embed include/tilego.cuh
var header string

//go:embed include/tilego_hip.h
var hipHeader string

// headerName is the device library a program for arch includes: tilego.cuh
// for NVIDIA GPUs, tilego_hip.h (the same primitives in clang's HIP
// dialect) for AMD ones.
func headerName(arch string) string {
	if amd(arch) {
		return "tilego_hip.h"
	}
	return "tilego.cuh"
}

// amd: arch is an AMD GPU (gfx942: CDNA3, MI300X), compiled as HIP by
// clang.
func amd(arch string) bool { return strings.HasPrefix(arch, "gfx") }

// Header is the device library a program for arch includes (headerName),
// for a compiler given it as a file.
func Header(arch string) (name, text string) {
	if amd(arch) {
		return "tilego_hip.h", hipHeader
	}
	return "tilego.cuh", header
}

// FullSource returns the program's source with its device library
// (include/tilego.cuh, or tilego_hip.h for AMD) inlined: what a compiler
// without an include path, such as NVRTC, compiles.
func (p *Program) FullSource() string {
	for _, h := range [][2]string{{"tilego.cuh", header}, {"tilego_hip.h", hipHeader}} {
		if inc := "#include \"" + h[0] + "\""; strings.Contains(p.Source, inc) {
			return strings.Replace(p.Source, inc, h[1], 1)
		}
	}
	return p.Source
}

// Fingerprint identifies what NVRTC compiles for p: the SHA-256 (hex) of
// its source with the device library inlined. Programs with equal
// fingerprints are the same kernel.
func (p *Program) Fingerprint() string {
	sum := sha256.Sum256([]byte(p.FullSource()))
	return hex.EncodeToString(sum[:])
}
