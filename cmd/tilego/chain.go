package main

import (
	"slices"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// runProblem runs p with config cfg on inputs (whose outputs arrive
// poisoned with NaN) and times it as opt says. A problem of several
// programs (a kernels.Chain: MLA's split path is the split kernel, then
// the combine) runs them in order and is timed from the first program's
// start to the last one's end.
func runProblem(be backend.Backend, p kernels.Problem, cfg kernels.Config, inputs []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	fns, idx, err := bench.Programs(p, cfg, be.Limits())
	if err != nil {
		return backend.Result{}, err
	}
	if len(fns) == 1 {
		args := inputs
		if idx != nil {
			args = pick(inputs, idx[0])
		}
		return be.Run(fns[0], args, opt)
	}
	if b, ok := be.(*cuda.Backend); ok {
		return runChainGPU(b, fns, idx, inputs, opt)
	}
	// Elsewhere (the interpreter) each program runs through the backend.
	var ts []time.Duration
	for range max(opt.Repeats, 1) {
		t0 := time.Now()
		for i, fn := range fns {
			if _, err := be.Run(fn, pick(inputs, idx[i]), backend.RunOptions{Repeats: 1}); err != nil {
				return backend.Result{}, err
			}
		}
		ts = append(ts, time.Since(t0))
	}
	slices.Sort(ts)
	return backend.Result{Time: ts[len(ts)/2], Spread: ts[len(ts)-1] - ts[0], Repeats: len(ts)}, nil
}

// pick is the tensors of list at idx, in order.
func pick(list []*tensor.Tensor, idx []int) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(idx))
	for i, a := range idx {
		out[i] = list[a]
	}
	return out
}

// runChainGPU compiles the programs, binds them to one upload of inputs,
// poisons every tensor one writes, times the chain and downloads the
// results into inputs.
func runChainGPU(b *cuda.Backend, fns []*ir.Func, idx [][]int, inputs []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	progs := make([]*cudagen.Program, len(fns))
	for i, fn := range fns {
		p, err := cudagen.Compile(fn, b.Options())
		if err != nil {
			return backend.Result{}, err
		}
		progs[i] = p
	}
	c, err := cuda.PrepareChain(b, progs, idx, inputs)
	if err != nil {
		return backend.Result{}, err
	}
	defer c.Free()
	if err := c.Poison(); err != nil {
		return backend.Result{}, err
	}
	res, err := c.Time(opt)
	if err != nil {
		return res, err
	}
	return res, c.Download(inputs)
}
