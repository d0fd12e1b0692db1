package cuda

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/jit"
	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// Backend runs programs on one CUDA device.
type Backend struct {
	dev    *drv.Device
	arch   string
	opts   cudagen.Options
	mu     sync.Mutex
	fns    map[string]*drv.Function // by source
	stamps []stampArray             // the loaded programs' timelines (stamps.go)
}

// Open opens device ordinal for running tile programs. It fails plainly
// when there is no driver, no device or no NVRTC.
func Open(ordinal int) (*Backend, error) {
	if err := drv.Available(); err != nil {
		return nil, err
	}
	if err := drv.NVRTCAvailable(); err != nil {
		return nil, err
	}
	d, err := drv.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &Backend{dev: d, arch: d.ArchSpecific(), fns: map[string]*drv.Function{}}, nil
}

func (b *Backend) Name() string { return "cuda" }

// Arch is the architecture the backend compiles for (sm_90a on Hopper).
func (b *Backend) Arch() string { return b.arch }

// Options are those the backend compiles with: its device's architecture
// and the switches SetSwitches gave.
func (b *Backend) Options() cudagen.Options {
	o := b.opts
	o.Arch = b.arch
	return o
}

// SetSwitches forces schedule choices for every program the backend
// compiles and launches from now on (the CLI's, from the environment).
func (b *Backend) SetSwitches(s cudagen.Switches) { b.opts.Switches = s }

func (b *Backend) Device() string {
	return fmt.Sprintf("%s (%s, %d SMs)", b.dev.Name, b.arch, b.dev.SMCount)
}

// Limits are the device's, its opt-in shared memory per block and threads,
// with the check that the program compiles for its architecture (Limits):
// Build refuses what Run would.
func (b *Backend) Limits() ir.Limits {
	lim := ir.Limits{MaxSharedBytes: b.dev.SharedPerBlockOptin, MaxThreads: b.dev.MaxThreadsPerBlock}
	return cudagen.DeviceLimits(lim, b.Options())
}

// Emit returns the CUDA C++ generated for f.
func (b *Backend) Emit(f *ir.Func) (string, error) {
	p, err := cudagen.Compile(f, b.Options())
	if err != nil {
		return "", err
	}
	return p.Source, nil
}

func (b *Backend) function(p *cudagen.Program) (*drv.Function, error) {
	src, err := sourceFor(p)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	fn, ok := b.fns[src]
	b.mu.Unlock()
	if ok {
		return fn, nil
	}
	// Compile outside the lock, so that callers compile in parallel.
	opts := []string{"--std=c++17"}
	if os.Getenv("TILEGO_LINEINFO") == "1" { // source lines in compute-sanitizer's and ncu's reports
		opts = append(opts, "-lineinfo")
	}
	image, err := jit.Compile(src, p.Name, nvrtcArch(p.Arch, b.arch), opts)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", p.Name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if fn, ok := b.fns[src]; ok {
		return fn, nil
	}
	m, err := b.dev.LoadModule(image)
	if err != nil {
		return nil, err
	}
	fn, err = m.Function(p.Name)
	if err != nil {
		return nil, err
	}
	b.noteStamps(p.Name, m)
	b.fns[src] = fn
	return fn, nil
}

// sourceFor is what NVRTC compiles for p: its source, or, where
// TILEGO_SOURCE names p ("name=file.cu", several comma-separated), that
// file (a hand-edited program, to measure a change before the compiler
// makes it; it must take p's parameters). Reported on stderr, since its
// results are not the compiler's.
func sourceFor(p *cudagen.Program) (string, error) {
	file := ""
	for _, pair := range strings.Split(os.Getenv("TILEGO_SOURCE"), ",") {
		if name, f, ok := strings.Cut(pair, "="); ok && name == p.Name {
			file = f
		}
	}
	if file == "" {
		return p.FullSource(), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("TILEGO_SOURCE: %w", err)
	}
	if _, seen := overridden.LoadOrStore(p.Name, true); !seen {
		fmt.Fprintf(os.Stderr, "tilego: %s compiled from %s (TILEGO_SOURCE)\n", p.Name, file)
	}
	return (&cudagen.Program{Source: string(b)}).FullSource(), nil
}

var overridden sync.Map // the programs sourceFor has reported

// Precompile compiles programs in parallel (NVRTC is slow and the
// machine has cores); errors are reported per program by later calls.
func (b *Backend) Precompile(ps []*cudagen.Program) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.NumCPU(), 1))
	for _, p := range ps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.function(p) //nolint:errcheck // reported when used
		}()
	}
	wg.Wait()
}

// Run compiles f (cached), copies args to the device, launches, times the
// launches with events and copies the outputs back.
func (b *Backend) Run(f *ir.Func, args []*tensor.Tensor, opt backend.RunOptions) (backend.Result, error) {
	p, err := cudagen.Compile(f, b.Options())
	if err != nil {
		return backend.Result{}, err
	}
	l, err := Prepare(b, p, args)
	if err != nil {
		return backend.Result{}, err
	}
	defer l.Free()
	res, err := l.Time(opt)
	if err != nil {
		return res, err
	}
	return res, l.Download(args)
}

// Launch is a program bound to device copies of its arguments.
type Launch struct {
	b       *Backend
	p       *cudagen.Program
	fn      *drv.Function
	bufs    []drv.Buffer
	args    []any
	grid    [3]int
	outputs []int
	owned   bool       // bufs are this launch's to free
	counter drv.Buffer // a drawn walk's counter (Program.Counter), or none
	early   bool       // a chain's step launched to start early (Program.Early)
}

// Prepare uploads args and resolves the grid for p.
func Prepare(b *Backend, p *cudagen.Program, args []*tensor.Tensor) (*Launch, error) {
	bufs, err := b.upload(args)
	if err != nil {
		return nil, err
	}
	l, err := bind(b, p, args, bufs)
	if err != nil {
		b.free(bufs)
		return nil, err
	}
	l.owned = true
	return l, nil
}

// upload copies args to new device buffers.
func (b *Backend) upload(args []*tensor.Tensor) ([]drv.Buffer, error) {
	var bufs []drv.Buffer
	for _, t := range args {
		data := t.Bytes()
		buf, err := b.dev.Alloc(max(len(data), 16))
		if err == nil {
			bufs = append(bufs, buf)
			err = b.dev.CopyHtoD(buf, data)
		}
		if err != nil {
			b.free(bufs)
			return nil, err
		}
	}
	return bufs, nil
}

// free releases device buffers.
func (b *Backend) free(bufs []drv.Buffer) {
	for _, x := range bufs {
		b.dev.Free(x)
	}
}

// poison fills bufs[i] for each i of outputs with 0xFF bytes (NaN for
// floats), so an element a kernel fails to write cannot pass a check.
func (b *Backend) poison(bufs []drv.Buffer, outputs []int) error {
	for _, i := range outputs {
		if err := b.dev.MemsetD8(bufs[i], 0xff); err != nil {
			return err
		}
	}
	return nil
}

// bind makes a launch of p over device buffers bufs holding args (which
// give the symbolic sizes); the buffers stay the caller's.
func bind(b *Backend, p *cudagen.Program, args []*tensor.Tensor, bufs []drv.Buffer) (*Launch, error) {
	f := p.Func
	syms, err := interp.Bind(f, args)
	if err != nil {
		return nil, err
	}
	fn, err := b.function(p)
	if err != nil {
		return nil, err
	}
	l := &Launch{b: b, p: p, fn: fn, grid: [3]int{1, 1, 1}, bufs: bufs}
	for i, buf := range bufs {
		l.args = append(l.args, buf)
		if f.Params[i].Output && !f.Params[i].Scratch { // scratch stays zeroed: not poisoned
			l.outputs = append(l.outputs, i)
		}
	}
	for _, s := range f.Syms {
		l.args = append(l.args, int32(syms[s]))
	}
	if f.SMs != nil { // the device's, for the grid and the kernel alike
		syms[f.SMs] = b.dev.SMCount
		l.args = append(l.args, int32(b.dev.SMCount))
	}
	if len(p.TMA) > 0 {
		tms, err := encodeTMA(b, p, bufs, syms)
		if err != nil {
			return nil, err
		}
		l.args = append(l.args, tms...)
	}
	if p.Counter { // zeroed once: the kernel leaves it zeroed (grid_loop.go)
		if l.counter, err = b.dev.Alloc(16); err != nil {
			return nil, err
		}
		if err := b.dev.MemsetD8(l.counter, 0); err != nil {
			b.dev.Free(l.counter)
			return nil, err
		}
		l.args = append(l.args, l.counter)
	}
	for i, g := range f.Kernel.Grid {
		n, err := interp.EvalInt(g, syms)
		if err != nil {
			return nil, err
		}
		l.grid[i] = n
	}
	return l, nil
}

// Free releases what the launch allocated: the device copies Prepare
// made (a chain's steps share the chain's; Bind's are the caller's) and a
// drawn walk's counter.
func (l *Launch) Free() {
	if l.counter.Ptr != 0 {
		l.b.dev.Free(l.counter)
		l.counter = drv.Buffer{}
	}
	if !l.owned {
		return
	}
	l.b.free(l.bufs)
	l.bufs = nil
}

// Poison fills every output with 0xFF bytes (NaN for floats), so an
// element the kernel fails to write cannot pass a check.
func (l *Launch) Poison() error { return l.b.poison(l.bufs, l.outputs) }

// Once launches the kernel once and waits for it.
func (l *Launch) Once() error {
	if err := l.start(); err != nil {
		return err
	}
	return drv.Sync(l.fn, nil)
}

// Start enqueues the kernel on stream (nil: the default stream) and
// returns without waiting; the stream's Synchronize (or drv.Sync, which
// also gives up on a hung kernel) waits.
func (l *Launch) Start(stream *drv.Stream) error {
	if l.grid[0]*l.grid[1]*l.grid[2] == 0 { // an empty grid launches nothing
		return nil
	}
	opt := drv.LaunchOptions{Early: l.early, Cooperative: l.p.Cooperative && l.b.opts.Switches.Choose(cudagen.SwitchCoop, true)}
	return drv.LaunchWith(l.fn, l.grid, [3]int{l.p.Threads, 1, 1}, l.p.Shared, stream, opt, l.args...)
}

// start is Start on the default stream.
func (l *Launch) start() error { return l.Start(nil) }

// Time runs opt.Warmup launches, then opt.Repeats timed ones (at least
// one), and returns the median (timeBackToBack).
func (l *Launch) Time(opt backend.RunOptions) (backend.Result, error) {
	if err := l.Once(); err != nil {
		return backend.Result{}, err
	}
	return l.b.timeBackToBack(l, opt)
}

// timeBackToBack times r's opt.Repeats runs (at least one) after
// opt.Warmup, queued back to back (each after a memset of
// opt.FlushBytes, when set), each between its own pair of events, and
// returns the median. Nothing waits for a run before the next is
// queued: a wait would leave the GPU idle while the host submits the next
// one, and that latency (1.5-10 µs on the H100 hosts measured,
// docs/perf.md) would count as the kernel's.
func (b *Backend) timeBackToBack(r Runnable, opt backend.RunOptions) (backend.Result, error) {
	ts, err := b.TimeEach([]Runnable{r}, opt.Warmup, max(opt.Repeats, 1), opt.FlushBytes)
	if err != nil {
		return backend.Result{}, err
	}
	slices.Sort(ts)
	return backend.Result{Time: ts[len(ts)/2], Spread: ts[len(ts)-1] - ts[0], Repeats: len(ts)}, nil
}

// Download copies the outputs back into their host tensors.
func (l *Launch) Download(args []*tensor.Tensor) error {
	for _, i := range l.outputs {
		if err := download(l.b, l.bufs[i], args[i]); err != nil {
			return err
		}
	}
	return l.b.dumpStamps()
}

// download copies buf into t.
func download(b *Backend, buf drv.Buffer, t *tensor.Tensor) error {
	data := make([]byte, len(t.Data)*t.DType.Bytes())
	src, err := buf.Slice(0, len(data))
	if err != nil {
		return err
	}
	if err := b.dev.CopyDtoH(data, src); err != nil {
		return err
	}
	return t.SetBytes(data)
}

var _ backend.Backend = (*Backend)(nil)

// Runnable is what TimeEach times: a Launch, or a Chain of them.
type Runnable interface {
	start() error       // enqueue the work without waiting
	kernelName() string // for errors
}

func (l *Launch) kernelName() string { return l.p.Name }

// Info reports the compiled kernel's registers and local memory (spills).
func (l *Launch) Info() (drv.FuncInfo, error) { return l.fn.Info() }

// L2Bytes is the size of the device's L2 cache.
func (b *Backend) L2Bytes() int { return b.dev.L2Bytes }

// TimeEach runs ls in turn (ls[i%len(ls)]: one program bound to several
// copies of its inputs, or a single launch), warmup times untimed, then n
// times, each launch timed alone between two events, and returns the n
// times in order. When flushBytes > 0, a scratch buffer of that many bytes
// is set before every launch so that the L2 cache holds none of the
// inputs; the memset is outside the timed interval. Nothing waits between
// launches, so the host's launch overhead stays off the GPU's timeline.
func (b *Backend) TimeEach(ls []Runnable, warmup, n, flushBytes int) ([]time.Duration, error) {
	if len(ls) == 0 || n < 1 {
		return nil, fmt.Errorf("cuda: TimeEach needs a launch and n >= 1")
	}
	var scratch drv.Buffer
	if flushBytes > 0 {
		var err error
		if scratch, err = b.dev.Alloc(flushBytes); err != nil {
			return nil, fmt.Errorf("L2 flush buffer: %w", err)
		}
		defer b.dev.Free(scratch)
	}
	launch := func(l Runnable) error {
		if flushBytes > 0 {
			if err := b.dev.MemsetD8(scratch, 0); err != nil {
				return err
			}
		}
		return l.start()
	}
	for i := range warmup {
		if err := launch(ls[i%len(ls)]); err != nil {
			return nil, err
		}
	}
	events := make([]*drv.Event, 0, 2*n)
	defer func() {
		for _, e := range events {
			e.Close()
		}
	}()
	for i := range n {
		l := ls[i%len(ls)]
		if flushBytes > 0 {
			if err := b.dev.MemsetD8(scratch, 0); err != nil {
				return nil, err
			}
		}
		start, err := b.dev.NewEvent()
		if err != nil {
			return nil, err
		}
		events = append(events, start)
		end, err := b.dev.NewEvent()
		if err != nil {
			return nil, err
		}
		events = append(events, end)
		if err := start.Record(nil); err != nil {
			return nil, err
		}
		if err := l.start(); err != nil {
			return nil, err
		}
		if err := end.Record(nil); err != nil {
			return nil, err
		}
	}
	if err := events[len(events)-1].Synchronize(); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", ls[0].kernelName(), err)
	}
	times := make([]time.Duration, n)
	for i := range n {
		ms, err := drv.ElapsedTime(events[2*i], events[2*i+1])
		if err != nil {
			return nil, err
		}
		times[i] = time.Duration(float64(ms) * 1e6)
	}
	return times, nil
}

// nvrtcArch is the architecture NVRTC compiles a program emitted for
// target to on a device of arch dev: the device's own, but for a target of
// an older major version (sm_80 on a Hopper), whose program compiles to
// that target's PTX (compute_80) for the driver to translate, so that the
// device library's code for that target is what runs.
func nvrtcArch(target, dev string) string {
	major := func(a string) (int, bool) {
		d := strings.TrimRight(strings.TrimPrefix(a, "sm_"), "af")
		if len(d) < 2 {
			return 0, false
		}
		n, err := strconv.Atoi(d[:len(d)-1])
		return n, err == nil
	}
	t, ok1 := major(target)
	d, ok2 := major(dev)
	if !ok1 || !ok2 || t >= d {
		return dev
	}
	return "compute_" + strings.TrimRight(strings.TrimPrefix(target, "sm_"), "af")
}
