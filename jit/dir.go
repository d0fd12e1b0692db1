package jit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// The cache folder's safety. Entries carry only hashes anyone can
// recompute, so whoever can write the folder can plant code that tilego
// then loads and launches: like ssh with its keys, tilego uses a folder
// only when the current user owns it and nobody else may write it.

// CheckDir makes dir a safe cache folder: created 0700 (parents too)
// when missing; refused, with a one-line error saying how to fix it, when
// it is not a folder, not the current user's, or writable by group or
// others. A folder that cannot be created is not refused: caching then
// fails to write, which is reported, and every run compiles.
func CheckDir(dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir) // a symlink is judged by the folder it names
	if errors.Is(err, fs.ErrNotExist) {
		if os.MkdirAll(dir, 0o700) != nil {
			return nil
		}
		st, err = os.Stat(dir)
	}
	if err != nil {
		return nil // unreadable: nothing can be loaded from it either
	}
	if !st.IsDir() {
		return fmt.Errorf("cache folder %s is not a folder; remove it, or set TILEGO_CACHE to a folder of your own (or to off)", dir)
	}
	return checkOwner(dir, st)
}
