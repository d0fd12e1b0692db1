package hip

// Shared-library loading. libamdhip64 is found at run time rather than
// linked so that a tilego binary built without cgo starts anywhere and only
// fails, with a clear message, when an AMD GPU is actually needed.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/ebitengine/purego"
)

const dlFlags = purego.RTLD_NOW | purego.RTLD_GLOBAL

// symbol names a C entry point to bind into the Go function pointed to by
// fn. The first exported name among names wins, so a versioned entry point
// can be preferred with an older name as fallback.
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

// bind resolves every symbol. Dlsym + RegisterFunc rather than
// RegisterLibFunc because the latter panics on a missing symbol, and an
// older ROCm lacking one entry point must not crash the program.
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

// multiarchDir is the Debian-style system library folder for this GOARCH,
// where distribution packages of ROCm put libamdhip64.
func multiarchDir() string {
	if runtime.GOARCH == "arm64" {
		return "/usr/lib/aarch64-linux-gnu"
	}
	return "/usr/lib/x86_64-linux-gnu"
}

// hipNames are the sonames tried, newest ROCm first (7.x, 6.x, 5.x), then
// the unversioned development link.
var hipNames = []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}

// libDirs are the folders searched besides the loader's path: those named
// by $ROCM_PATH and $HIP_PATH, /opt/rocm and versioned /opt/rocm-X.Y.Z
// installs (highest name first), and the system library folders. ROCm
// registers its folder with ldconfig, but containers often skip that.
func libDirs() []string {
	var dirs []string
	for _, env := range []string{"ROCM_PATH", "HIP_PATH"} {
		if v := os.Getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "lib"), filepath.Join(v, "lib64"))
		}
	}
	dirs = append(dirs, "/opt/rocm/lib")
	versioned, _ := filepath.Glob("/opt/rocm-*/lib")
	slices.Sort(versioned)
	slices.Reverse(versioned)
	dirs = append(dirs, versioned...)
	return append(dirs, multiarchDir(), "/usr/lib64")
}

// runtimeCandidates lists where libamdhip64 may be, newest version first;
// for each version the loader's search path comes first, then libDirs.
// $TILEGO_LIBAMDHIP, when set, is the only candidate: it makes tests and
// odd installs deterministic.
func runtimeCandidates() []string {
	if p := os.Getenv("TILEGO_LIBAMDHIP"); p != "" {
		return []string{p}
	}
	dirs := libDirs()
	var c []string
	for _, n := range hipNames {
		c = append(c, n)
		c = append(c, existing(dirs, []string{n})...)
	}
	return c
}
