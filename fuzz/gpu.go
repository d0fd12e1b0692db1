package fuzz

import (
	"strings"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/tensor"
)

// GPU runs emitted programs on device 0.
type GPU struct {
	B *cuda.Backend
	// Lost is set once a kernel fault has lost the device's context: every
	// later call fails, so the checker stops running programs there.
	Lost bool
}

// OpenGPU opens device 0 (an error where there is no GPU, driver or NVRTC).
func OpenGPU() (*GPU, error) {
	b, err := cuda.Open(0)
	if err != nil {
		return nil, err
	}
	return &GPU{B: b}, nil
}

// Device names the GPU.
func (g *GPU) Device() string { return g.B.Device() }

// Precompile compiles programs with NVRTC on every core, so that the runs
// that follow find them compiled.
func (g *GPU) Precompile(ps []*cudagen.Program) { g.B.Precompile(ps) }

// run uploads args (outputs already poisoned on the host, accumulated
// outputs holding their start values), launches once and downloads the
// outputs into args.
func (g *GPU) run(p *cudagen.Program, args []*tensor.Tensor) (kind, msg string) {
	l, err := cuda.Prepare(g.B, p, args)
	if err != nil {
		if strings.HasPrefix(err.Error(), "compiling ") {
			return GPUCompile, err.Error()
		}
		return GPURun, err.Error()
	}
	defer l.Free()
	if err := l.Once(); err != nil {
		g.Lost = cuda.DeviceLost(err)
		return GPURun, err.Error()
	}
	if err := l.Download(args); err != nil {
		return GPURun, err.Error()
	}
	return "", ""
}
