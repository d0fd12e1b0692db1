//go:build unix

package jit

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a folder another user owns or group or others may
// write.
func checkOwner(dir string, st fs.FileInfo) error {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) != os.Geteuid() {
		return fmt.Errorf("cache folder %s belongs to uid %d, not to you (uid %d): code compiled there would run as you; set TILEGO_CACHE to a folder of your own (or to off)", dir, s.Uid, os.Geteuid())
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("cache folder %s is writable by group or others (mode %04o): anyone who can write it can plant code tilego runs; chmod 700 %s, or set TILEGO_CACHE to a folder of your own (or to off)", dir, perm, dir)
	}
	return nil
}
