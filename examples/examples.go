// Package examples holds small kernels written the way a user writes them
// from docs/language.md, one a file, each under 60 lines of kernel: row
// normalizations, a softmax, a GEMM with a fused epilogue, an FP8 GEMM
// scaled per row. Their tests run them on the interpreter against
// float64, compile them for every target, and run the AMD target's code
// in its emulator (backend/hip/emu); the GPU tests run them against the
// interpreter (internal/testprog/examples.go).
package examples
