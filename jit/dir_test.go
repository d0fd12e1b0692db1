package jit

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A cache folder is used only when it is the user's and nobody else may
// write it; a missing one is made 0700.
func TestCheckDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix owners and modes")
	}
	tmp := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(tmp, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o700)
	open := mk("open", 0o777)
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o600)
	linkOwn, linkOpen := filepath.Join(tmp, "link-own"), filepath.Join(tmp, "link-open")
	os.Symlink(own, linkOwn)
	os.Symlink(open, linkOpen)
	tests := []struct {
		name, dir, err string // err "" accepts
	}{
		{"own 0700", own, ""},
		{"own 0755", mk("shared-read", 0o755), ""},
		{"missing, made", filepath.Join(tmp, "new", "cache"), ""},
		{"world-writable", open, "writable by group or others (mode 0777)"},
		{"group-writable", mk("group", 0o770), "chmod 700 " + filepath.Join(tmp, "group")},
		{"sticky /tmp-like", mk("sticky", 0o777|os.ModeSticky), "writable by group or others"},
		{"a file", file, "is not a folder"},
		{"link to own", linkOwn, ""},
		{"link to world-writable", linkOpen, "writable by group or others"},
		{"caching off", "", ""},
	}
	if os.Geteuid() == 0 { // only root can give a folder away
		other := mk("other", 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct{ name, dir, err string }{"another user's", other, "belongs to uid 65534, not to you"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDir(tt.dir)
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want %q", err, tt.err)
			case err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "TILEGO_CACHE")):
				t.Errorf("error %q: want one line saying how to fix it", err)
			}
		})
	}
	if st, err := os.Stat(filepath.Join(tmp, "new", "cache")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("made folder: %v, mode %v; want 0700", err, st.Mode())
	}
}

// A planted folder is refused before anything is read from it or
// compiled: the error reaches the caller.
func TestCacheRefusesUnsafeDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(dir, 0o777)
	os.Chmod(dir, 0o777)
	fc := &fake{version: "fake-1.0"}
	_, err := New(dir, fc).Compile(src, "k", "sm_90a", nil)
	if err == nil || !strings.Contains(err.Error(), "chmod 700") || fc.calls.Load() != 0 {
		t.Errorf("err %v, %d compilations; want a refusal", err, fc.calls.Load())
	}
}
