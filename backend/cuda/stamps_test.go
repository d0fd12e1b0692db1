package cuda

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TILEGO_STAMPS's file is written as a new file: a symlink another user
// planted at prefix.NAME.txt is replaced, and what it names is left alone.
func TestWriteStampsReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	path := filepath.Join(dir, "run.mla_decode.txt")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	raw := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 7), 1<<40)
	if err := writeStamps(path, raw); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("wrote through the symlink: victim holds %q", b)
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("%v, %v; want a regular file", err, st.Mode())
	}
	if b, _ := os.ReadFile(path); string(b) != "7\n1099511627776\n" {
		t.Errorf("stamps file %q", b)
	}
}
