package fuzz

import (
	"testing"

	"github.com/tilego/tilego/ir"
)

// BenchmarkEmit times cudagen.Compile alone, per program and target, over a
// fixed corpus (what the GPU fuzzer pays on the CPU before NVRTC).
func BenchmarkEmit(b *testing.B) {
	var fns []*ir.Func
	for seed := range uint64(200) {
		fn, err := Generate(seed, Defaults()).IR()
		if err != nil {
			b.Fatal(err)
		}
		fns = append(fns, fn)
	}
	for _, arch := range Archs {
		b.Run(arch, func(b *testing.B) {
			for i := range b.N {
				if _, msg, _ := Emit(fns[i%len(fns)], arch); msg != "" {
					b.Fatal(msg)
				}
			}
		})
	}
}
