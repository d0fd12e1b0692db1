// Package jit compiles generated CUDA C++ to GPU code and keeps the results
// in an on-disk cache, because NVRTC takes tens to hundreds of milliseconds
// per kernel and tilego regenerates identical kernels on every run.
//
// Entries are keyed by a hash of everything that can change the output
// (source, kernel name, architecture, compiler version, options, cache
// format). Writes are atomic and entries carry a checksum, so several
// processes and goroutines can share one cache and a damaged entry is simply
// recompiled. Since entries hold only hashes anyone can recompute, the folder
// must be the user's alone (dir.go); maintain.go prunes what older
// toolkits left.
package jit

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tilego/tilego/runtime/cuda"
)

// Compiler turns CUDA C++ into a loadable image. It is an interface so the
// cache can be tested without a GPU or NVRTC.
type Compiler interface {
	// Compile compiles src; name labels the program in diagnostics.
	// It returns the image and the compiler log.
	Compile(src, name string, opts []string) (image []byte, log string, err error)
	// Version identifies the compiler build; it is part of the cache key.
	Version() (string, error)
}

// NVRTC is the Compiler backed by runtime/cuda's NVRTC binding.
type NVRTC struct{}

// Compile implements Compiler.
func (NVRTC) Compile(src, name string, opts []string) ([]byte, string, error) {
	return cuda.Compile(src, name, opts)
}

// Version implements Compiler.
func (NVRTC) Version() (string, error) {
	maj, min, err := cuda.NVRTCVersion()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("nvrtc-%d.%d", maj, min), nil
}

// DefaultDir is where the default cache lives: $TILEGO_CACHE if set, else
// the user cache folder's "tilego". TILEGO_CACHE=off disables caching. It
// returns "" (no caching) when no folder can be determined.
func DefaultDir() string {
	if d := os.Getenv("TILEGO_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "tilego")
}

var defaultCache = sync.OnceValue(func() *Cache { return New(DefaultDir(), NVRTC{}) })

// Default is the process-wide cache used by Compile.
func Default() *Cache { return defaultCache() }

// Compile compiles kernel source for arch (e.g. "sm_90a") with NVRTC through
// the default cache. opts are extra NVRTC options.
func Compile(src, kernelName, arch string, opts []string) ([]byte, error) {
	return Default().Compile(src, kernelName, arch, opts)
}
