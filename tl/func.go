// Package tl is the tile language: a kernel author builds a program of tiles
// (shared-memory and register tiles, copies, matrix multiplies, element-wise
// loops and reductions) with ordinary Go calls, and gets an ir.Func that the
// interpreter runs and the backends compile.
package tl

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/tilego/tilego/ir"
)

// DType and its values, re-exported so kernels need import only tl.
type DType = ir.DType

const (
	Bool   = ir.Bool
	I32    = ir.I32
	I64    = ir.I64
	F16    = ir.F16
	BF16   = ir.BF16
	F32    = ir.F32
	F8E4M3 = ir.F8E4M3
	F8E5M2 = ir.F8E5M2
)

// Warp policies of a Gemm (WithPolicy) and shared-tile swizzles (Swizzled).
const (
	Square      = ir.Square
	FullRow     = ir.FullRow
	FullCol     = ir.FullCol
	SwizzleAuto = ir.SwizzleAuto
	SwizzleNone = ir.SwizzleNone
)

// Func builds one program. Errors found while building are collected and
// returned by Build together with the verifier's.
type Func struct {
	fn     *ir.Func
	errs   ir.ErrorList
	body   *[]ir.Stmt // where the next statement goes
	inKern bool
	nextID map[string]int
}

// NewFunc starts a program.
func NewFunc(name string) *Func {
	f := &Func{fn: &ir.Func{Name: name, Pos: callerPos()}, nextID: map[string]int{}}
	setCurrent(f)
	return f
}

// self is f ready to record into: a zero Func gets its program, and a nil
// one borrows this goroutine's Func (see orphan) so that no call panics.
func (f *Func) self() *Func {
	if f == nil {
		return orphan()
	}
	f.init()
	return f
}

func (f *Func) init() {
	if f.fn == nil {
		f.fn = &ir.Func{Name: "func", Pos: callerPos()}
	}
	if f.nextID == nil {
		f.nextID = map[string]int{}
	}
}

// callerPos is the position of the first caller outside this package: the
// line of the kernel author's code that built the op.
//
// Programs are built by the thousand (a tuner's config space), and
// looking frames up was most of building one: the position of a stack's
// innermost few frames, which usually hold the author's, is looked up once
// and remembered.
func callerPos() ir.Pos {
	var short [4]uintptr
	n := runtime.Callers(2, short[:])
	if pos, ok := shortPos.Load(short); ok {
		return pos.(ir.Pos)
	}
	if pos, ok := firstOutside(short[:n]); ok || n < len(short) {
		shortPos.Store(short, pos)
		return pos
	}
	var long [16]uintptr
	n = runtime.Callers(2, long[:])
	pos, _ := firstOutside(long[:n])
	return pos
}

// shortPos remembers callerPos's positions by a stack's innermost frames
// ([4]uintptr, zeros past the stack's end) where those hold it.
var shortPos sync.Map

// firstOutside is the position of the first frame of pcs outside this
// package, and whether there is one.
func firstOutside(pcs []uintptr) (ir.Pos, bool) {
	frames := runtime.CallersFrames(pcs)
	for {
		fr, more := frames.Next()
		if fr.PC != 0 && !strings.HasPrefix(fr.Function, "github.com/tilego/tilego/tl.") {
			return ir.Pos{File: fr.File, Line: fr.Line}, true
		}
		if !more {
			return ir.Pos{}, false
		}
	}
}

func (f *Func) errorf(op string, pos ir.Pos, format string, args ...any) {
	f.errs = append(f.errs, &ir.Error{Op: op, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// check records the error carried by any of xs, once.
func (f *Func) check(op string, pos ir.Pos, xs ...Expr) bool {
	if err := firstErr(xs...); err != "" {
		f.errorf(op, pos, "%s", err)
		return false
	}
	return true
}

func (f *Func) name(prefix string) string {
	n := f.nextID[prefix]
	f.nextID[prefix]++
	return fmt.Sprintf("%s%d", prefix, n)
}

// In declares an input tensor. Dims are ints or symbolic sizes (Sym).
func (f *Func) In(name string, dt DType, shape ...any) *Tensor {
	return f.self().param(name, dt, false, shape)
}

// Out declares a tensor the program writes (an output).
func (f *Func) Out(name string, dt DType, shape ...any) *Tensor {
	return f.self().param(name, dt, true, shape)
}

// Scratch declares a global workspace of the kernel's: the caller hands it
// over zeroed, and the kernel must leave it zeroed (Ticket's counters, reset
// by the block that draws the last ticket). It is not poisoned before a
// launch nor checked after.
func (f *Func) Scratch(name string, dt DType, shape ...any) *Tensor {
	t := f.self().param(name, dt, true, shape)
	t.b.Scratch = true
	return t
}

func (f *Func) param(name string, dt DType, out bool, shape []any) *Tensor {
	pos := callerPos()
	b := &ir.Buffer{Name: name, DType: dt, Scope: ir.Global, Output: out, Pos: pos}
	for _, d := range shape {
		x := lift(d)
		if !f.check("param", pos, x) {
			continue
		}
		if !x.e.Type().IsInt() {
			f.errorf("param", pos, "%s: dim %s is not an integer", name, ir.ExprString(x.e))
			continue
		}
		b.Shape = append(b.Shape, x.e)
	}
	f.fn.Params = append(f.fn.Params, b)
	return &Tensor{f: f, b: b}
}

// NumParams is how many tensors f has declared (In, Out, Scratch): the
// length of the argument list a launch binds.
func (f *Func) NumParams() int { return len(f.self().fn.Params) }

// Sym declares a size bound when the kernel is launched (from the shapes of
// the tensors passed in).
func (f *Func) Sym(name string) Expr {
	f = f.self()
	v := &ir.Var{Name: name, Kind: ir.SymSize, Pos: callerPos()}
	f.fn.Syms = append(f.fn.Syms, v)
	return Expr{e: v}
}

// Refuse makes Build fail with the message, at the caller's file:line: for
// a kernel builder given a parameter it cannot honor (a library kernel
// asked for an option it does not implement), rather than building a
// program that ignores it.
func (f *Func) Refuse(format string, args ...any) {
	f = f.self()
	f.errorf("refuse", callerPos(), format, args...)
}

// NumSMs is the number of multiprocessors of the GPU that runs the
// program, bound at launch from the device (interp.InterpSMs in the
// interpreter). A grid may use it (a persistent kernel launches a block an
// SM), and so may the kernel: with a block's linear index it names about
// the block that runs one wave later.
func (f *Func) NumSMs() Expr {
	f = f.self()
	if f.fn.SMs == nil {
		f.fn.SMs = &ir.Var{Name: "num_sms", Kind: ir.SMCount}
	}
	return Expr{e: f.fn.SMs}
}

// Grid lists the number of blocks along x, y and z (1 to 3 dims).
func Grid(dims ...any) []any { return dims }

// Kernel defines the program's body, run by every block of the grid with
// the given number of threads.
func (f *Func) Kernel(grid []any, threads int, body func(k *Block)) {
	pos := callerPos()
	f = f.self()
	switch {
	case f.fn.Kernel != nil:
		f.errorf("kernel", pos, "a program has one kernel; this is the second")
		return
	case body == nil:
		f.errorf("kernel", pos, "nil body")
		return
	}
	k := &ir.Kernel{At: ir.At{P: pos}, Threads: threads}
	for i, g := range grid {
		x := lift(g)
		if f.check("kernel", pos, x) {
			k.Grid = append(k.Grid, x.e)
		}
		if i < 3 {
			k.Idx = append(k.Idx, &ir.Var{Name: "b" + "xyz"[i:i+1], Kind: ir.BlockIdx, Axis: i})
		}
	}
	f.fn.Kernel = k
	f.body = &k.Body
	f.inKern = true
	saved := setCurrent(f)
	body(&Block{f: f, k: k})
	setCurrent(saved)
	f.inKern = false
	f.body = nil
}

// Build verifies the program against the limits (ir.DefaultLimits if none)
// and returns it, or every error found. A verified program then meets the
// target's check (lim.Target) if there is one, whose error is returned as is.
func (f *Func) Build(lim ...ir.Limits) (*ir.Func, error) {
	if f == nil {
		return nil, ir.ErrorList{{Op: "func", Pos: callerPos(), Msg: "Build on a nil *tl.Func; start a program with NewFunc"}}
	}
	f.init()
	dropCurrent(f)
	l := ir.DefaultLimits
	if len(lim) > 0 {
		l = lim[0]
	}
	errs := append(ir.ErrorList{}, f.errs...)
	if len(errs) == 0 {
		if err := ir.Verify(f.fn, l); err != nil {
			errs = append(errs, err.(ir.ErrorList)...)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if l.Target != nil {
		if err := l.Target(f.fn); err != nil {
			return nil, err
		}
	}
	return f.fn, nil
}

// emit appends a statement at the current point of the program.
func (f *Func) emit(op string, pos ir.Pos, s ir.Stmt) {
	if f.body == nil {
		f.errorf(op, pos, "must be called inside Kernel")
		return
	}
	*f.body = append(*f.body, s)
}

// nest runs build with statements going into *into.
func (f *Func) nest(into *[]ir.Stmt, build func()) {
	saved := f.body
	f.body = into
	build()
	f.body = saved
}
