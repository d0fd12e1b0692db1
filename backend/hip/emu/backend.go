package emu

import (
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Arch is the target the emulated programs are compiled for.
const Arch = "gfx942"

// Backend runs programs as gfx942 HIP, emulated on the CPU: a
// backend.Backend for tilego run --backend hip-emu. Its times are the
// emulator's, not a GPU's.
type Backend struct{}

// Open checks that the emulation can be built (clang++-19 on the PATH).
func Open() (Backend, error) {
	if _, err := exec.LookPath(Clang); err != nil {
		return Backend{}, fmt.Errorf("%s not found (apt-get install clang-19): %w", Clang, err)
	}
	return Backend{}, nil
}

func (Backend) Name() string   { return "hip-emu" }
func (Backend) Device() string { return Arch + " HIP, emulated on the CPU (" + Clang + ")" }

// Limits are gfx942's, with the check that the program compiles for it.
func (Backend) Limits() ir.Limits { return cudagen.Limits(Arch) }

// Emit returns the HIP generated for f.
func (Backend) Emit(f *ir.Func) (string, error) {
	p, err := cudagen.Compile(f, cudagen.Options{Arch: Arch})
	if err != nil {
		return "", err
	}
	return p.Source, nil
}

// Run compiles f for gfx942 and runs it in the emulator on args, opt's
// repeats after its warmup runs, and reports the median wall time.
func (Backend) Run(f *ir.Func, args []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	p, err := cudagen.Compile(f, cudagen.Options{Arch: Arch})
	if err != nil {
		return backend.Result{}, err
	}
	var ts []time.Duration
	for i := range opt.Warmup + max(opt.Repeats, 1) {
		t0 := time.Now()
		if err := Run(p, args); err != nil {
			return backend.Result{}, err
		}
		if i >= opt.Warmup {
			ts = append(ts, time.Since(t0))
		}
	}
	slices.Sort(ts)
	return backend.Result{Time: ts[len(ts)/2], Spread: ts[len(ts)-1] - ts[0], Repeats: len(ts)}, nil
}
