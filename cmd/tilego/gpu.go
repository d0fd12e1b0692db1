package main

import (
	"github.com/tilego/tilego/target"
	"github.com/tilego/tilego/target/cuda"
)

// switches are the schedule choices TILEGO_WS, TILEGO_TMA, ... force (the
// CLI is the edge where the environment may decide generated code).
var switches = cuda.SwitchesFromEnv()

// openGPU opens the machine's GPU, compiling with the switches.
func openGPU() (*cuda.Backend, error) {
	b, err := cuda.Open(0)
	if err != nil {
		return nil, err
	}
	b.SetSwitches(switches)
	return b, nil
}

// gpuBackend returns the backend of the machine's GPU, or why there is none
// usable (no driver, no device, no NVRTC).
func gpuBackend() (target.Backend, error) {
	b, err := openGPU()
	if err != nil {
		return nil, err
	}
	return b, nil
}

// cudaEmitter returns a backend whose Emit writes CUDA for arch (sm_80,
// sm_90a); it needs no GPU.
func cudaEmitter(arch string) (target.Backend, error) {
	return cuda.Emitter{Arch: arch, Switches: switches}, nil
}
