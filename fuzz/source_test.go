package fuzz

import (
	"strings"
	"testing"
)

func TestSourceFault(t *testing.T) {
	cases := []struct{ src, want string }{
		{"__global__ void k() { a[i] = f(x); } // (unbalanced in a comment\n", ""},
		{`x = '}'; s = "{(";`, ""},
		{"/* { */ int a;", ""},
		{"void k() { a = b; ", "1 brackets left open"},
		{"void k() { a = (b; }", "unbalanced '}'"},
		{"int n = %!d(MISSING);", `"%!"`},
		{"f(<nil>)", `"<nil>"`},
	}
	for _, c := range cases {
		got := sourceFault(c.src)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("sourceFault(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}
