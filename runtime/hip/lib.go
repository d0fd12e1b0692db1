package hip

// Shared-library loading. libamdhip64 is found at run time rather than
// linked so that a tilego binary built without cgo starts anywhere and only
// fails, with a clear message, when an AMD GPU is actually needed.

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/tilego/tilego/internal/dynlib"
)

// The loading itself is internal/dynlib's, shared with runtime/cuda.
type symbol = dynlib.Symbol

var (
	sym, opt     = dynlib.Sym, dynlib.Opt
	dlopenFirst  = dynlib.OpenFirst
	bind         = dynlib.Bind
	existing     = dynlib.Existing
	multiarchDir = dynlib.MultiarchDir
)

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
