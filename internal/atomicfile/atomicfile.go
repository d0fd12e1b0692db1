// Package atomicfile replaces files so that readers never see a partial
// write: the caches of compiled kernels and tuned configs rely on it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path via a synced temporary file in the same
// folder and a rename, so readers see the old file or the whole new one,
// never a torn write; concurrent writers of one path each leave a whole file.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	// Make the rename itself durable; a failure here loses at most the new file.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
