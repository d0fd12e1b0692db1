package fuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Reproducer is a finding written as a Go file: the one-line summary, the
// full message and the shrunk program as a function that builds it with tl.
func Reproducer(o Outcome, small *Prog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n//\n", o.Summary())
	for _, l := range strings.Split(strings.TrimSpace(o.Msg), "\n") {
		fmt.Fprintf(&b, "//\t%s\n", l)
	}
	fmt.Fprintf(&b, "//\n// Shrunk from the program of seed %d (tilego fuzz --n 1 --seed %d); %d blocks of %d threads, rows %d.\n",
		o.Seed, o.Seed, small.Blocks, small.Threads, small.Rows)
	fmt.Fprintf(&b, "// Inputs are random in ±[1/4, 2], outputs poisoned with NaN (fuzz.Prog.Args).\n\n")
	b.WriteString("package repro\n\nimport (\n\t\"math\"\n\n\t\"github.com/tilego/tilego/tl\"\n)\n\nvar _ = math.Inf\n\n")
	b.WriteString(small.GoSource())
	return b.String()
}

// WriteReproducer writes the reproducer to dir/seed-N.go and returns the
// path.
func WriteReproducer(dir string, o Outcome, small *Prog) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("seed-%d.go", o.Seed))
	return path, os.WriteFile(path, []byte(Reproducer(o, small)), 0o644)
}
