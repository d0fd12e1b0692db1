package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cpu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	drv "github.com/tilego/tilego/runtime/cuda"
)

var emitCmd = &command{
	name: "emit", args: "KERNEL [flags]", summary: "print a kernel's IR or the CUDA C++ a GPU target gets",
	main: emitMain, usage: emitUsage,
}

func defineEmitFlags(k *kernelFlags) (target, config *string, step *int, standalone, resources *bool) {
	step = new(int)
	standalone = k.fs.Bool("standalone", false, "for a GPU target, inline the device library, so the source compiles alone (nvcc, NVRTC or clang without tilego's include folder)")
	resources = k.fs.Bool("resources", false, "for sm_80 or sm_90a, compile with NVRTC (no GPU needed; libnvrtc on the library path, scripts/fetch-nvrtc.sh fetches Debian's) "+
		"and print ptxas's report (registers, spills, stack) instead of the code")
	boundedInt(k.fs, step, "step", 0, 0, 1<<16, "for a shape that runs as several programs (e.g. mla-decode --splits 2: the split kernel, then the combine), print the N-th, from 1")
	return k.fs.String("target", "ir", "what to emit: ir (or cpu) is the program the interpreter runs; sm_80 or sm_90a is the CUDA C++ for that GPU; gfx942 is HIP for AMD's MI300X"),
		k.fs.String("config", "", "config fields to change from the target's default, as name=value pairs (e.g. \"n=64 ws=true overlap=true\"; names as run --json prints them)"),
		step, standalone, resources
}

func emitUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: tilego emit KERNEL [shape flags] [--target T] [--config PAIRS] [--step N] [--resources]

Builds KERNEL for the shape the flags give and prints the code the target
gets: the IR text for ir (with the interpreter's default config), CUDA C++
for sm_80 (mma.sync) or sm_90a (wgmma), HIP for gfx942 (AMD MI300X: MFMA)
(with the target's GPU config); --standalone inlines the device library;
--config
changes fields of that config; --step picks one program of a shape that
runs several; --resources compiles the CUDA C++ with NVRTC and prints
ptxas's register, spill and stack report. No GPU is needed.
TILEGO_DUMP=<program name> also prints every compiler pass.

Emit flags:
`)
	k, _ := newKernelFlags("emit", []string{kernels.Entries[0].Name})
	defineEmitFlags(k) //nolint:dogsled // only their help is printed
	k.printOwnFlags(w)
	fmt.Fprintf(w, "\nShape flags depend on the kernel: tilego help KERNEL, or tilego list.\n")
}

func emitMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		emitUsage(stdout)
		return 0
	}
	if err := emit(args, stdout, stderr); err != nil {
		return report(stderr, "emit", err)
	}
	return 0
}

func emit(args []string, stdout, stderr io.Writer) error {
	k, err := newKernelFlags("emit", args)
	if err != nil {
		return usageErr(err)
	}
	tgt, config, step, standalone, resources := defineEmitFlags(k)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: tilego emit %s [flags]\n\n", k.entry.Name)
		printKernel(w, k.entry)
		fmt.Fprintf(w, "\nEmit flags:\n")
		k.printOwnFlags(w)
	}
	if help, err := k.parse(args[1:], stdout, stderr, usage); help || err != nil {
		if err != nil {
			return usageErr(err)
		}
		return nil
	}
	p, err := k.problem()
	if err != nil {
		return usageErr(err)
	}
	var be backend.Backend
	switch *tgt {
	case "ir", "cpu":
		be = cpu.Backend{}
	case "sm_80", "sm_90a", "gfx942":
		if be, err = cudaEmitter(*tgt); err != nil {
			return err
		}
	default:
		return usageErr(fmt.Errorf("--target: unknown target %q (want ir, sm_80, sm_90a or gfx942)", *tgt))
	}
	cfg := p.DefaultConfig()
	if be.Name() == "cuda" {
		cfg = kernels.GPUConfigFor(p, *tgt)
	}
	if cfg, err = kernels.ParseConfig(cfg, *config); err != nil {
		return usageErr(err) // "config m=0: why"
	}
	fn, err := emitProgram(p, cfg, *step, be)
	if err != nil {
		return err
	}
	code, err := be.Emit(fn)
	if err != nil {
		return withConfig(err, cfg)
	}
	if *resources {
		return printResources(stdout, code, fn.Name, *tgt)
	}
	if *standalone && be.Name() != "cpu" {
		code = strings.Replace((&cudagen.Program{Source: code}).FullSource(), "#pragma once\n", "", 1) // a main file, now
	}
	_, err = io.WriteString(stdout, code)
	return err
}

// emitProgram builds the program to print: p's one program, or with step
// N >= 1 the N-th of the programs a chained shape runs.
func emitProgram(p kernels.Problem, cfg kernels.Config, step int, be backend.Backend) (*ir.Func, error) {
	if step == 0 {
		return kernels.Build(p, cfg, be.Limits())
	}
	ch, ok := p.(kernels.Chain)
	if !ok {
		return nil, usageErr(fmt.Errorf("--step %d: %s runs as one program (leave --step out)", step, p.Kernel()))
	}
	steps, err := ch.Steps(cfg)
	if err != nil {
		return nil, err
	}
	if step < 1 || step > len(steps) {
		return nil, usageErr(fmt.Errorf("--step %d: this shape runs as %d program(s); want 1 to %d", step, len(steps), len(steps)))
	}
	return steps[step-1].Func.Build(be.Limits())
}

// printResources compiles code, the CUDA C++ of program name for arch,
// with NVRTC and writes ptxas's report of it: what the GPU's own compile
// reports (NVRTC's release may differ from the GPU machine's).
func printResources(w io.Writer, code, name, arch string) error {
	if arch != "sm_80" && arch != "sm_90a" {
		return usageErr(fmt.Errorf("--resources: for sm_80 or sm_90a (the HIP code object's notes give gfx942's: docs/amd.md)"))
	}
	src := (&cudagen.Program{Source: code}).FullSource()
	_, log, err := drv.Compile(src, name, []string{"--std=c++17", "--gpu-architecture=" + arch, "--ptxas-options=-v", "-diag-suppress=177"})
	if err != nil {
		if errors.Is(err, drv.ErrNoNVRTC) {
			return fmt.Errorf("--resources needs NVRTC: %w (scripts/fetch-nvrtc.sh fetches Debian's libnvrtc; put its folder on LD_LIBRARY_PATH)", err)
		}
		return err
	}
	major, minor, _ := drv.NVRTCVersion()
	fmt.Fprintf(w, "%s for %s, NVRTC %d.%d:\n", name, arch, major, minor)
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "ptxas") && !strings.Contains(l, "bytes gmem") && !strings.Contains(l, "Compiling entry") {
			fmt.Fprintln(w, strings.Join(strings.Fields(l), " "))
		}
	}
	return nil
}
