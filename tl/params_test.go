package tl_test

import (
	"testing"

	"github.com/tilego/tilego/tl"
)

// NumParams counts the tensors declared so far, of every kind.
func TestNumParams(t *testing.T) {
	f := tl.NewFunc("params")
	if n := f.NumParams(); n != 0 {
		t.Errorf("a new func has %d params", n)
	}
	f.In("A", tl.F32, 4)
	f.Out("B", tl.F32, 4)
	f.Scratch("C", tl.I32, 1)
	if n := f.NumParams(); n != 3 {
		t.Errorf("%d params, want 3", n)
	}
}
