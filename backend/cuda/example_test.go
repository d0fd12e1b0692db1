package cuda_test

import (
	"log"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// FlashAttention over tensors a Go program keeps on the GPU: build and
// compile once per shape, bind the device buffers, launch. (Compiled by go
// test, not run: it needs a GPU.)
func ExampleBind() {
	b, err := cuda.Open(0) // fails plainly where there is no driver, GPU or NVRTC
	if err != nil {
		log.Fatal(err)
	}
	s := kernels.AttnShape{B: 1, H: 8, HKV: 8, Sq: 1024, Skv: 1024, Dqk: 128, Dv: 128, DType: ir.BF16}
	fn, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}).Build(b.Limits())
	if err != nil {
		log.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: b.Arch()})
	if err != nil {
		log.Fatal(err)
	}
	// The program's own tensors would already be on the device; here they
	// are allocated for the example: Q, K, V, O [B, H, S, D] bf16 and the
	// LSE [B, H, S] f32.
	qkvo, lse := []int{s.B, s.H, s.Sq, s.Dqk}, []int{s.B, s.H, s.Sq}
	var args []cuda.DeviceTensor
	for i, shape := range [][]int{qkvo, qkvo, qkvo, qkvo, lse} {
		dt, n := ir.BF16, s.B*s.H*s.Sq*s.Dqk*2
		if i == 4 {
			dt, n = ir.F32, s.B*s.H*s.Sq*4
		}
		buf, err := b.Driver().Alloc(n)
		if err != nil {
			log.Fatal(err)
		}
		defer b.Driver().Free(buf)
		args = append(args, cuda.DeviceTensor{Buf: buf, DType: dt, Shape: shape})
	}
	l, err := cuda.Bind(b, p, args)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Once(); err != nil { // launches and waits
		log.Fatal(err)
	}
}
