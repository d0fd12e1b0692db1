// Package clangcuda compiles generated CUDA C++ to PTX with clang's CUDA
// front end and no CUDA toolkit: prelude.h declares the NVRTC built-ins
// the generated code and the device library use. It checks the C++
// (names, types, overloads, inline-asm constraints) where no GPU or NVRTC
// is at hand. Where a ptxas is on the PATH that knows the target, the PTX
// is assembled too, which checks the inline asm's instructions against
// the target: an instruction newer than the target fails there, as it
// would in the driver's JIT.
package clangcuda

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
	ptx := filepath.Join(dir, "prog.ptx")
	args := []string{"-x", "cuda", "--cuda-gpu-arch=" + arch, "--cuda-device-only", "-nocudainc", "-nocudalib",
		"-include", pre, "-Wno-unknown-cuda-version", "-S", "-o", ptx, cu}
	isa, assemble := assemblerFor(arch)
	if assemble { // PTX the assembler reads, and which has the ISA's newer qualifiers (.shared::cta)
		args = append(args, "-Xclang", "-target-feature", "-Xclang", "+ptx"+isa)
	}
	out, err := exec.Command(Clang, args...).CombinedOutput()
	if err == nil {
		if !assemble {
			return nil
		}
		// -c: the NVRTC built-ins are declared, not defined; they stay
		// unresolved in a relocatable object.
		out, err := exec.Command(Ptxas, "-c", "-arch="+arch, "-o", filepath.Join(dir, "prog.o"), ptx).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s for %s: %v: %s", Ptxas, arch, err, firstLines(string(out), 6))
		}
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

// Ptxas is the PTX assembler, used where it is on the PATH.
const Ptxas = "ptxas"

// Assembles reports whether Compile assembles arch's PTX: a ptxas is on
// the PATH and its release knows arch (sm_90a needs CUDA 12, as Debian
// trixie's nvidia-cuda-toolkit, 12.4, which .ci/run installs; bookworm's,
// 11.8, assembles sm_80 only).
func Assembles(arch string) bool {
	_, ok := assemblerFor(arch)
	return ok
}

var ptxasRelease = sync.OnceValues(func() (int, int) {
	out, err := exec.Command(Ptxas, "--version").Output()
	if err != nil {
		return 0, 0
	}
	m := regexp.MustCompile(`release (\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return 0, 0
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major, minor
})

// assemblerFor is the PTX ISA version (as clang's ptxNN feature names
// it) the ptxas on the PATH reads, and whether that ptxas knows arch.
func assemblerFor(arch string) (string, bool) {
	major, minor := ptxasRelease()
	switch {
	case major == 11 && minor == 8:
		return "78", arch == "sm_80" || arch == "sm_86" || arch == "sm_89"
	case major == 12:
		// CUDA 12.x reads PTX ISA 8.x; clang-19 writes up to 8.5.
		return strconv.Itoa(80 + min(minor, 5)), true
	}
	return "", false
}

// firstLines is s's first n non-empty lines, joined by "; ".
func firstLines(s string, n int) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && len(ls) < n {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "; ")
}
