// Package target is the interface every backend implements: the CPU
// interpreter, CUDA (sm_80 and sm_90a paths) and, later, HIP.
package backend

import (
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Backend compiles and runs tile programs on one device.
type Backend interface {
	Name() string   // "cpu", "cuda"
	Device() string // what runs the code, for reports
	// Limits are the resources the verifier checks programs against.
	Limits() ir.Limits
	// Emit returns the code the backend generates for f.
	Emit(f *ir.Func) (string, error)
	// Run executes f on args (one tensor per parameter, outputs written
	// back) and reports how long one launch took.
	Run(f *ir.Func, args []*tensor.Tensor, opt RunOptions) (Result, error)
}

// RunOptions controls timing.
type RunOptions struct {
	Warmup, Repeats int // launches before and during timing; 0 runs once untimed-warm
	// FlushBytes > 0 (a GPU backend) clears a buffer that large before every
	// launch, so each starts with a cold L2, and times each launch alone.
	FlushBytes int
}

// Result is what a run measured.
type Result struct {
	Time    time.Duration // median time of one launch
	Spread  time.Duration // max - min over the timed launches
	Repeats int
}
