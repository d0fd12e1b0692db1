package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cpu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

var emitCmd = &command{
	name: "emit", args: "KERNEL [flags]", summary: "print a kernel's IR or the CUDA C++ a GPU target gets",
	main: emitMain, usage: emitUsage,
}

func defineEmitFlags(k *kernelFlags) (target, config *string, step *int, standalone *bool) {
	step = new(int)
	standalone = k.fs.Bool("standalone", false, "for a GPU target, inline the device library, so the source compiles alone (nvcc, NVRTC or clang without tilego's include folder)")
	boundedInt(k.fs, step, "step", 0, 0, 1<<16, "for a shape that runs as several programs (e.g. mla-decode --splits 2: the split kernel, then the combine), print the N-th, from 1")
	return k.fs.String("target", "ir", "what to emit: ir (or cpu) is the program the interpreter runs; sm_80 or sm_90a is the CUDA C++ for that GPU; gfx942 is HIP for AMD's MI300X"),
		k.fs.String("config", "", "config fields to change from the target's default, as name=value pairs (e.g. \"n=64 ws=true overlap=true\"; names as run --json prints them)"),
		step, standalone
}

func emitUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: tilego emit KERNEL [shape flags] [--target T] [--config PAIRS] [--step N]

Builds KERNEL for the shape the flags give and prints the code the target
gets: the IR text for ir (with the interpreter's default config), CUDA C++
for sm_80 (mma.sync) or sm_90a (wgmma), HIP for gfx942 (AMD MI300X: MFMA)
(with the target's GPU config); --standalone inlines the device library;
--config
changes fields of that config; --step picks one program of a shape that
runs several. No GPU is needed. TILEGO_DUMP=<program name> also prints
every compiler pass.

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
	tgt, config, step, standalone := defineEmitFlags(k)
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
