package fuzz

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A saved program loads back equal.
func TestSaveLoadProg(t *testing.T) {
	p := Generate(42, Defaults())
	path := filepath.Join(t.TempDir(), "p.gob")
	if err := SaveProg(path, p); err != nil {
		t.Fatal(err)
	}
	q, err := LoadProg(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Error("the loaded program differs from the saved one")
	}
}

// Isolated runs the checking command with the program's file last and
// reads its outcome; a process that prints none fails as a run error.
func TestIsolated(t *testing.T) {
	p := Generate(7, Defaults())
	for _, c := range []struct {
		script, kind, msg string
	}{
		{`test -s "$1" && echo '{"Seed": 7, "Kind": "GPU run error", "Msg": "illegal address"}'`, GPURun, "illegal address"},
		{`test -s "$1" && echo '{"Seed": 7}'`, "", ""},
		{`exit 3`, GPURun, "printed no outcome"},
	} {
		o := Isolated("sh", "-c", c.script, "check")(p)
		if o.Kind != c.kind || !strings.Contains(o.Msg, c.msg) {
			t.Errorf("%s: got %+v, want kind %q and %q", c.script, o, c.kind, c.msg)
		}
	}
}
