package jit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// At its first store a cache removes killed writers' temporary files
// older than tmpMaxAge, and the generations of other formats and
// compilers unused for generationMaxAge; it keeps fresh ones, its own
// and folders that are not generations.
func TestUpkeep(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old, recent := now.Add(-generationMaxAge-time.Hour), now.Add(-time.Hour)
	gen := generation("fake-1.0")
	touch := func(p string, at time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
		os.Chtimes(filepath.Dir(p), at, at)
	}
	touch(filepath.Join(dir, gen, "ab", ".tmp-killed"), now.Add(-tmpMaxAge-time.Minute))
	touch(filepath.Join(dir, gen, "ab", ".tmp-writing"), now)
	touch(filepath.Join(dir, "v1", "ab", "old-layout.bin"), old) // before generations
	touch(filepath.Join(dir, "v1-fake-0.9", "ab", "x.bin"), old) // an old compiler
	touch(filepath.Join(dir, "v1-fake-0.8", usedStamp), recent)  // another compiler, in use
	touch(filepath.Join(dir, "v2-fake-1.0", "ab", "x.bin"), old) // another format
	touch(filepath.Join(dir, "tune", "gemm", "x.json"), old)     // the tuning cache
	touch(filepath.Join(dir, "notes", "x"), old)                 // not ours to judge
	for _, p := range []string{"v1/ab", "v1", "v1-fake-0.9/ab", "v1-fake-0.9", "v2-fake-1.0/ab", "v2-fake-1.0"} {
		os.Chtimes(filepath.Join(dir, p), old, old)
	}

	c := New(dir, &fake{version: "fake-1.0"})
	if _, err := c.Compile(src, "k", "sm_90a", nil); err != nil {
		t.Fatal(err)
	}
	for p, wantKept := range map[string]bool{
		filepath.Join(gen, "ab", ".tmp-killed"):  false,
		filepath.Join(gen, "ab", ".tmp-writing"): true,
		"v1":                                     false,
		"v1-fake-0.9":                            false,
		"v1-fake-0.8":                            true,
		"v2-fake-1.0":                            false,
		"tune":                                   true,
		"notes":                                  true,
		filepath.Join(gen, usedStamp):            true,
	} {
		_, err := os.Stat(filepath.Join(dir, p))
		if kept := err == nil; kept != wantKept {
			t.Errorf("%s: kept %v, want %v", p, kept, wantKept)
		}
	}
	want := []string{"1 temporary files", "v1", "v1-fake-0.9", "v2-fake-1.0"}
	if !slices.Equal(c.upkeepLog, want) {
		t.Errorf("upkeep %v, want %v", c.upkeepLog, want)
	}
	// Once a process: a second store does not walk the folder again.
	touch(filepath.Join(dir, gen, "cd", ".tmp-killed"), old)
	if _, err := c.Compile(src, "k", "sm_80", nil); err != nil {
		t.Fatal(err)
	}
	if len(c.upkeepLog) != len(want) {
		t.Errorf("upkeep ran twice: %v", c.upkeepLog)
	}
}

// A generation in use marks itself, so another process's pruning keeps
// it however old its entries are.
func TestHitMarksGenerationUsed(t *testing.T) {
	dir := t.TempDir()
	fc := &fake{version: "fake-1.0"}
	if _, err := New(dir, fc).Compile(src, "k", "sm_90a", nil); err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(dir, generation("fake-1.0"), usedStamp)
	old := time.Now().Add(-2 * generationMaxAge)
	os.Chtimes(stamp, old, old)
	if _, err := New(dir, fc).Compile(src, "k", "sm_90a", nil); err != nil || fc.calls.Load() != 1 {
		t.Fatalf("err %v, %d compilations; want a hit", err, fc.calls.Load())
	}
	if st, err := os.Stat(stamp); err != nil || time.Since(st.ModTime()) > time.Minute {
		t.Errorf("a hit did not mark the generation used: %v", err)
	}
}
