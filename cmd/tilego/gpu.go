package main

import (
	"github.com/tilego/tilego/target"
	"github.com/tilego/tilego/target/cuda"
)

// gpuBackend returns the backend of the machine's GPU, or why there is none
// usable (no driver, no device, no NVRTC).
func gpuBackend() (target.Backend, error) {
	b, err := cuda.Open(0)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// cudaEmitter returns a backend whose Emit writes CUDA for arch (sm_80,
// sm_90a); it needs no GPU.
func cudaEmitter(arch string) (target.Backend, error) { return cuda.Emitter{Arch: arch}, nil }
