package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/target"
	"github.com/tilego/tilego/target/cuda"
	"github.com/tilego/tilego/tensor"
)

// runProblem runs p with config cfg on inputs (whose outputs arrive
// poisoned with NaN) and times it as opt says. A problem of several
// programs (a kernels.Chain: MLA's split path is the split kernel, then
// the combine) runs them in order and is timed from the first program's
// start to the last one's end.
func runProblem(be target.Backend, p kernels.Problem, cfg kernels.Config, inputs []*tensor.Tensor, opt target.RunOptions) (target.Result, error) {
	var steps []kernels.Step
	if ch, ok := p.(kernels.Chain); ok {
		var err error
		if steps, err = ch.Steps(cfg); err != nil {
			return target.Result{}, err
		}
	}
	if len(steps) <= 1 {
		fn, err := kernels.Build(p, cfg, be.Limits())
		if err != nil {
			return target.Result{}, err
		}
		return be.Run(fn, inputs, opt)
	}
	fns := make([]*ir.Func, len(steps))
	for i, st := range steps {
		fn, err := st.Func.Build(be.Limits())
		if err != nil {
			return target.Result{}, fmt.Errorf("%s step %d (%s) does not build:\n%w", p.Kernel(), i, kernels.ConfigFields(cfg), err)
		}
		fns[i] = fn
	}
	if b, ok := be.(*cuda.Backend); ok {
		return runChainGPU(b, steps, fns, inputs, opt)
	}
	// Elsewhere (the interpreter) each step runs through the backend.
	var ts []time.Duration
	for range max(opt.Repeats, 1) {
		t0 := time.Now()
		for i, st := range steps {
			sub := make([]*tensor.Tensor, len(st.Args))
			for j, a := range st.Args {
				sub[j] = inputs[a]
			}
			if _, err := be.Run(fns[i], sub, target.RunOptions{Repeats: 1}); err != nil {
				return target.Result{}, err
			}
		}
		ts = append(ts, time.Since(t0))
	}
	slices.Sort(ts)
	return target.Result{Time: ts[len(ts)/2], Spread: ts[len(ts)-1] - ts[0], Repeats: len(ts)}, nil
}

// runChainGPU compiles the steps, binds them to one upload of inputs,
// poisons every tensor a step writes, times the chain and downloads the
// results into inputs.
func runChainGPU(b *cuda.Backend, steps []kernels.Step, fns []*ir.Func, inputs []*tensor.Tensor, opt target.RunOptions) (target.Result, error) {
	progs := make([]*cuda.Program, len(steps))
	idx := make([][]int, len(steps))
	for i, fn := range fns {
		p, err := cuda.Compile(fn, cuda.Options{Arch: b.Arch()})
		if err != nil {
			return target.Result{}, err
		}
		progs[i], idx[i] = p, steps[i].Args
	}
	c, err := cuda.PrepareChain(b, progs, idx, inputs)
	if err != nil {
		return target.Result{}, err
	}
	defer c.Free()
	if err := c.Poison(); err != nil {
		return target.Result{}, err
	}
	res, err := c.Time(opt)
	if err != nil {
		return res, err
	}
	return res, c.Download(inputs)
}
