// Package codeobj compiles HIP device code to an AMDGPU code object with
// the system's clang (no ROCm install needed) and reports what the compiler
// produced: register and LDS use, spills, an instruction histogram per
// kernel, and the occupancy those resources allow.
//
// Sources are compiled with -nogpulib -nogpuinc, so there is no
// hip_runtime.h: kernels are written with __attribute__((global)),
// __attribute__((shared)) and the __builtin_amdgcn_* intrinsics.
package codeobj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultArch is the target when Options.Arch is empty: MI300X (CDNA3).
const DefaultArch = "gfx942"

// InstallHint is the command that provides every tool this package runs.
const InstallHint = "apt-get install clang-19 lld-19 llvm-19"

// Tool names, newest-pinned first; the unversioned name is the fallback.
var (
	clangNames   = []string{"clang-19", "clang"}
	readelfNames = []string{"llvm-readelf-19", "llvm-readelf"}
	objdumpNames = []string{"llvm-objdump-19", "llvm-objdump"}
)

// Options controls a compilation.
type Options struct {
	Arch     string   // offload arch; DefaultArch when empty
	Includes []string // -I directories
	Flags    []string // extra clang flags, after the defaults (so -O2 overrides -O3)
	// Clang is the compiler to run; empty looks up clang-19, then clang.
	Clang string
	// Timeout bounds each tool run (the compile, and Report's two
	// inspections); zero leaves only the caller's context.
	Timeout time.Duration
}

// Object is a compiled code object.
type Object struct {
	Arch string
	// Code is the ELF code object (what hipModuleLoadData takes).
	Code []byte
	// Diagnostics is the compiler's stderr: warnings, or nothing.
	Diagnostics string

	timeout time.Duration
}

// Build compiles src for opts.Arch and returns the code object.
func Build(src string, opts Options) (*Object, error) {
	return BuildContext(context.Background(), src, opts)
}

// BuildContext is Build under ctx: cancelling it stops the compiler.
func BuildContext(ctx context.Context, src string, opts Options) (*Object, error) {
	arch := opts.Arch
	if arch == "" {
		arch = DefaultArch
	}
	clang, err := findTool(opts.Clang, clangNames)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tilego-hip-")
	if err != nil {
		return nil, fmt.Errorf("codeobj: %w", err)
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "kernel.hip"), filepath.Join(dir, "kernel.hsaco")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return nil, fmt.Errorf("codeobj: %w", err)
	}
	args := compileArgs(arch, opts)
	args = append(args, "-o", out, in)
	stdout, stderr, err := run(ctx, opts.Timeout, clang, args...)
	diag := strings.TrimSpace(stderr + stdout)
	if err != nil {
		return nil, toolError(clang, err, diag)
	}
	code, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("codeobj: %s wrote no code object: %w\n%s", filepath.Base(clang), err, diag)
	}
	return &Object{Arch: arch, Code: code, Diagnostics: diag, timeout: opts.Timeout}, nil
}

// compileArgs are clang's flags for a device-only, unbundled code object,
// without the output and input.
func compileArgs(arch string, opts Options) []string {
	args := []string{
		"-x", "hip",
		"--offload-arch=" + arch,
		"--offload-device-only",
		"--no-gpu-bundle-output", // a plain ELF code object, not an offload bundle
		"-nogpulib", "-nogpuinc", // no ROCm device libraries or headers
		"-O3",
	}
	for _, d := range opts.Includes {
		args = append(args, "-I", d)
	}
	return append(args, opts.Flags...)
}

// findTool resolves an explicit path or name, or else the first of names on
// PATH.
func findTool(explicit string, names []string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("codeobj: %s not found: %s", explicit, InstallHint)
		}
		return p, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("codeobj: %s not found: %s", names[0], InstallHint)
}

// run executes a tool and returns its stdout and stderr.
func run(ctx context.Context, timeout time.Duration, path string, args ...string) (string, string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The clang driver starts the linker as a child; should the driver be
	// killed, do not wait on the child's hold of the output pipes.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		err = ctxErr
	}
	return stdout.String(), stderr.String(), err
}

// toolError says which tool failed and quotes what it printed.
func toolError(path string, err error, output string) error {
	name := filepath.Base(path)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("codeobj: %s timed out: %w", name, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("codeobj: %s cancelled: %w", name, err)
	}
	var detail string
	if output != "" {
		detail = ":\n" + output
	}
	// The driver links with ld.lld; without lld-19 it says so in passing.
	if strings.Contains(output, "ld.lld") && strings.Contains(output, "exist") {
		detail += "\n(ld.lld missing: " + InstallHint + ")"
	}
	return fmt.Errorf("codeobj: %s failed (%w)%s", name, err, detail)
}
