// Package dynlib loads the GPU runtimes' shared libraries at run time
// (purego), so that a binary built without cgo starts anywhere and fails,
// with a clear message, only when a GPU is actually used: runtime/cuda's
// libcuda and libnvrtc, runtime/hip's libamdhip64.
package dynlib

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

// Symbol names a C entry point to bind into the Go function pointed to by fn.
// The first exported name among names wins, so a _v2 entry point can be
// preferred with the legacy name as fallback.
type Symbol struct {
	fn       any
	names    []string
	optional bool
}

// Sym is a required symbol, Opt one that may be missing.
func Sym(fn any, names ...string) Symbol { return Symbol{fn: fn, names: names} }
func Opt(fn any, names ...string) Symbol { return Symbol{fn: fn, names: names, optional: true} }

// OpenFirst opens the first loadable candidate. It returns the handle, the
// path that worked and, on failure, every dlerror joined for the message.
func OpenFirst(cands []string) (uintptr, string, error) {
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

// Bind resolves every symbol. Dlsym + RegisterFunc rather than
// RegisterLibFunc, because the latter panics on a missing symbol, and an
// older driver or runtime lacking one entry point must not crash the
// program.
func Bind(handle uintptr, lib string, syms []Symbol) error {
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

// Existing returns the paths dir/name that exist, for each dir and name.
func Existing(dirs, names []string) []string {
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

// MultiarchDir is the Debian-style system library folder for this GOARCH.
func MultiarchDir() string {
	if runtime.GOARCH == "arm64" {
		return "/usr/lib/aarch64-linux-gnu"
	}
	return "/usr/lib/x86_64-linux-gnu"
}

// Load loads the library at path, for its symbols to be found by others
// (libnvrtc's builtins, which NVRTC itself looks up by soname).
func Load(path string) error {
	_, err := purego.Dlopen(path, dlFlags)
	return err
}
