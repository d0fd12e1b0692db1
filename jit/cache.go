package jit

// The cache proper: look up, compile on a miss, store. Goroutines asking for
// the same key share one compilation; processes may race on a key, which
// costs a duplicate compilation but never a torn entry.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tilego/tilego/internal/atomicfile"
)

// Cache compiles through a Compiler and keeps results in Dir.
type Cache struct {
	dir      string
	compiler Compiler

	mu       sync.Mutex
	inflight map[Key]*flight

	hits, misses, corrupt, writeErrors atomic.Int64
	lastWriteErr                       atomic.Pointer[error]

	dirErr    func() error // CheckDir's verdict on dir, once
	used      sync.Once    // the generation marked used
	upkeep    sync.Once    // orphans and old generations removed, at the first store
	warnOnce  sync.Once    // a write failure reported
	warn      io.Writer    // where: stderr
	upkeepLog []string     // what upkeep removed, for tests
}

type flight struct {
	done  chan struct{}
	image []byte
	err   error
}

// New returns a cache in dir using c. An empty dir disables the disk cache
// (every call compiles, concurrent identical calls still share the work).
func New(dir string, c Compiler) *Cache {
	return &Cache{dir: dir, compiler: c, inflight: map[Key]*flight{},
		dirErr: sync.OnceValue(func() error { return CheckDir(dir) }), warn: os.Stderr}
}

// Dir is the cache folder, "" when caching is off.
func (c *Cache) Dir() string { return c.dir }

// Stats counts what the cache did, for tests and diagnostics.
type Stats struct {
	Hits, Misses int64 // disk hits; compilations
	Corrupt      int64 // entries found damaged and recompiled
	WriteErrors  int64 // results that could not be stored
	LastWriteErr error
}

// Stats returns the counters so far.
func (c *Cache) Stats() Stats {
	s := Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Corrupt: c.corrupt.Load(),
		WriteErrors: c.writeErrors.Load()}
	if p := c.lastWriteErr.Load(); p != nil {
		s.LastWriteErr = *p
	}
	return s
}

// archOption is how the architecture reaches NVRTC.
func archOption(arch string) string { return "--gpu-architecture=" + arch }

// Compile returns the image for src compiled for arch with opts, from the
// cache when possible. The returned slice is the caller's own.
func (c *Cache) Compile(src, name, arch string, opts []string) ([]byte, error) {
	if c.compiler == nil {
		return nil, errors.New("jit: cache has no compiler")
	}
	ver, err := c.compiler.Version()
	if err != nil {
		return nil, fmt.Errorf("jit: compiler version: %w", err)
	}
	full := opts
	if arch != "" && !hasArch(opts) {
		full = append([]string{archOption(arch)}, opts...)
	}
	k := KeyOf(src, name, arch, ver, full)

	c.mu.Lock()
	f, ok := c.inflight[k]
	if !ok {
		f = &flight{done: make(chan struct{})}
		c.inflight[k] = f
	}
	c.mu.Unlock()
	if ok {
		<-f.done
	} else {
		f.image, f.err = c.lookupOrCompile(k, generation(ver), src, name, full)
		c.mu.Lock()
		delete(c.inflight, k)
		c.mu.Unlock()
		close(f.done)
	}
	if f.err != nil {
		return nil, f.err
	}
	return append([]byte(nil), f.image...), nil
}

func hasArch(opts []string) bool {
	for _, o := range opts {
		if strings.HasPrefix(o, "--gpu-architecture") || strings.HasPrefix(o, "-arch") {
			return true
		}
	}
	return false
}

func (c *Cache) lookupOrCompile(k Key, gen, src, name string, opts []string) ([]byte, error) {
	var path string
	if c.dir != "" {
		if err := c.dirErr(); err != nil {
			return nil, fmt.Errorf("jit: %w", err)
		}
		c.used.Do(func() { markUsed(c.dir, gen, time.Now()) })
		path = entryPath(c.dir, gen, k)
		if b, err := os.ReadFile(path); err == nil {
			if img, err := decodeEntry(k, b); err == nil {
				c.hits.Add(1)
				return img, nil
			}
			c.corrupt.Add(1) // fall through: recompile and overwrite
		}
		// Any other read error (missing, unreadable, not a folder) is
		// just a miss.
	}
	c.misses.Add(1)
	img, log, err := c.compiler.Compile(src, name, opts)
	if err != nil {
		if log != "" && !strings.Contains(err.Error(), strings.TrimSpace(log)) {
			return nil, fmt.Errorf("jit: compiling %s: %w\n%s", name, err, log)
		}
		return nil, fmt.Errorf("jit: compiling %s: %w", name, err)
	}
	if len(img) == 0 {
		return nil, fmt.Errorf("jit: compiling %s: compiler returned an empty image", name)
	}
	if path != "" {
		c.upkeep.Do(func() { c.tidy(gen) })
		if err := atomicfile.Write(path, encodeEntry(k, img)); err != nil {
			// Caching is an optimisation; the compiled image is still good.
			c.writeErrors.Add(1)
			c.lastWriteErr.Store(&err)
			c.warnOnce.Do(func() {
				fmt.Fprintf(c.warn, "tilego: cannot store compiled kernels in the cache (%v); every run compiles them again: fix the folder, or set TILEGO_CACHE to another (or to off)\n", err)
			})
		}
	}
	return img, nil
}

// tidy removes killed writers' temporary files from generation gen and
// prunes the generations no longer used.
func (c *Cache) tidy(gen string) {
	now := time.Now()
	if n := cleanTemps(filepath.Join(c.dir, gen), now); n > 0 {
		c.upkeepLog = append(c.upkeepLog, fmt.Sprintf("%d temporary files", n))
	}
	c.upkeepLog = append(c.upkeepLog, prune(c.dir, gen, now)...)
}
