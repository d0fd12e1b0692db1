package fuzz

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tilego/tilego/backend/hip/codeobj"
	"github.com/tilego/tilego/compiler/cudagen"
)

// Fuzzed programs compile for gfx942 as they emit: every program the AMD
// target does not refuse at the op's file:line is HIP that clang-19 turns
// into a code object with the kernel in it.
func TestAMDCompiles(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 30
	}
	var progs []*cudagen.Program
	for s := uint64(1); s <= uint64(n); s++ {
		fn, err := Generate(s, Defaults()).IR()
		if err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
		p, msg, panicked := Emit(fn, "gfx942")
		switch {
		case panicked:
			t.Errorf("seed %d: panic: %s", s, msg)
		case p == nil && !placed(msg):
			t.Errorf("seed %d: refused without the op's file:line: %s", s, msg)
		case p != nil:
			progs = append(progs, p)
		}
	}
	if len(progs) < n/3 {
		t.Fatalf("only %d of %d programs emitted for gfx942", len(progs), n)
	}
	name, text := cudagen.Header("gfx942")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, p := range progs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			obj, err := codeobj.Build(p.Source, codeobj.Options{Includes: []string{dir}, Flags: []string{"-Wno-parentheses-equality"}})
			if err != nil {
				t.Errorf("%s: %v", p.Name, err)
				return
			}
			r, err := obj.Report()
			if err != nil {
				t.Errorf("%s: report: %v", p.Name, err)
				return
			}
			if _, ok := r.Kernel(p.Name); !ok {
				t.Errorf("%s: no such kernel in the code object: %s", p.Name, r)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d programs compiled for gfx942", len(progs), n)
}
