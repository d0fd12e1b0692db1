package cuda

import (
	"fmt"
	"github.com/tilego/tilego/compiler/cudagen"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Emitter generates CUDA C++ for an architecture with no GPU present (for
// `tilego emit`); it cannot run programs.
type Emitter struct {
	Arch     string
	Switches cudagen.Switches // schedule choices forced for every program
}

func (e Emitter) Name() string   { return "cuda" }
func (e Emitter) Device() string { return "none (emit only, " + e.Arch + ")" }

// Limits are Limits(e.Arch): Build refuses what Emit would.
func (e Emitter) Limits() ir.Limits { return cudagen.LimitsFor(e.options()) }

func (e Emitter) options() cudagen.Options {
	return cudagen.Options{Arch: e.Arch, Switches: e.Switches}
}

// Emit returns the generated source.
func (e Emitter) Emit(f *ir.Func) (string, error) {
	p, err := cudagen.Compile(f, e.options())
	if err != nil {
		return "", err
	}
	return p.Source, nil
}

// Run always fails: an Emitter has no device.
func (e Emitter) Run(*ir.Func, []*tensor.Tensor, backend.RunOptions) (backend.Result, error) {
	return backend.Result{}, fmt.Errorf("cuda: the %s emitter has no device to run on", e.Arch)
}
