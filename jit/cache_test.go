package jit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is a deterministic Compiler: the image is derived from its inputs.
type fake struct {
	version string
	delay   time.Duration
	fail    error
	calls   atomic.Int64
	mu      sync.Mutex
	lastOps []string
}

func (f *fake) Version() (string, error) { return f.version, nil }

func (f *fake) Compile(src, name string, opts []string) ([]byte, string, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.lastOps = append([]string(nil), opts...)
	f.mu.Unlock()
	time.Sleep(f.delay)
	if f.fail != nil {
		return nil, "fake.cu(1): error: something is wrong", f.fail
	}
	return image(f.version, src, name, opts), "", nil
}

func image(ver, src, name string, opts []string) []byte {
	seed := sha256.Sum256([]byte(ver + "\x00" + src + "\x00" + name + "\x00" + strings.Join(opts, "\x00")))
	out := []byte("\x7fELF fake image for " + name + "\n")
	for len(out) < 4096+len(src) {
		seed = sha256.Sum256(seed[:])
		out = append(out, seed[:]...)
	}
	return out
}

const src = `extern "C" __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }`

func want(arch string, opts ...string) []byte {
	return image("fake-1.0", src, "k", append([]string{archOption(arch)}, opts...))
}

func TestHitMiss(t *testing.T) {
	dir := t.TempDir()
	fc := &fake{version: "fake-1.0"}
	c := New(dir, fc)
	for i, wantCalls := range []int64{1, 1, 1} {
		img, err := c.Compile(src, "k", "sm_90a", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(img, want("sm_90a")) {
			t.Fatalf("call %d: wrong image", i)
		}
		if fc.calls.Load() != wantCalls {
			t.Fatalf("call %d: %d compilations, want %d", i, fc.calls.Load(), wantCalls)
		}
	}
	if s := c.Stats(); s.Hits != 2 || s.Misses != 1 || s.Corrupt != 0 || s.WriteErrors != 0 {
		t.Errorf("stats %+v", s)
	}
	// A second cache on the same folder (another process) hits too.
	fc2 := &fake{version: "fake-1.0"}
	if img, err := New(dir, fc2).Compile(src, "k", "sm_90a", nil); err != nil || !bytes.Equal(img, want("sm_90a")) || fc2.calls.Load() != 0 {
		t.Errorf("second cache: err %v, %d compilations", err, fc2.calls.Load())
	}
	// The caller owns the returned slice.
	img, _ := c.Compile(src, "k", "sm_90a", nil)
	img[0] = 'X'
	if again, _ := c.Compile(src, "k", "sm_90a", nil); again[0] != 0x7f {
		t.Error("mutating a result changed the cache")
	}
	if fc.lastOps[0] != "--gpu-architecture=sm_90a" {
		t.Errorf("compiler options %v lack the architecture", fc.lastOps)
	}
}

func TestKeyChanges(t *testing.T) {
	type in struct {
		format                   uint32
		src, name, arch, version string
		opts                     []string
	}
	base := in{formatVersion, src, "k", "sm_90a", "nvrtc-13.0", []string{"-O3", "-lineinfo"}}
	variants := map[string]func(*in){
		"source":         func(v *in) { v.src += " " },
		"name":           func(v *in) { v.name = "k2" },
		"arch":           func(v *in) { v.arch = "sm_90" },
		"version":        func(v *in) { v.version = "nvrtc-13.1" },
		"option added":   func(v *in) { v.opts = append(v.opts, "-G") },
		"option removed": func(v *in) { v.opts = v.opts[:1] },
		"option order":   func(v *in) { v.opts = []string{"-lineinfo", "-O3"} },
		"option split":   func(v *in) { v.opts = []string{"-O3 -lineinfo"} },
		"format":         func(v *in) { v.format++ },
		"field shift":    func(v *in) { v.name, v.arch = "ksm_90a", "" },
	}
	key := func(v in) Key { return keyWithFormat(v.format, v.src, v.name, v.arch, v.version, v.opts) }
	k0 := key(base)
	if k0 != KeyOf(base.src, base.name, base.arch, base.version, base.opts) || k0 != key(base) {
		t.Fatal("key is not deterministic")
	}
	seen := map[Key]string{k0: "base"}
	for name, change := range variants {
		v := base
		v.opts = append([]string(nil), base.opts...)
		change(&v)
		k := key(v)
		if prev, dup := seen[k]; dup {
			t.Errorf("%s: same key as %s", name, prev)
		}
		seen[k] = name
	}
	// Through the cache: a new compiler version misses.
	dir := t.TempDir()
	fc := &fake{version: "fake-1.0"}
	New(dir, fc).Compile(src, "k", "sm_90a", nil)
	fc.version = "fake-2.0"
	New(dir, fc).Compile(src, "k", "sm_90a", nil)
	if fc.calls.Load() != 2 {
		t.Errorf("compiler version change: %d compilations, want 2", fc.calls.Load())
	}
}

func TestDamagedEntryRecompiles(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"flipped payload byte", func(b []byte) []byte { b[len(b)-7] ^= 1; return b }},
		{"flipped checksum byte", func(b []byte) []byte { b[headerSize-1] ^= 0x80; return b }},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"other format", func(b []byte) []byte { b[8]++; return b }},
		{"other key", func(b []byte) []byte { b[20] ^= 0xff; return b }},
		{"truncated payload", func(b []byte) []byte { return b[:len(b)/2] }},
		{"truncated header", func(b []byte) []byte { return b[:headerSize-1] }},
		{"empty file", func(b []byte) []byte { return nil }},
		{"trailing junk", func(b []byte) []byte { return append(b, "junk"...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fc := &fake{version: "fake-1.0"}
			c := New(dir, fc)
			if _, err := c.Compile(src, "k", "sm_90a", nil); err != nil {
				t.Fatal(err)
			}
			ver, _ := fc.Version()
			path := entryPath(dir, generation(ver), KeyOf(src, "k", "sm_90a", ver, []string{archOption("sm_90a")}))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			img, err := c.Compile(src, "k", "sm_90a", nil)
			if err != nil || !bytes.Equal(img, want("sm_90a")) {
				t.Fatalf("after damage: err %v, right bytes %v", err, bytes.Equal(img, want("sm_90a")))
			}
			if fc.calls.Load() != 2 || c.Stats().Corrupt != 1 {
				t.Errorf("%d compilations, stats %+v; want a recompilation", fc.calls.Load(), c.Stats())
			}
			// The entry was overwritten with a good one.
			if _, err := c.Compile(src, "k", "sm_90a", nil); err != nil || fc.calls.Load() != 2 {
				t.Errorf("repaired entry not used: err %v, %d compilations", err, fc.calls.Load())
			}
		})
	}
}

func TestConcurrentSameKey(t *testing.T) {
	dir := t.TempDir()
	fc := &fake{version: "fake-1.0", delay: 50 * time.Millisecond}
	caches := []*Cache{New(dir, fc), New(dir, fc)} // two "processes" on one folder
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			arch := []string{"sm_90a", "sm_80"}[i%2]
			img, err := caches[(i/2)%2].Compile(src, "k", arch, nil)
			if err != nil {
				errs <- err
			} else if !bytes.Equal(img, want(arch)) {
				errs <- errors.New("wrong bytes for " + arch)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// One compilation per key and cache at most.
	if c := fc.calls.Load(); c > 4 {
		t.Errorf("%d compilations for 2 keys in 2 caches", c)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*", "*", ".tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestUnwritableDirFallsBack(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"under a regular file": filepath.Join(file, "cache")}
	if os.Geteuid() != 0 { // root ignores permissions
		ro := filepath.Join(tmp, "ro")
		os.Mkdir(ro, 0o500)
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		dirs["read-only folder"] = ro
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			fc := &fake{version: "fake-1.0"}
			c := New(dir, fc)
			var warn bytes.Buffer
			c.warn = &warn
			for range 2 {
				img, err := c.Compile(src, "k", "sm_90a", nil)
				if err != nil || !bytes.Equal(img, want("sm_90a")) {
					t.Fatalf("err %v", err)
				}
			}
			s := c.Stats()
			if s.WriteErrors != 2 || s.LastWriteErr == nil || fc.calls.Load() != 2 {
				t.Errorf("stats %+v, %d compilations", s, fc.calls.Load())
			}
			// Reported once, in one line, saying what to do.
			if got := warn.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "cannot store compiled kernels") || !strings.Contains(got, "TILEGO_CACHE") {
				t.Errorf("warning %q, want one line", got)
			}
		})
	}
}

func TestNoDirAndErrors(t *testing.T) {
	fc := &fake{version: "fake-1.0"}
	c := New("", fc)
	for range 2 {
		if _, err := c.Compile(src, "k", "sm_90a", nil); err != nil {
			t.Fatal(err)
		}
	}
	if fc.calls.Load() != 2 {
		t.Errorf("caching off: %d compilations, want 2", fc.calls.Load())
	}

	dir := t.TempDir()
	bad := &fake{version: "fake-1.0", fail: errors.New("NVRTC_ERROR_COMPILATION")}
	_, err := New(dir, bad).Compile(src, "k", "sm_90a", []string{"-O3"})
	if err == nil || !strings.Contains(err.Error(), "something is wrong") || !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION") {
		t.Errorf("compile error lacks the log: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*")); len(m) != 0 {
		t.Errorf("failed compilation was cached: %v", m)
	}
	if _, err := New(dir, nil).Compile(src, "k", "sm_90a", nil); err == nil {
		t.Error("nil compiler accepted")
	}
	// An explicit architecture option is not duplicated.
	New("", fc).Compile(src, "k", "sm_90a", []string{"--gpu-architecture=compute_90a"})
	if len(fc.lastOps) != 1 {
		t.Errorf("options %v", fc.lastOps)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("TILEGO_CACHE", "/some/where")
	if d := DefaultDir(); d != "/some/where" {
		t.Errorf("DefaultDir = %q", d)
	}
	t.Setenv("TILEGO_CACHE", "off")
	if d := DefaultDir(); d != "" {
		t.Errorf("DefaultDir with off = %q", d)
	}
	t.Setenv("TILEGO_CACHE", "")
	if runtime.GOOS != "linux" {
		return
	}
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d := DefaultDir(); d != "/xdg/tilego" {
		t.Errorf("DefaultDir from XDG = %q", d)
	}
}
