// Package hip runs tile programs on an AMD GPU (gfx942: MI300X): the
// compiler's HIP (compiler/cudagen, Arch gfx942) built to a code object by
// clang-19 (backend/hip/codeobj) and launched through the pure-Go HIP
// runtime (runtime/hip). Where there is no ROCm, Open says so.
package hip

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/hip/codeobj"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	rt "github.com/tilego/tilego/runtime/hip"
	"github.com/tilego/tilego/tensor"
)

// Backend runs programs on one AMD GPU.
type Backend struct {
	dev  *rt.Device
	arch string
	mu   sync.Mutex
	fns  map[[32]byte]*rt.Function // by the source's hash
	inc  string                    // a folder holding the device library, for clang
}

// Open opens AMD GPU ordinal. It fails plainly without the HIP runtime,
// a device, or clang-19, or on a GPU the compiler has no target for.
func Open(ordinal int) (*Backend, error) {
	if err := rt.Available(); err != nil {
		return nil, err
	}
	d, err := rt.Open(ordinal)
	if err != nil {
		return nil, err
	}
	if d.Arch() != "gfx942" {
		d.Close()
		return nil, fmt.Errorf("hip: %s is %s; tilego compiles for gfx942 only", d.Name, d.Arch())
	}
	return &Backend{dev: d, arch: d.Arch(), fns: map[[32]byte]*rt.Function{}}, nil
}

func (b *Backend) Name() string { return "hip" }
func (b *Backend) Device() string {
	return fmt.Sprintf("%s (%s, %d CUs)", b.dev.Name, b.arch, b.dev.CUCount)
}

// Limits are the device's LDS and threads per block, with the check that
// a program compiles for its architecture.
func (b *Backend) Limits() ir.Limits {
	return cudagen.DeviceLimits(ir.Limits{MaxSharedBytes: b.dev.LDSPerBlock, MaxThreads: b.dev.MaxThreadsPerBlock}, b.options())
}

func (b *Backend) options() cudagen.Options { return cudagen.Options{Arch: b.arch} }

// Emit returns the HIP generated for f.
func (b *Backend) Emit(f *ir.Func) (string, error) {
	p, err := cudagen.Compile(f, b.options())
	if err != nil {
		return "", err
	}
	return p.Source, nil
}

// function builds p's code object and loads it, once per source.
func (b *Backend) function(p *cudagen.Program) (*rt.Function, error) {
	key := sha256.Sum256([]byte(p.Source))
	b.mu.Lock()
	defer b.mu.Unlock()
	if fn, ok := b.fns[key]; ok {
		return fn, nil
	}
	if b.inc == "" {
		dir, err := os.MkdirTemp("", "tilego-hip-include-")
		if err != nil {
			return nil, err
		}
		name, text := cudagen.Header(b.arch)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
		b.inc = dir
	}
	obj, err := codeobj.Build(p.Source, codeobj.Options{Arch: b.arch, Includes: []string{b.inc}, Flags: []string{"-Wno-parentheses-equality"}})
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", p.Name, err)
	}
	m, err := b.dev.LoadModule(obj.Code)
	if err != nil {
		return nil, err
	}
	fn, err := m.Function(p.Name)
	if err != nil {
		return nil, err
	}
	b.fns[key] = fn
	return fn, nil
}

// Run compiles f, copies args to the device as they are (outputs too:
// accumulated ones start from their values; poison the others first to
// see elements the kernel leaves alone), launches opt.Warmup times untimed
// and opt.Repeats times each between two events, and copies the outputs
// back. The time is the median.
func (b *Backend) Run(f *ir.Func, args []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	p, err := cudagen.Compile(f, b.options())
	if err != nil {
		return backend.Result{}, err
	}
	if p.Cooperative || p.Counter || len(p.TMA) > 0 {
		return backend.Result{}, fmt.Errorf("hip: %s needs a launch this backend does not make", p.Name)
	}
	fn, err := b.function(p)
	if err != nil {
		return backend.Result{}, err
	}
	syms, err := interp.Bind(f, args)
	if err != nil {
		return backend.Result{}, err
	}
	var bufs []rt.Buffer
	defer func() {
		for _, x := range bufs {
			b.dev.Free(x)
		}
	}()
	var params []any
	for _, t := range args {
		data := t.Bytes()
		buf, err := b.dev.Alloc(max(len(data), 16))
		if err != nil {
			return backend.Result{}, err
		}
		bufs = append(bufs, buf)
		if err := b.dev.CopyHtoD(buf, data); err != nil {
			return backend.Result{}, err
		}
		params = append(params, buf)
	}
	for _, s := range f.Syms {
		params = append(params, int32(syms[s]))
	}
	if f.SMs != nil { // the device's compute units stand for SMs
		syms[f.SMs] = b.dev.CUCount
		params = append(params, int32(b.dev.CUCount))
	}
	grid := [3]int{1, 1, 1}
	for i, g := range f.Kernel.Grid {
		if grid[i], err = interp.EvalInt(g, syms); err != nil {
			return backend.Result{}, err
		}
	}
	launch := func() error { return rt.Launch(fn, grid, [3]int{p.Threads, 1, 1}, p.Shared, nil, params...) }
	for range opt.Warmup {
		if err := launch(); err != nil {
			return backend.Result{}, err
		}
	}
	start, err := b.dev.NewEvent()
	if err != nil {
		return backend.Result{}, err
	}
	defer start.Close()
	end, err := b.dev.NewEvent()
	if err != nil {
		return backend.Result{}, err
	}
	defer end.Close()
	var ts []time.Duration
	for range max(opt.Repeats, 1) {
		if err := start.Record(nil); err != nil {
			return backend.Result{}, err
		}
		if err := launch(); err != nil {
			return backend.Result{}, err
		}
		if err := end.Record(nil); err != nil {
			return backend.Result{}, err
		}
		if err := end.Synchronize(); err != nil {
			return backend.Result{}, err
		}
		ms, err := rt.ElapsedTime(start, end)
		if err != nil {
			return backend.Result{}, err
		}
		ts = append(ts, time.Duration(float64(ms)*float64(time.Millisecond)))
	}
	for i, t := range args {
		if !f.Params[i].Output {
			continue
		}
		data := make([]byte, len(t.Data)*t.DType.Bytes())
		src, err := bufs[i].Slice(0, len(data))
		if err == nil {
			err = b.dev.CopyDtoH(data, src)
		}
		if err == nil {
			err = t.SetBytes(data)
		}
		if err != nil {
			return backend.Result{}, err
		}
	}
	slices.Sort(ts)
	return backend.Result{Time: ts[len(ts)/2], Spread: ts[len(ts)-1] - ts[0], Repeats: len(ts)}, nil
}

// Close releases the device.
func (b *Backend) Close() error {
	if b.inc != "" && strings.Contains(b.inc, "tilego-hip-include-") {
		os.RemoveAll(b.inc)
	}
	return b.dev.Close()
}

var _ backend.Backend = (*Backend)(nil)
