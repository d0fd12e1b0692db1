package autotune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"sync"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/jit"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tensor"
)

// CUDA is the Runner of a GPU.
type CUDA struct {
	b      *cuda.Backend
	timing bench.Options // Warmup, Repeats, Flush
	target Target

	mu    sync.Mutex
	progs map[string]*cudagen.Program // by configKey
	in    struct {                    // the inputs, made and uploaded once per problem and seed
		p    kernels.Problem
		seed uint64
		args []*tensor.Tensor
		dev  *cuda.Tensors // their device copies, which every config's launch shares
	}
}

// NewCUDA is a Runner on b that times as timing says (Warmup, Repeats,
// Flush; the rest is ignored).
func NewCUDA(b *cuda.Backend, timing bench.Options) (*CUDA, error) {
	t, err := TargetOf(b)
	if err != nil {
		return nil, err
	}
	return &CUDA{b: b, timing: timing, target: t, progs: map[string]*cudagen.Program{}}, nil
}

// TargetOf is b's device and toolchain.
func TargetOf(b *cuda.Backend) (Target, error) {
	ver, err := jit.NVRTC{}.Version()
	if err != nil {
		return Target{}, fmt.Errorf("NVRTC version: %w", err)
	}
	return Target{GPU: b.Device(), Arch: b.Arch(), Compiler: ver, Codegen: CodegenVersion(b.Arch())}, nil
}

// Target implements Runner.
func (r *CUDA) Target() Target { return r.target }

// Compile implements Runner: code generation in parallel over the cores,
// then NVRTC through the backend (its disk cache makes reruns quick), in
// chunks so that a spent budget stops it.
func (r *CUDA) Compile(ctx context.Context, p kernels.Problem, cs []kernels.Config) []error {
	progs, errs := BuildAll(p, cs, r.b.Limits(), r.b.Options())
	var idx []int
	for i, pr := range progs {
		if pr != nil {
			idx = append(idx, i)
		}
	}
	chunk := 2 * runtime.NumCPU()
	for at := 0; at < len(idx); at += chunk {
		if err := ctx.Err(); err != nil {
			for _, i := range idx[at:] {
				progs[i], errs[i] = nil, err
			}
			break
		}
		batch := make([]*cudagen.Program, 0, chunk)
		for _, i := range idx[at:min(at+chunk, len(idx))] {
			batch = append(batch, progs[i])
		}
		r.b.Precompile(batch) // errors come back from Prepare in Run
	}
	r.mu.Lock()
	for i, pr := range progs {
		if pr != nil {
			r.progs[configKey(cs[i])] = pr
		}
	}
	r.mu.Unlock()
	return errs
}

// BuildAll builds p's program for every config and generates its CUDA for
// opts, in parallel over the cores (pure Go: no GPU, no NVRTC).
func BuildAll(p kernels.Problem, cs []kernels.Config, lim ir.Limits, opts cudagen.Options) ([]*cudagen.Program, []error) {
	progs, errs := make([]*cudagen.Program, len(cs)), make([]error, len(cs))
	workers := min(runtime.GOMAXPROCS(0), len(cs))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(cs); i += workers {
				fn, err := kernels.Build(p, cs[i], lim)
				if err == nil {
					progs[i], err = cudagen.Compile(fn, opts)
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return progs, errs
}

// inputs are p's inputs for seed and their device copies. A launch only
// writes its outputs, which are poisoned before each config runs, so the
// configs can share one upload.
func (r *CUDA) inputs(p kernels.Problem, seed uint64) ([]*tensor.Tensor, *cuda.Tensors, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in.p != p || r.in.seed != seed || r.in.args == nil {
		if r.in.dev != nil {
			r.in.dev.Free()
		}
		r.in.p, r.in.seed, r.in.args, r.in.dev = p, seed, p.Inputs(seed), nil
		dev, err := cuda.Upload(r.b, r.in.args)
		if err != nil {
			r.in.args = nil
			return nil, nil, err
		}
		r.in.dev = dev
	}
	return r.in.args, r.in.dev, nil
}

// Run implements Runner: upload, poison the outputs, launch once, check
// against float64, then time with the bench profiler. A fault that leaves
// the CUDA context unusable comes back wrapping ErrDeviceLost.
func (r *CUDA) Run(ctx context.Context, p kernels.Problem, c kernels.Config, seed uint64) (Measurement, error) {
	m, err := r.run(ctx, p, c, seed)
	if cuda.DeviceLost(err) {
		err = fmt.Errorf("%w: %w", ErrDeviceLost, err)
	}
	return m, err
}

func (r *CUDA) run(ctx context.Context, p kernels.Problem, c kernels.Config, seed uint64) (Measurement, error) {
	if err := ctx.Err(); err != nil {
		return Measurement{}, err
	}
	r.mu.Lock()
	prog := r.progs[configKey(c)]
	r.mu.Unlock()
	if prog == nil {
		return Measurement{}, fmt.Errorf("%s (%s) was not compiled", p.Kernel(), kernels.ConfigFields(c))
	}
	args, dev, err := r.inputs(p, seed)
	if err != nil {
		return Measurement{}, err
	}
	l, err := cuda.PrepareOn(prog, dev)
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Source: prog.Fingerprint()}
	info, err := l.Info()
	if err != nil {
		return m, err
	}
	m.Regs, m.LocalBytes = info.NumRegs, info.LocalBytes
	if err := l.Poison(); err != nil {
		return m, err
	}
	if err := l.Once(); err != nil {
		return m, err
	}
	if err := l.Download(args); err != nil {
		return m, err
	}
	if m.Report = p.Check(args, seed); !m.Report.OK() {
		return m, nil
	}
	m.Time, err = bench.Time(r.b, prog, l, args, r.timing)
	return m, err
}

// codegenVersions caches CodegenVersion by arch.
var codegenVersions sync.Map

// CodegenVersion identifies tilego's code generator for arch: a hash of
// the CUDA (device library included) it generates for a few reference
// programs, FlashAttention and GEMM on both code paths. A change to the
// generator or the device library that touches them changes it, and with
// it every tuning key. It needs no GPU and is computed once per process.
func CodegenVersion(arch string) string {
	if v, ok := codegenVersions.Load(arch); ok {
		return v.(string)
	}
	h := sha256.New()
	fmt.Fprintf(h, "tilego codegen %d %s\n", entryFormat, arch)
	for _, ref := range []struct {
		kernel string
		shape  map[string]string
		cfg    kernels.Config
	}{
		{"flash-attention", map[string]string{"heads": "2", "seq-q": "256", "causal": "true"}, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}},
		{"flash-attention", map[string]string{"heads": "2", "seq-q": "256", "dim": "128", "layout": "bshd"}, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}},
		{"gemm", map[string]string{"m": "256", "n": "256", "k": "256", "out-dtype": "bf16"}, kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8}},
		{"gemm", map[string]string{"m": "256", "n": "256", "k": "256", "trans-b": "true"}, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 128, Policy: ir.Square}},
	} {
		fp, err := fingerprint(ref.kernel, ref.shape, ref.cfg, arch)
		if err != nil {
			fp = "error: " + err.Error()
		}
		fmt.Fprintln(h, fp)
	}
	v := hex.EncodeToString(h.Sum(nil))[:16]
	codegenVersions.Store(arch, v)
	return v
}

func fingerprint(kernel string, shape map[string]string, cfg kernels.Config, arch string) (string, error) {
	e, err := kernels.Lookup(kernel)
	if err != nil {
		return "", err
	}
	p, err := e.Problem(shape)
	if err != nil {
		return "", err
	}
	fn, err := kernels.Build(p, cfg, ir.DefaultLimits)
	if err != nil {
		return "", err
	}
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
	if err != nil {
		return "", err
	}
	return prog.Fingerprint(), nil
}

var _ Runner = (*CUDA)(nil)
