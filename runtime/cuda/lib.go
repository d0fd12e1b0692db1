package cuda

// Shared-library loading. Libraries are found at run time rather than linked
// so that a tilego binary built without cgo starts anywhere and only fails,
// with a clear message, when CUDA is actually needed.

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tilego/tilego/internal/dynlib"
)

// The loading itself is internal/dynlib's, shared with the other runtime.
type symbol = dynlib.Symbol

var (
	sym, opt     = dynlib.Sym, dynlib.Opt
	dlopenFirst  = dynlib.OpenFirst
	bind         = dynlib.Bind
	existing     = dynlib.Existing
	multiarchDir = dynlib.MultiarchDir
)

// targetDir is the CUDA toolkit's per-architecture library folder name.
func targetDir() string {
	if runtime.GOARCH == "arm64" {
		return "sbsa-linux"
	}
	return "x86_64-linux"
}

// driverCandidates lists where libcuda may be. $TILEGO_LIBCUDA, when set,
// is the only candidate: it makes tests and odd installs deterministic.
func driverCandidates() []string {
	if p := os.Getenv("TILEGO_LIBCUDA"); p != "" {
		return []string{p}
	}
	c := []string{"libcuda.so.1", "libcuda.so"}
	return append(c, existing([]string{
		"/usr/local/nvidia/lib64",
		multiarchDir(),
		"/usr/lib64",
		"/usr/lib/wsl/lib",
	}, []string{"libcuda.so.1"})...)
}

// nvrtcNames are the sonames tried, newest first.
var nvrtcNames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}

// nvrtcCandidates lists where NVRTC may be, newest version first; for each
// version the loader's search path comes first, then the usual toolkit
// folders and pip's nvidia-cuda-nvrtc wheels, because NVRTC is often
// installed without being on the loader path.
func nvrtcCandidates() []string {
	if p := os.Getenv("TILEGO_NVRTC"); p != "" {
		return []string{p}
	}
	dirs := []string{}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"} {
		if v := os.Getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "lib64"), filepath.Join(v, "lib"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/"+targetDir()+"/lib")
	for _, pat := range []string{
		"/usr/local/lib/python3*/*-packages/nvidia/cu1*/lib",
		"/usr/local/lib/python3*/*-packages/nvidia/cuda_nvrtc/lib",
		"/usr/lib/python3*/*-packages/nvidia/cu1*/lib",
		"/usr/lib/python3*/*-packages/nvidia/cuda_nvrtc/lib",
	} {
		m, _ := filepath.Glob(pat)
		dirs = append(dirs, m...)
	}
	var c []string
	for _, n := range nvrtcNames {
		c = append(c, n)
		c = append(c, existing(dirs, []string{n})...)
	}
	return c
}

// preloadBuiltins loads libnvrtc-builtins from the folder NVRTC came from.
// NVRTC dlopens it by soname at compile time; once loaded here the dynamic
// loader matches it by soname even when that folder is not on its path.
func preloadBuiltins(nvrtcPath string) {
	if !strings.ContainsRune(nvrtcPath, '/') {
		return
	}
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(nvrtcPath), "libnvrtc-builtins.so*"))
	for _, p := range m {
		if err := dynlib.Load(p); err == nil {
			return
		}
	}
}
