package main

import (
	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
)

// switches are the schedule choices TILEGO_WS, TILEGO_TMA, ... force (the
// CLI is the edge where the environment may decide generated code).
var switches = cudagen.SwitchesFromEnv()

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
func gpuBackend() (backend.Backend, error) {
	b, err := openGPU()
	if err != nil {
		return nil, err
	}
	return b, nil
}

// cudaEmitter returns a backend whose Emit writes CUDA for arch (sm_80,
// sm_90a); it needs no GPU.
func cudaEmitter(arch string) (backend.Backend, error) {
	return cuda.Emitter{Arch: arch, Switches: switches}, nil
}
