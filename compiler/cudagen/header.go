package cudagen

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"strings"
)

//go:embed include/tilego.cuh
var header string

// FullSource returns the program's source with the device library
// (include/tilego.cuh) inlined: what a compiler without an include path,
// such as NVRTC, compiles.
func (p *Program) FullSource() string {
	return strings.Replace(p.Source, "#include \"tilego.cuh\"", header, 1)
}

// Fingerprint identifies what NVRTC compiles for p: the SHA-256 (hex) of
// its source with the device library inlined. Programs with equal
// fingerprints are the same kernel.
func (p *Program) Fingerprint() string {
	sum := sha256.Sum256([]byte(p.FullSource()))
	return hex.EncodeToString(sum[:])
}
