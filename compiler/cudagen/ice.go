package cudagen

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"

	"github.com/tilego/tilego/ir"
)

// recoverICE turns a panic in a pass into an error, so that Compile never
// panics on a program: an "internal compiler error" naming the program,
// the pass, the op being lowered (at its file:line, else the kernel's) and
// where in the compiler it panicked, for the fuzzer to count and a user to
// report. Every panic is a compiler bug: a program the compiler cannot
// lower is refused with an ordinary error.
func (c *compilation) recoverICE(prog **Program, err *error) {
	r := recover()
	if r == nil {
		return
	}
	*prog = nil
	*err = c.placed(fmt.Errorf("internal compiler error (cuda %s, program %s, pass %s, at %s): %v", c.opts.Arch, c.f.Name, c.pass, panicSite(), r))
}

// placed is a pass's error with a position: one without (a helper's
// plain error) gets the statement being lowered's, else the kernel's.
func (c *compilation) placed(err error) error {
	var pe *ir.Error
	var list ir.ErrorList
	if errors.As(err, &pe) || errors.As(err, &list) {
		return err
	}
	op, pos := "kernel", c.f.Pos
	if c.f.Kernel != nil {
		pos = c.f.Kernel.P
	}
	if c.at != nil {
		op, pos = stmtName(c.at), c.at.Position()
	}
	return errAt(op, pos, "%v", err)
}

// stmtName is a statement's op as errors name it ("copy", "atomic_add").
func stmtName(s ir.Stmt) string {
	var b strings.Builder
	for i, r := range strings.TrimPrefix(fmt.Sprintf("%T", s), "*ir.") {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// panicSite is the compiler's function and line that panicked: the first
// frame below the runtime's panic machinery.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		fr, more := frames.Next()
		if !strings.HasPrefix(fr.Function, "runtime.") && fr.Function != "" {
			name := fr.Function[strings.LastIndex(fr.Function, ".")+1:]
			return fmt.Sprintf("%s %s:%d", name, filepath.Base(fr.File), fr.Line)
		}
		if !more {
			return "?"
		}
	}
}
