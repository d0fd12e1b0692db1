package tl_test

import (
	"errors"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// Build runs the target's check on a verified program only, and returns
// its refusal as is.
func TestBuildTargetCheck(t *testing.T) {
	refusal := errors.New("the target cannot")
	for _, tc := range []struct {
		name    string
		threads int // 100 does not verify
		check   error
		want    error // nil: builds
		ran     bool
	}{
		{"accepted", 128, nil, nil, true},
		{"refused", 128, refusal, refusal, true},
		{"not verified", 100, refusal, nil, false},
	} {
		f := tl.NewFunc("k")
		X, Y := f.In("X", tl.F32, 64), f.Out("Y", tl.F32, 64)
		f.Kernel(tl.Grid(1), tc.threads, func(k *tl.Block) {
			fr := k.Fragment(tl.F32, 64)
			k.Copy(X, fr)
			k.Copy(fr, Y)
		})
		ran := false
		lim := ir.DefaultLimits
		lim.Target = func(*ir.Func) error { ran = true; return tc.check }
		fn, err := f.Build(lim)
		switch {
		case ran != tc.ran:
			t.Errorf("%s: check ran %v, want %v", tc.name, ran, tc.ran)
		case tc.want != nil && (err != tc.want || fn != nil):
			t.Errorf("%s: %v, %v; want %v", tc.name, fn, err, tc.want)
		case tc.want == nil && tc.threads == 128 && (err != nil || fn == nil):
			t.Errorf("%s: %v", tc.name, err)
		case tc.threads == 100 && err == nil:
			t.Errorf("%s: built", tc.name)
		}
	}
}
