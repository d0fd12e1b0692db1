package bench

import (
	"fmt"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// Inputs are p's inputs for a run on b. A Derived problem's are made by
// running its Source on b at Source's GPU config (the backward's O and LSE
// from the forward kernel: milliseconds, where the float64 forward on the
// host takes minutes at 16k tokens); the run's check still compares p's
// outputs with float64, so a wrong Source shows there. Others' are
// p.Inputs.
func Inputs(b *cuda.Backend, p kernels.Problem, seed uint64) ([]*tensor.Tensor, error) {
	d, ok := p.(kernels.Derived)
	if !ok {
		return p.Inputs(seed), nil
	}
	src := d.Source()
	args := src.Inputs(seed)
	fns, idx, err := Programs(src, kernels.GPUConfigFor(src, b.Arch()), b.Limits())
	if err != nil {
		return nil, fmt.Errorf("%s's inputs from %s: %w", p.Kernel(), src.Kernel(), err)
	}
	cd := candidate{idx: idx}
	for _, f := range fns {
		prog, err := cudagen.Compile(f, cudagen.Options{Arch: b.Arch()})
		if err != nil {
			return nil, fmt.Errorf("%s's inputs from %s: %w", p.Kernel(), src.Kernel(), err)
		}
		cd.progs = append(cd.progs, prog)
	}
	x, err := cd.prepare(b, args)
	if err != nil {
		return nil, err
	}
	defer x.Free()
	if err := x.Once(); err != nil {
		return nil, fmt.Errorf("%s's inputs from %s: %w", p.Kernel(), src.Kernel(), err)
	}
	if err := x.Download(args); err != nil {
		return nil, err
	}
	return d.Finish(args, seed), nil
}
