// Package clangcuda compiles generated CUDA C++ to PTX with clang's CUDA
// front end and no CUDA toolkit: prelude.h declares the NVRTC built-ins
// the generated code and the device library use. It checks the C++
// (names, types, overloads, inline-asm constraints) where no GPU or NVRTC
// is at hand; the PTX is not assembled.
package clangcuda

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Clang is the compiler run (Debian's clang-19).
const Clang = "clang++-19"

//go:embed prelude.h
var prelude string

// Available reports whether Clang is on the PATH.
func Available() error {
	_, err := exec.LookPath(Clang)
	return err
}

// Compile compiles src, a whole program (the device library inlined), for
// arch (sm_80, sm_90a, ...). Its error holds clang's error lines.
func Compile(src, arch string) error {
	dir, err := os.MkdirTemp("", "tilego-clangcuda-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pre, cu := filepath.Join(dir, "prelude.h"), filepath.Join(dir, "prog.cu")
	if err := os.WriteFile(pre, []byte(prelude), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(cu, []byte(src), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(Clang, "-x", "cuda", "--cuda-gpu-arch="+arch, "--cuda-device-only", "-nocudainc", "-nocudalib",
		"-include", pre, "-Wno-unknown-cuda-version", "-S", "-o", filepath.Join(dir, "prog.ptx"), cu)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	var errs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "error") {
			errs = append(errs, strings.TrimPrefix(l, cu+":"))
		}
	}
	if len(errs) == 0 {
		errs = []string{strings.TrimSpace(string(out))}
	}
	return fmt.Errorf("%s for %s: %v: %s", Clang, arch, err, strings.Join(errs[:min(len(errs), 6)], "; "))
}
