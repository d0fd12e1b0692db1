package jit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHelperProcess is not a test: it is the child of TestProcessesShareCache.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("TILEGO_JIT_HELPER_DIR")
	if dir == "" {
		t.Skip("helper only")
	}
	c := New(dir, &fake{version: "fake-1.0", delay: 20 * time.Millisecond})
	for i := range 20 {
		arch := fmt.Sprintf("sm_%d", 80+i%4)
		img, err := c.Compile(src, "k", arch, nil)
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		if !bytes.Equal(img, want(arch)) {
			fmt.Println("ERR wrong bytes for", arch)
			os.Exit(1)
		}
	}
	sum := sha256.Sum256([]byte(fmt.Sprint(c.Stats().WriteErrors)))
	fmt.Println("OK", hex.EncodeToString(sum[:4]))
	os.Exit(0)
}

// TestProcessesShareCache runs several processes compiling the same keys
// into one folder at once: every one must get the right bytes.
func TestProcessesShareCache(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	const procs = 6
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmds[i].Env = append(os.Environ(), "TILEGO_JIT_HELPER_DIR="+dir)
		outs[i] = new(bytes.Buffer)
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil || !strings.Contains(outs[i].String(), "OK") {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	// Every entry left behind verifies.
	for i := range 4 {
		arch := fmt.Sprintf("sm_%d", 80+i)
		k := KeyOf(src, "k", arch, "fake-1.0", []string{archOption(arch)})
		b, err := os.ReadFile(entryPath(dir, generation("fake-1.0"), k))
		if err != nil {
			t.Fatal(err)
		}
		if img, err := decodeEntry(k, b); err != nil || !bytes.Equal(img, want(arch)) {
			t.Errorf("%s: entry does not verify: %v", arch, err)
		}
	}
}
