// Package srcline finds the line of a piece of source in the repository,
// for tests that check an error names a kernel's file:line: they look the
// line up instead of writing it down, so that editing the kernel does not
// break them.
package srcline

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Find returns "base:line" of the first line of the repository file rel
// (a path from the repository root) that contains text, or "" when none
// does.
func Find(rel, text string) string {
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	root := filepath.Join(filepath.Dir(here), "..", "..")
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return ""
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return filepath.Base(rel) + ":" + strconv.Itoa(i+1)
		}
	}
	return ""
}
