package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write replaces what is at path, a symlink included, and never writes
// through one: TILEGO_STAMPS's files are written with it, at a path
// another user might have planted a link at.
func TestWriteReplacesSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, setup := range map[string]func(path string) error{
		"link to a file":    func(p string) error { return os.Symlink(victim, p) },
		"dangling link":     func(p string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) },
		"plain file":        func(p string) error { return os.WriteFile(p, []byte("old"), 0o644) },
		"nothing there yet": func(string) error { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.prog.txt")
			if err := setup(path); err != nil {
				t.Fatal(err)
			}
			if err := Write(path, []byte("1\n2\n")); err != nil {
				t.Fatal(err)
			}
			st, err := os.Lstat(path)
			if err != nil || st.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("%s: %v, mode %v; want a regular file", path, err, st.Mode())
			}
			if b, _ := os.ReadFile(path); string(b) != "1\n2\n" {
				t.Errorf("wrote %q", b)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Errorf("the link's target was overwritten: %q", b)
			}
			if _, err := os.Stat(filepath.Join(dir, "nowhere")); err == nil {
				t.Error("a dangling link's target was created")
			}
		})
	}
}
