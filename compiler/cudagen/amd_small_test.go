package cudagen_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// smallGemm is C = A·Bᵀ + 1 over one M×N tile, A and B in shared memory:
// a user's program, not a library kernel.
func smallGemm(M, N, K, threads int, dt tl.DType) *tl.Func {
	f := tl.NewFunc("small_gemm")
	A, B := f.In("A", dt, M, K), f.In("B", dt, N, K)
	C := f.Out("C", tl.F32, M, N)
	f.Kernel(tl.Grid(1), threads, func(k *tl.Block) {
		as, bs := k.Shared(dt, M, K), k.Shared(dt, N, K)
		c := k.Fragment(tl.F32, M, N)
		k.Copy(A, as)
		k.Copy(B, bs)
		k.Gemm(as, bs, c, tl.TransB, tl.ClearAccum)
		k.Parallel(func(i, j tl.Expr) { c.Set(c.At(i, j).Add(1), i, j) }, M, N)
		k.Copy(c, C)
	})
	return f
}

// emulateAgainstInterp runs fn for gfx942 in the emulator and on the
// interpreter on the same random inputs and compares the last argument.
func emulateAgainstInterp(t *testing.T, f *tl.Func, args []*tensor.Tensor) string {
	t.Helper()
	fn, err := f.Build(cudagen.Limits("gfx942"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
	if err != nil {
		t.Fatal(err)
	}
	out := args[len(args)-1]
	want := tensor.New(out.DType, out.Shape...)
	if err := interp.Run(fn, append(args[:len(args)-1:len(args)-1], want)); err != nil {
		t.Fatal(err)
	}
	for i := range out.Data {
		out.Data[i] = math.NaN()
	}
	if err := emu.Run(p, args); err != nil {
		t.Fatal(err)
	}
	var d ref.Diff
	for i := range want.Data {
		d.Add(out.Data[i], want.Data[i])
	}
	if d.Bad > 0 || d.Rel() > 1e-5 {
		t.Errorf("gfx942 emulated against the interpreter: %s", &d)
	}
	return p.Source
}

// Gemms on gfx942, on small programs: with whole waves and 16-bit operands
// MFMA, each lane reading its four K elements of a row as one 8-byte LDS
// read; with a block of 32 threads, or a K that is not a multiple of 16,
// dot products a thread. Emulated, each gives the interpreter's answer.
func TestAMDSmallGemms(t *testing.T) {
	for _, tc := range []struct {
		name          string
		threads, k    int
		dt            tl.DType
		want, notWant string
	}{
		{"mfma", 64, 48, tl.BF16, "const uint2 v = ", "float dot = "},
		{"32_threads", 32, 48, tl.BF16, "float dot = ", "mfma_"},
		{"k_40", 64, 40, tl.F16, "float dot = ", "mfma_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const M, N = 32, 16
			args := []*tensor.Tensor{tensor.New(tc.dt, M, tc.k).Rand(1, 1), tensor.New(tc.dt, N, tc.k).Rand(2, 1), tensor.New(tl.F32, M, N)}
			src := emulateAgainstInterp(t, smallGemm(M, N, tc.k, tc.threads, tc.dt), args)
			if !strings.Contains(src, tc.want) || strings.Contains(src, tc.notWant) {
				t.Errorf("want %q and no %q in\n%s", tc.want, tc.notWant, src)
			}
		})
	}
}

// A program whose shared memory passes gfx942's 64 KiB is refused by
// Compile itself, at the kernel's file:line.
func TestAMDSharedLimit(t *testing.T) {
	f := tl.NewFunc("big_lds")
	X, Y := f.In("X", tl.F32, 128, 136), f.Out("Y", tl.F32, 128, 136)
	f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
		s := k.Shared(tl.F32, 128, 136) // 68 KiB
		k.Copy(X, s)
		k.Copy(s, Y)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
	if err == nil || !strings.Contains(err.Error(), "over gfx942's 65536 per block") || !strings.Contains(err.Error(), "amd_small_test.go:") {
		t.Errorf("Compile = %v; want the shared memory refused at the kernel's file:line", err)
	}
	if _, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"}); err != nil {
		t.Errorf("sm_90a: %v", err)
	}
}

// Pow on gfx942, emulated: a real power of |x| and an odd integer power of
// x (negative bases keep their sign) give the interpreter's answer within
// its f32 tolerance.
func TestAMDPow(t *testing.T) {
	f := tl.NewFunc("powers")
	X, Y := f.In("X", tl.F32, 8, 64), f.Out("Y", tl.F32, 8, 64)
	f.Kernel(tl.Grid(1), 64, func(k *tl.Block) {
		x := k.Fragment(tl.F32, 8, 64)
		k.Copy(X, x)
		k.Parallel(func(i, j tl.Expr) { x.Set(tl.Pow(tl.Abs(x.At(i, j)), 2.5).Add(tl.Pow(x.At(i, j), 3)), i, j) }, 8, 64)
		k.Copy(x, Y)
	})
	src := emulateAgainstInterp(t, f, []*tensor.Tensor{tensor.New(tl.F32, 8, 64).Rand(5, 2), tensor.New(tl.F32, 8, 64)})
	if !strings.Contains(src, "tl::pow_(") {
		t.Errorf("no pow in the program:\n%s", src)
	}
}
