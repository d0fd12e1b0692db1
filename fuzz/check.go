package fuzz

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/clangcuda"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// What went wrong with a program. Rejected is the generator's fault (it
// drew an invalid program); the others are findings.
const (
	Rejected = "rejected by the verifier"
	// Refused: every target refused the program with an error at the
	// user's file:line, which Build with the target's limits reports (the
	// contract: a verified program compiles or is refused at Build). Not
	// a finding; counted so that the refusals stay in view.
	Refused     = "refused by the target"
	EmitError   = "emit error"
	EmitPanic   = "emit panic"
	InterpPanic = "interp panic"
	InterpError = "interp error"
	GPUCompile  = "GPU compile error"
	// CUDACompile: clang's CUDA front end refused the CUDA C++
	// (Checker.Clang), where NVRTC would have.
	CUDACompile = "CUDA C++ error (clang)"
	GPURun      = "GPU run error"
	GPUMismatch = "GPU mismatch"
)

// Archs are the two CUDA code paths: mma.sync (every GPU since Ampere)
// and Hopper's wgmma/TMA.
var Archs = []string{"sm_80", "sm_90a"}

// Outcome is the result of checking one program.
type Outcome struct {
	Seed uint64
	Kind string // "" when the program passed
	Arch string // the target that failed, where one did
	Msg  string
	// Skipped: the CPU checks passed but the GPU's context was lost before
	// the program's turn there.
	Skipped bool
	// Refusals are the targets' refusals at the user's file:line, "arch:
	// message"; the other targets were still checked.
	Refusals []string
}

// Failed reports a finding or a rejection.
func (o Outcome) Failed() bool { return o.Kind != "" }

// Finding reports whether o is a compiler bug (not a generator bug or a
// refusal at the user's file:line).
func (o Outcome) Finding() bool { return o.Kind != "" && o.Kind != Rejected && o.Kind != Refused }

// Summary is the one-line form.
func (o Outcome) Summary() string {
	s := fmt.Sprintf("seed %d: %s", o.Seed, o.Kind)
	if o.Arch != "" {
		s += " (" + o.Arch + ")"
	}
	return s + ": " + firstLine(o.Msg)
}

// Key identifies a finding's class: kind, target and blotted message.
func (o Outcome) Key() string {
	if o.Kind == GPUMismatch {
		return o.Kind + "|" + o.Arch
	}
	return o.Kind + "|" + o.Arch + "|" + blot(o.Msg)
}

// same reports whether o fails the way want does (the shrinker keeps a
// candidate only then): same kind and target, and for errors the same
// message once names, numbers and positions are blotted out.
func (o Outcome) same(want Outcome) bool {
	if o.Kind != want.Kind || o.Arch != want.Arch {
		return false
	}
	switch o.Kind {
	case GPUMismatch:
		return true
	}
	return blot(o.Msg) == blot(want.Msg)
}

// blotRE matches what differs between two instances of one bug: positions,
// names and numbers, and layouts (in brackets and parentheses).
var blotRE = regexp.MustCompile(`\S+\.go:\d+(:\d+)?|\[[^\]]*\]|\([^)]*\)|[A-Za-z_]*[0-9]+`)

// RefusalClass is a refusal ("arch: file:line: op: message") with its
// position, names and numbers blotted out: one line per kind of refusal.
func RefusalClass(r string) string { return blot(r) }

func blot(s string) string { return blotRE.ReplaceAllString(firstLine(s), "#") }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Checker runs programs through the interpreter, the emitters and, with a
// GPU, the device.
type Checker struct {
	Archs []string // code paths to emit (default Archs)
	GPU   *GPU     // nil: CPU only
	// Emulate runs the gfx942 programs (Archs holds gfx942) in the
	// emulator (backend/hip/emu), its waves staggered, as GPU runs the
	// CUDA ones.
	Emulate bool
	// Clang compiles the CUDA programs' C++ with clang
	// (internal/clangcuda): the check NVRTC makes, without a GPU.
	Clang bool
	// Fault, for tests of the reporting path, fails a built program as an
	// emit error on sm_80 when it returns a message.
	Fault func(*ir.Func) string

	mu       sync.Mutex
	emitTime time.Duration // total time in cudagen.Compile
	emits    int
}

// EmitTime is the mean time of one cudagen.Compile so far.
func (c *Checker) EmitTime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.emits == 0 {
		return 0
	}
	return c.emitTime / time.Duration(c.emits)
}

// trial is one program on its way through the checks.
type trial struct {
	p          *Prog
	fn         *ir.Func
	args, want []*tensor.Tensor
	progs      []*cudagen.Program // one per arch, nil where the arch refused the program
	out        Outcome
}

func (t *trial) fail(kind, arch, msg string) {
	t.out.Kind, t.out.Arch, t.out.Msg = kind, arch, msg
}

// Check builds p, runs it on the interpreter, emits it for every arch and
// (with a GPU) runs each and compares.
func (c *Checker) Check(p *Prog) Outcome {
	t := c.cpu(p)
	if !t.out.Failed() && c.GPU != nil {
		c.gpu(t)
	}
	return t.out
}

// CheckAll checks ps: the CPU part on workers goroutines, then (with a
// GPU) every program compiled by NVRTC in parallel and run one by one.
func (c *Checker) CheckAll(ps []*Prog, workers int) []Outcome {
	ts := make([]*trial, len(ps))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ts[i] = c.cpu(ps[i])
			}
		}()
	}
	for i := range ps {
		next <- i
	}
	close(next)
	wg.Wait()
	if c.GPU != nil {
		var progs []*cudagen.Program
		for _, t := range ts {
			if !t.out.Failed() {
				for _, p := range t.progs {
					if p != nil {
						progs = append(progs, p)
					}
				}
			}
		}
		c.GPU.Precompile(progs)
	}
	if c.Emulate {
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(workers, 1))
		for _, t := range ts {
			if t.out.Failed() {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				c.emulate(t)
			}()
		}
		wg.Wait()
	}
	out := make([]Outcome, len(ts))
	for i, t := range ts {
		if !t.out.Failed() && c.GPU != nil {
			if c.GPU.Lost {
				t.out.Skipped = true
			} else {
				c.gpu(t)
			}
		}
		out[i] = t.out
	}
	return out
}

func (c *Checker) archs() []string {
	if c.Archs == nil {
		return Archs
	}
	return c.Archs
}

// cpu builds, interprets and emits.
func (c *Checker) cpu(p *Prog) *trial {
	t := &trial{p: p, out: Outcome{Seed: p.Seed}}
	fn, err := p.IR()
	if err != nil {
		t.fail(Rejected, "", err.Error())
		return t
	}
	t.fn = fn
	if c.Fault != nil {
		if msg := c.Fault(fn); msg != "" {
			t.fail(EmitError, "sm_80", msg)
			return t
		}
	}
	t.args = p.Args(fn, p.Seed)
	t.want = clone(t.args)
	if msg, panicked := runInterp(fn, t.want); msg != "" {
		if panicked {
			t.fail(InterpPanic, "", msg)
		} else {
			t.fail(InterpError, "", msg)
		}
		return t
	}
	for _, arch := range c.archs() {
		start := time.Now()
		prog, msg, panicked := Emit(fn, arch)
		c.mu.Lock()
		c.emitTime += time.Since(start)
		c.emits++
		c.mu.Unlock()
		if msg != "" {
			switch {
			case panicked || strings.Contains(msg, "internal compiler error"):
				t.fail(EmitPanic, arch, msg)
				return t
			case !placed(msg):
				t.fail(EmitError, arch, msg)
				return t
			}
			t.out.Refusals = append(t.out.Refusals, arch+": "+msg)
			t.progs = append(t.progs, nil)
			continue
		}
		if msg := sourceFault(prog.Source); msg != "" {
			t.fail(EmitError, arch, msg)
			return t
		}
		if c.Clang && arch != "gfx942" {
			if err := clangcuda.Compile(prog.FullSource(), arch); err != nil {
				t.fail(CUDACompile, arch, err.Error())
				return t
			}
		}
		t.progs = append(t.progs, prog)
	}
	if len(t.out.Refusals) == len(t.progs) {
		t.fail(Refused, "", t.out.Refusals[0])
	}
	return t
}

// placedRE matches an error that starts at a Go file:line, as Build's do.
var placedRE = regexp.MustCompile(`^\S+\.go:\d+: `)

// placed reports whether every line of an emitter's error is at a file:line.
func placed(msg string) bool {
	for _, l := range strings.Split(msg, "\n") {
		if !placedRE.MatchString(l) {
			return false
		}
	}
	return true
}

// gpu runs each emitted program on the device and compares its outputs
// with the interpreter's.
func (c *Checker) gpu(t *trial) {
	for i, arch := range c.archs() {
		if t.progs[i] == nil { // refused at Build
			continue
		}
		got := clone(t.args)
		if kind, msg := c.GPU.run(t.progs[i], got); kind != "" {
			t.fail(kind, arch, msg)
			return
		}
		if msg := compareOutputs(t.fn, got, t.want, t.p.Tolerance()); msg != "" {
			t.fail(GPUMismatch, arch, msg)
			return
		}
	}
}

// emulate runs t's gfx942 program in the emulator and compares it as gpu
// does; a program the emulator cannot run is counted as skipped.
func (c *Checker) emulate(t *trial) {
	for i, arch := range c.archs() {
		if arch != "gfx942" || t.progs[i] == nil {
			continue
		}
		got := clone(t.args)
		err := emu.RunWith(t.progs[i], got, emu.Options{Stagger: 100 * time.Microsecond})
		switch {
		case emu.IsKind(err, emu.Unsupported):
			t.out.Skipped = true
			return
		case err != nil:
			t.fail(GPURun, arch, err.Error())
			return
		}
		if msg := compareOutputs(t.fn, got, t.want, t.p.Tolerance()); msg != "" {
			t.fail(GPUMismatch, arch, msg)
			return
		}
	}
}

// IR builds and verifies p.
func (p *Prog) IR() (*ir.Func, error) {
	f, err := p.Func()
	if err != nil {
		return nil, err
	}
	return f.Build()
}

// runInterp runs fn on args, turning a panic into a message.
func runInterp(fn *ir.Func, args []*tensor.Tensor) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprintf("%v at %s", r, panicFrame()), true
		}
	}()
	if err := interp.Run(fn, args); err != nil {
		return err.Error(), false
	}
	return "", false
}

// Emit compiles fn to CUDA for arch, turning a panic into a message that
// names the frame it came from.
func Emit(fn *ir.Func, arch string) (prog *cudagen.Program, msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			prog, msg, panicked = nil, fmt.Sprintf("%v at %s", r, panicFrame()), true
		}
	}()
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
	if err != nil {
		return nil, err.Error(), false
	}
	return prog, "", false
}

// panicFrame is the innermost frame of the panicking goroutine's stack
// below the runtime's own (the function that panicked), as "func file:line".
func panicFrame() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	for i := 1; i+1 < len(lines); i += 2 {
		fn := lines[i]
		if strings.HasPrefix(fn, "runtime") || strings.HasPrefix(fn, "panic(") || strings.Contains(fn, "debug.Stack") || strings.Contains(fn, "fuzz.panicFrame") || strings.Contains(fn, "fuzz.Emit.func") || strings.Contains(fn, "fuzz.runInterp.func") {
			continue
		}
		file := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(file, " +"); j >= 0 {
			file = file[:j]
		}
		if k := strings.Index(fn, "("); k > 0 {
			fn = fn[:k]
		}
		return fn + " " + file
	}
	return "unknown frame"
}

// compareOutputs compares every output but the scratch ones.
func compareOutputs(fn *ir.Func, got, want []*tensor.Tensor, tol float64) string {
	var msgs []string
	for i, b := range fn.Params {
		if !b.Output || b.Scratch {
			continue
		}
		if err := Diff(b.Name, got[i], want[i], tol); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	return strings.Join(msgs, "; ")
}
