package cuda

// Shared-library loading. Libraries are found at run time rather than linked
// so that a tilego binary built without cgo starts anywhere and only fails,
// with a clear message, when CUDA is actually needed.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

const dlFlags = purego.RTLD_NOW | purego.RTLD_GLOBAL

// symbol names a C entry point to bind into the Go function pointed to by fn.
// The first exported name among names wins, so a _v2 entry point can be
// preferred with the legacy name as fallback.
type symbol struct {
	fn       any
	names    []string
	optional bool
}

func sym(fn any, names ...string) symbol { return symbol{fn: fn, names: names} }
func opt(fn any, names ...string) symbol { return symbol{fn: fn, names: names, optional: true} }

// dlopenFirst opens the first loadable candidate. It returns the handle, the
// path that worked and, on failure, every dlerror joined for the message.
func dlopenFirst(cands []string) (uintptr, string, error) {
	var msgs []string
	for _, c := range cands {
		h, err := purego.Dlopen(c, dlFlags)
		if err == nil && h != 0 {
			return h, c, nil
		}
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "no candidates")
	}
	return 0, "", errors.New(strings.Join(msgs, "; "))
}

// bind resolves every symbol. Using Dlsym + RegisterFunc rather than
// RegisterLibFunc because the latter panics on a missing symbol, and an old
// driver lacking one entry point must not crash the program.
func bind(handle uintptr, lib string, syms []symbol) error {
	for _, s := range syms {
		var addr uintptr
		for _, n := range s.names {
			if a, err := purego.Dlsym(handle, n); err == nil && a != 0 {
				addr = a
				break
			}
		}
		if addr == 0 {
			if s.optional {
				continue
			}
			return fmt.Errorf("%s does not export %s", lib, s.names[0])
		}
		purego.RegisterFunc(s.fn, addr)
	}
	return nil
}

// existing returns the paths dir/name that exist, for each dir and name.
func existing(dirs, names []string) []string {
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				out = append(out, p)
			}
		}
	}
	return out
}

// targetDir is the CUDA toolkit's per-architecture library folder name.
func targetDir() string {
	if runtime.GOARCH == "arm64" {
		return "sbsa-linux"
	}
	return "x86_64-linux"
}

// multiarchDir is the Debian-style system library folder for this GOARCH.
func multiarchDir() string {
	if runtime.GOARCH == "arm64" {
		return "/usr/lib/aarch64-linux-gnu"
	}
	return "/usr/lib/x86_64-linux-gnu"
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
		if _, err := purego.Dlopen(p, dlFlags); err == nil {
			return
		}
	}
}
