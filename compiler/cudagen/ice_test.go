package cudagen

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// Programs that once made Compile panic (issue 50): each compiles, or is
// refused with an ordinary error at the user's line, on both paths.
func TestCompileNoPanic(t *testing.T) {
	cases := []struct {
		name string
		prog func() (f *tl.Func, line int)
		want string // "" compiles; else the refusal, at line
		src  string // in the generated code when it compiles
	}{
		// wgSplit divided by zero warpgroups (the CLI's mla-decode
		// --config "threads=64 splitn=true m=64"): mma.sync takes it.
		{"splitn_64_threads", func() (*tl.Func, int) {
			return kernels.MLADecode(kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}, kernels.MLAConfig{M: 64, Stages: 1, Threads: 64, SplitN: true}), 0
		}, "", "mma_bf16_16816"},
		// bufLayout indexed the last dim of a shape with none.
		{"scalar_shared_tile", func() (*tl.Func, int) {
			f := tl.NewFunc("scalar_shared")
			X, Y := f.In("X", tl.F32, 4), f.Out("Y", tl.F32, 4)
			var line int
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				s := k.Shared(tl.F32)
				line = callerLine() - 1
				k.Copy(X.Sub(1), s)
				k.Copy(s, Y.Sub(2))
			})
			return f, line
		}, "alloc: shared tile s0 has no dims", ""},
		// vecWidth indexed the innermost dim of single elements.
		{"single_element_copies", func() (*tl.Func, int) {
			f := tl.NewFunc("single_elems")
			X, Y := f.In("X", tl.F16, 64, 64), f.Out("Y", tl.F16, 64, 64)
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				s := k.Shared(tl.F16, 8, 8)
				k.Copy(X.Sub(3, 5), s.Sub(1, 2))
				k.Copy(s.Sub(1, 2), Y.Sub(0, 0))
			})
			return f, 0
		}, "", "X[3 * 64 + 5]"},
		{"scalar_fragment_and_local", func() (*tl.Func, int) {
			f := tl.NewFunc("scalars")
			X, Y := f.In("X", tl.F32, 4), f.Out("Y", tl.F32, 4)
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				fr, l := k.Fragment(tl.F32), k.Local(tl.F32)
				k.Copy(X.Sub(1), fr)
				k.Copy(X.Sub(2), l)
				k.Copy(fr, Y.Sub(2))
				k.Copy(l, Y.Sub(3))
			})
			return f, 0
		}, "", "__global__"},
	}
	for _, tc := range cases {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			t.Run(tc.name+"/"+arch, func(t *testing.T) {
				tf, line := tc.prog()
				fn, err := tf.Build()
				if err != nil {
					t.Fatal(err)
				}
				p, err := Compile(fn, Options{Arch: arch})
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case tc.want == "" && !strings.Contains(p.Source, tc.src):
					t.Errorf("no %q in\n%s", tc.src, p.Source)
				case tc.want != "":
					checkRefusal(t, err, tc.want, "ice_test.go", line)
				}
			})
		}
	}
}

// A panic in a pass is an internal compiler error naming the program, the
// pass, the op being lowered at its line, and where the compiler panicked.
func TestCompileRecoversPanic(t *testing.T) {
	if _, err := tl.NewFunc("p").Build(); err == nil {
		t.Fatal("a program with no kernel built")
	}
	f := tl.NewFunc("boom")
	X, Y := f.In("X", tl.F32, 64), f.Out("Y", tl.F32, 64)
	var line int
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		fr := k.Fragment(tl.F32, 64)
		k.Copy(X, fr)
		line = callerLine() - 1
		k.Copy(fr, Y)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	saved := passes
	defer func() { passes = saved }()
	var panicLine int
	for _, at := range []bool{false, true} {
		passes = append(saved[:len(saved):len(saved)], pass{"explode", func(c *compilation) error {
			if at {
				c.at = c.f.Kernel.Body[0]
			}
			var s []int
			panicLine = callerLine() + 1
			s[len(c.f.Params)]++ // an index out of range: a runtime panic
			return nil
		}, nil})
		p, err := Compile(fn, Options{Arch: "sm_90a"})
		if p != nil || err == nil {
			t.Fatal("a panicking pass compiled")
		}
		for _, want := range []string{"internal compiler error", "program boom", "pass explode", fmt.Sprintf("ice_test.go:%d)", panicLine), "index out of range"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("at=%v: %q lacks %q", at, err, want)
			}
		}
		var pe *ir.Error
		if !errors.As(err, &pe) || at && (pe.Op != "copy" || pe.Pos.Line != line) || !at && pe.Op != "kernel" {
			t.Errorf("at=%v: %v: want the copy at line %d, or the kernel", at, err, line)
		}
	}
}

// checkRefusal fails unless err is an ir error containing want at file:line
// (any line when line is 0).
func checkRefusal(t *testing.T, err error, want, file string, line int) {
	t.Helper()
	var pe *ir.Error
	if list, ok := err.(ir.ErrorList); ok && len(list) > 0 {
		err = list[0] // Build's refusal: one
	}
	switch {
	case err == nil:
		t.Fatalf("compiled; want %q", want)
	case !errors.As(err, &pe):
		t.Fatalf("%v (%T): no position", err, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%v: want %q", err, want)
	case strings.Contains(err.Error(), "internal compiler error"):
		t.Errorf("%v: an internal error", err)
	case filepath.Base(pe.Pos.File) != file || line != 0 && pe.Pos.Line != line || pe.Pos.Line == 0:
		t.Errorf("%v: at %s; want %s:%d", err, pe.Pos, file, line)
	}
}

// callerLine is the line that called it.
func callerLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}
