// Package emu runs gfx942 programs (cudagen's HIP C++) on the CPU: the
// generated source is built for the host with clang++-19 against an
// emulation of the device library (include/tilego_hip.h: one OS thread per
// GPU thread, 64-lane waves, MFMA from AMD's lane tables) and run on the
// tensors, so that every index, layout, swizzle, mask and lane mapping the
// emitted code computes can be checked against the interpreter where no
// AMD GPU exists.
package emu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/tensor"
)

//go:embed include/tilego_hip.h
var include embed.FS

// Clang is the compiler the emulation builds with.
const Clang = "clang++-19"

// Flags are clang's flags for every build. Strict aliasing is off: the
// generated code reads and writes LDS and registers through casts of
// other types, which only the device compiler's address spaces make safe.
var Flags = []string{"-std=c++20", "-O1", "-pthread", "-fno-strict-aliasing", "-w"}

// Options tune a run.
type Options struct {
	// Timeout bounds the run (default 60 s): a launch that outlives it is
	// reported as hung, with which threads wait where.
	Timeout time.Duration
	// Defines are extra macros for the build (NAME or NAME=VALUE), such as
	// TL_EMU_WRONG_MFMA.
	Defines []string
	// Stagger, where set, makes the waves of a block set off one after
	// another, this far apart, after every barrier, in
	// orders that alternate: a barrier missing between waves shows.
	Stagger time.Duration
	// CacheDir holds the built programs, by the SHA-256 of what went into
	// them (default: the user's cache dir, tilego-hip-emu).
	CacheDir string
}

// Kind classifies a failure.
type Kind string

// The kinds of failure.
const (
	Unsupported Kind = "unsupported" // the emulation cannot run the program
	Compile     Kind = "compile"     // clang rejected the source
	Crash       Kind = "crash"       // the program died (a fault, an out-of-bounds write)
	Hang        Kind = "hang"        // the launch did not finish in time
)

// Error is a failed build or run.
type Error struct {
	Kind Kind
	Name string // the kernel
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("emu: %s: %s: %s", e.Name, e.Kind, e.Msg) }

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Run runs p on args (one tensor per parameter, in order; symbolic sizes
// bind from their shapes as interp.Bind binds them) and stores the
// outputs' results in their tensors. Inputs are passed as they are, and so
// are outputs: poison them first to see elements the kernel leaves alone.
func Run(p *cudagen.Program, args []*tensor.Tensor) error { return RunWith(p, args, Options{}) }

// RunWith is Run with options.
func RunWith(p *cudagen.Program, args []*tensor.Tensor, opt Options) error {
	if err := supported(p); err != nil {
		return err
	}
	f := p.Func
	syms, err := interp.Bind(f, args)
	if err != nil {
		return &Error{Unsupported, p.Name, err.Error()}
	}
	bin, err := Build(p, opt)
	if err != nil {
		return err
	}
	var ints []int64
	for _, s := range f.Syms {
		ints = append(ints, int64(syms[s]))
	}
	if f.SMs != nil { // the interpreter's count, which Bind set
		ints = append(ints, int64(syms[f.SMs]))
	}
	grid := [3]int64{1, 1, 1}
	for i, g := range f.Kernel.Grid {
		n, err := interp.EvalInt(g, syms)
		if err != nil {
			return &Error{Unsupported, p.Name, fmt.Sprintf("grid: %v", err)}
		}
		grid[i] = int64(n)
	}
	bufs := make([][]byte, 0, len(args)+1)
	for _, t := range args {
		bufs = append(bufs, t.Bytes())
	}
	if p.Counter { // a zeroed tile counter
		bufs = append(bufs, make([]byte, 16))
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	var in bytes.Buffer
	w := func(v int64) { _ = binary.Write(&in, binary.LittleEndian, v) }
	w(int64(len(bufs)))
	for _, b := range bufs {
		w(int64(len(b)))
	}
	w(int64(len(ints)))
	for _, v := range ints {
		w(v)
	}
	for _, g := range grid {
		w(g)
	}
	w(int64(p.Threads))
	w(timeout.Milliseconds())
	w(opt.Stagger.Microseconds())
	for _, b := range bufs {
		in.Write(b)
	}
	dir, err := os.MkdirTemp("", "tilego-emu-run")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inPath, outPath := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
		return err
	}
	// The program's own watchdog reports a hang after timeout; the kill
	// is for a program too stuck to.
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, inPath, outPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			return &Error{Hang, p.Name, fmt.Sprintf("killed after %s: %s", timeout+10*time.Second, msg)}
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			return &Error{Hang, p.Name, msg}
		default:
			return &Error{Crash, p.Name, fmt.Sprintf("%v: %s", err, msg)}
		}
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		return err
	}
	off := 0
	for i, b := range bufs {
		n := len(b)
		if i < len(args) && f.Params[i].Output {
			if err := args[i].SetBytes(out[off : off+n]); err != nil {
				return err
			}
		}
		off += n
	}
	return nil
}

// supported refuses what the emulation does not model.
func supported(p *cudagen.Program) error {
	switch {
	case len(p.TMA) > 0:
		return &Error{Unsupported, p.Name, "tensor maps (TMA) are not emulated"}
	case p.Cooperative:
		return &Error{Unsupported, p.Name, "a cooperative launch (blocks waiting for each other) is not emulated: blocks run one at a time"}
	case p.Threads <= 0:
		return &Error{Unsupported, p.Name, fmt.Sprintf("%d threads", p.Threads)}
	}
	return nil
}

// Source is the host program Build compiles for p: the lds size, p's
// source and a main that runs the launch file it is given.
func Source(p *cudagen.Program) string {
	f := p.Func
	nbufs, nints := len(f.Params), len(f.Syms)
	if p.Counter {
		nbufs++
	}
	if f.SMs != nil {
		nints++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#define TL_EMU_LDS_BYTES %d\n", p.Shared)
	b.WriteString(p.Source)
	b.WriteString("\nint main(int argc, char** argv) {\n")
	b.WriteString("  if (argc != 3) { fprintf(stderr, \"usage: %s launch-file out-file\\n\", argv[0]); return 2; }\n")
	fmt.Fprintf(&b, "  tl_emu::Launch l = tl_emu::read_launch(argv[1], %d, %d);\n", nbufs, nints)
	var as []string
	for i := range nbufs {
		as = append(as, fmt.Sprintf("tl_emu::AnyPtr{l.bufs[%d]}", i))
	}
	for i := range nints {
		as = append(as, fmt.Sprintf("l.ints[%d]", i))
	}
	fmt.Fprintf(&b, "  return tl_emu::run(l, argv[2], [&] { %s(%s); });\n}\n", p.Name, strings.Join(as, ", "))
	return b.String()
}

// Build compiles p for the host (once: the binary is cached by the
// SHA-256 of its source, headers and flags) and returns the binary's path.
func Build(p *cudagen.Program, opt Options) (string, error) {
	clang, err := exec.LookPath(Clang)
	if err != nil {
		return "", fmt.Errorf("emu: %s not found (apt-get install clang-19): %v", Clang, err)
	}
	src := Source(p)
	emuH, err := include.ReadFile("include/tilego_hip.h")
	if err != nil {
		return "", err
	}
	_, devH := cudagen.Header("gfx942")
	flags := append([]string{}, Flags...)
	for _, d := range opt.Defines {
		flags = append(flags, "-D"+d)
	}
	h := sha256.New()
	for _, s := range []string{src, string(emuH), devH, strings.Join(flags, " ")} {
		fmt.Fprintf(h, "%d\n%s", len(s), s)
	}
	key := hex.EncodeToString(h.Sum(nil))[:32]
	cache := opt.CacheDir
	if cache == "" {
		if cache, err = os.UserCacheDir(); err != nil {
			cache = os.TempDir()
		}
		cache = filepath.Join(cache, "tilego-hip-emu")
	}
	bin := filepath.Join(cache, key)
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		_ = os.Chtimes(bin, now, now) // in use: keep it from prune
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	prune(cache)
	dir, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	files := map[string]string{"tilego_hip.h": string(emuH), "tilego_hip_device.h": devH, "prog.cc": src}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	args := append(flags, "-I", dir, filepath.Join(dir, "prog.cc"), "-o", filepath.Join(dir, "bin"))
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		return "", &Error{Compile, p.Name, fmt.Sprintf("%v\n%s", err, out)}
	}
	// A rename is atomic: a concurrent build of the same program finds a
	// whole binary or none.
	if err := os.Rename(filepath.Join(dir, "bin"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// prune removes the cached programs unused for two weeks.
func prune(cache string) {
	es, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range es {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 14*24*time.Hour {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}
