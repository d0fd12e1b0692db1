package interp

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Options control a run.
type Options struct {
	// Timeout bounds the run's wall time: a program whose loop never ends
	// (a While whose condition stays true) fails with an error naming the
	// loop rather than hang. 0 means DefaultTimeout; a negative value, none.
	Timeout time.Duration
	// Context, when set, stops the run (with its error) once it is done.
	Context context.Context
}

// DefaultTimeout is the time guard of a run that sets none: far past what
// the interpreter takes on any program the library or the tests run, as
// the GPU's watchdog (TILEGO_HANG_S) is past any kernel's time.
const DefaultTimeout = 10 * time.Minute

// PanicError is a panic the interpreter recovered from while it compiled or
// ran an op: a bug in the interpreter (or a program the verifier should
// have refused), reported as an error so that the host process lives on.
type PanicError struct {
	Op    string // the op that was running
	Pos   ir.Pos // where the program built it
	Value any    // what was panicked with
	Stack string // the goroutine's stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s: %s: interp: internal error (a panic): %v", e.Pos, e.Op, e.Value)
}

// recovered turns a recovered panic value into a *PanicError at the op st
// last started (st may be nil while compiling).
func recovered(r any, st *state) error {
	e := &PanicError{Op: "compile", Value: r, Stack: string(debug.Stack())}
	if st != nil && st.at != nil {
		e.Op, e.Pos = ir.OpName(st.at), st.at.Position()
	}
	return e
}

// RunWith is Run under opts' time guard and context.
func RunWith(f *ir.Func, args []*tensor.Tensor, opts Options) (err error) {
	if f == nil || f.Kernel == nil {
		return fmt.Errorf("interp: no program to run")
	}
	c := &compiler{f: f, slot: map[*ir.Var]int{}, buf: map[*ir.Buffer]int{}}
	if len(args) != len(f.Params) {
		return fmt.Errorf("interp: %s takes %d tensors, got %d", f.Name, len(f.Params), len(args))
	}
	syms, err := Bind(f, args)
	if err != nil {
		return err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			c.stop(fmt.Errorf("stopped after %v (the interpreter's time guard, interp.Options.Timeout): a loop that never ends?", timeout))
		})
		defer t.Stop()
	}
	if ctx := opts.Context; ctx != nil {
		defer context.AfterFunc(ctx, func() { c.stop(fmt.Errorf("stopped: %w", context.Cause(ctx))) })()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("interp: %s: %w", f.Name, recovered(r, nil))
		}
	}()
	c.prepare(args, syms)
	if c.err != nil {
		return c.err
	}
	body := c.stmts(f.Kernel.Body)
	if c.err != nil {
		return c.err
	}
	return c.launch(body)
}

// stop makes every block stop at its next loop iteration or statement
// with why, and wakes the blocks of a cooperative kernel that wait.
func (c *compiler) stop(why error) {
	c.halt.CompareAndSwap(nil, &why)
	c.atomicMu.Lock()
	defer c.atomicMu.Unlock()
	if g := c.coop; g != nil { // its waiters see halt and fail at their wait
		g.cond.Broadcast()
	}
}

// halted reports whether the run must stop, failing st at pos if so.
func (st *state) halted(pos ir.Pos, op string) bool {
	if st.halt == nil {
		return false
	}
	why := st.halt.Load()
	if why == nil {
		return false
	}
	if st.err == nil {
		st.err = fmt.Errorf("%s: %s: %w", pos, op, *why)
	}
	return true
}

// runBlock runs one block's body, turning a panic into an error.
func runBlock(st *state, body exec) {
	defer func() {
		if r := recover(); r != nil {
			st.err = recovered(r, st)
		}
	}()
	body(st)
}
