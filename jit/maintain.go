package jit

// Upkeep of the cache folder. Entries live in a generation folder named
// for the entry format and the compiler (v1-nvrtc-13.0), so that what an
// older toolkit or tilego wrote, which no key of this one can hit, can be
// found and pruned; a killed writer's temporary file is removed once it
// is clearly abandoned.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	// tmpMaxAge: a writer takes milliseconds, so an older temporary
	// file is a killed writer's.
	tmpMaxAge = 10 * time.Minute
	// generationMaxAge: another generation unused this long is pruned
	// (one in use marks itself once per process: usedStamp).
	generationMaxAge = 7 * 24 * time.Hour
	usedStamp        = ".used"
)

// generationName matches the folders generations live in, and the
// layout before them (v1 alone); nothing else in the folder (the
// tuning cache's tune/) is touched.
var generationName = regexp.MustCompile(`^v[0-9]+(-[A-Za-z0-9._-]+)?$`)

// generation is the folder of entries of this format compiled by
// compilerVersion.
func generation(compilerVersion string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, compilerVersion)
	return fmt.Sprintf("v%d-%s", formatVersion, safe)
}

// markUsed notes that generation gen of dir is in use now, so that other
// processes' pruning keeps it.
func markUsed(dir, gen string, now time.Time) {
	p := filepath.Join(dir, gen, usedStamp)
	if os.Chtimes(p, now, now) == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		if f, err := os.Create(p); err == nil {
			f.Close()
			os.Chtimes(p, now, now)
		}
	}
}

// prune removes the other generations of dir unused since
// generationMaxAge before now, and returns their names.
func prune(dir, gen string, now time.Time) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var gone []string
	for _, e := range ents {
		if !e.IsDir() || e.Name() == gen || !generationName.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if now.Sub(lastUse(p)) < generationMaxAge {
			continue
		}
		if os.RemoveAll(p) == nil {
			gone = append(gone, e.Name())
		}
	}
	return gone
}

// lastUse is when generation folder p was last marked used or written.
func lastUse(p string) time.Time {
	var t time.Time
	for _, q := range []string{p, filepath.Join(p, usedStamp)} {
		if st, err := os.Stat(q); err == nil && st.ModTime().After(t) {
			t = st.ModTime()
		}
	}
	return t
}

// cleanTemps removes the temporary files of killed writers from a
// generation's shards, those older than tmpMaxAge before now, and
// returns how many.
func cleanTemps(genDir string, now time.Time) int {
	shards, err := os.ReadDir(genDir)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range shards {
		if s.IsDir() {
			n += removeOrphans(filepath.Join(genDir, s.Name()), now)
		}
	}
	return n
}

// RemoveOrphans removes from dir the temporary files atomicfile.Write
// leaves when its writer is killed, once older than a writer could be,
// and returns how many (the tuning cache's folders use it too).
func RemoveOrphans(dir string) int { return removeOrphans(dir, time.Now()) }

func removeOrphans(dir string, now time.Time) int {
	files, _ := os.ReadDir(dir)
	n := 0
	for _, f := range files {
		if !strings.HasPrefix(f.Name(), ".tmp-") {
			continue
		}
		if info, err := f.Info(); err == nil && now.Sub(info.ModTime()) > tmpMaxAge {
			if os.Remove(filepath.Join(dir, f.Name())) == nil {
				n++
			}
		}
	}
	return n
}
