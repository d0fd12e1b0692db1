package srcline

import "testing"

func TestFind(t *testing.T) {
	if got := Find("internal/srcline/srcline.go", "package srcline"); got != "srcline.go:5" {
		t.Errorf("got %q", got)
	}
	if got := Find("internal/srcline/srcline.go", "no such text anywhere here"+"!"); got != "" {
		t.Errorf("got %q, want none", got)
	}
}
