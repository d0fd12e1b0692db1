package cuda_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
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

// CUDA C++ for a program with no GPU present: the source (FullSource with
// the device library inlined, for nvcc or NVRTC alone) and what a launch
// needs, for sm_90a here; cuda.Emitter does the same behind the backend
// interface.
func ExampleEmitter() {
	f := tl.NewFunc("scale_rows")
	X, Y := f.In("X", tl.BF16, 256, 128), f.Out("Y", tl.BF16, 256, 128)
	f.Kernel(tl.Grid(256/16), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		x := k.Fragment(tl.F32, 16, 128)
		k.Copy(X.Sub(tl.Tile(bx, 16), tl.All), x)
		k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(2), i, j) }, 16, 128)
		k.Copy(x, Y.Sub(tl.Tile(bx, 16), tl.All))
	})
	fn, err := f.Build(cudagen.Limits("sm_90a")) // refuses at your file:line what the target cannot do
	if err != nil {
		log.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name, p.Threads, "threads,", p.Shared, "bytes of shared memory")
	fmt.Println(strings.Contains(p.Source, `#include "tilego.cuh"`), strings.Contains(p.FullSource(), "namespace tl"))
	src, err := cuda.Emitter{Arch: "sm_90a"}.Emit(fn)
	fmt.Println(src == p.Source, err)
	// Output:
	// scale_rows 128 threads, 0 bytes of shared memory
	// true true
	// true <nil>
}
