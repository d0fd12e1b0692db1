// Package cpu is the interpreter as a backend: the reference meaning of a
// program, and what runs when no GPU is usable.
package cpu

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Backend runs programs on the interpreter.
type Backend struct{}

func (Backend) Name() string      { return "cpu" }
func (Backend) Device() string    { return fmt.Sprintf("CPU interpreter (%d cores)", runtime.NumCPU()) }
func (Backend) Limits() ir.Limits { return ir.DefaultLimits }

// Emit prints the IR: the interpreter runs it as is.
func (Backend) Emit(f *ir.Func) (string, error) { return f.String(), nil }

// Run interprets f; with Repeats > 1 it reports the median of the runs.
func (Backend) Run(f *ir.Func, args []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	n := max(opt.Repeats, 1)
	times := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := interp.Run(f, args); err != nil {
			return backend.Result{}, err
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	return backend.Result{Time: times[len(times)/2], Spread: times[len(times)-1] - times[0], Repeats: n}, nil
}

var _ backend.Backend = Backend{}
