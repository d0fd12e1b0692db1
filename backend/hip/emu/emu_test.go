package emu

import (
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

func needClang(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(Clang); err != nil {
		t.Fatalf("%s not found (apt-get install clang-19): %v", Clang, err)
	}
}

// compile builds f and compiles it for gfx942.
func compile(t *testing.T, f *tl.Func) *cudagen.Program {
	t.Helper()
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inputs are random inputs and NaN-poisoned outputs for fn's parameters,
// sized by shape (the parameters' shapes with syms bound).
func inputs(fn *ir.Func, shapes [][]int) []*tensor.Tensor {
	var args []*tensor.Tensor
	for i, b := range fn.Params {
		x := tensor.New(b.DType, shapes[i]...)
		if b.Output {
			x.Fill(math.NaN())
		} else {
			x.Rand(uint64(i+1), 1)
		}
		args = append(args, x)
	}
	return args
}

func clone(ts []*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		c := *t
		c.Data = append([]float64(nil), t.Data...)
		out[i] = &c
	}
	return out
}

// checkInterp runs p in the emulator and fn in the interpreter on the same
// inputs and compares the outputs (relative RMS error at most tol; 0:
// bit for bit).
func checkInterp(t *testing.T, p *cudagen.Program, args []*tensor.Tensor, tol float64) {
	t.Helper()
	want := clone(args)
	if err := interp.Run(p.Func, want); err != nil {
		t.Fatal(err)
	}
	got := clone(args)
	start := time.Now()
	if err := Run(p, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: built and ran in %s", p.Name, time.Since(start).Round(time.Millisecond))
	for i, b := range p.Func.Params {
		if !b.Output {
			continue
		}
		var d ref.Diff
		bad := 0
		for j, w := range want[i].Data {
			g := got[i].Data[j]
			if math.IsNaN(g) != math.IsNaN(w) || tol == 0 && g != w && !math.IsNaN(w) {
				if bad++; bad <= 5 {
					t.Errorf("%s[%d] = %g, want %g", b.Name, j, g, w)
				}
				continue
			}
			if !math.IsNaN(w) {
				d.Add(g, w)
			}
		}
		if bad > 0 || d.Rel() > tol {
			t.Errorf("%s: %d elements wrong; %s", b.Name, bad, &d)
		}
	}
}

// A copy global -> shared -> fragment -> global with conversions on the
// way (f32 -> bf16 -> f32 -> f16), over a symbolic row count that the tiles
// do not divide: masks, swizzles and the fragment layout, bit for bit.
func TestCopyConvert(t *testing.T) {
	needClang(t)
	f := tl.NewFunc("copy_convert")
	R := f.Sym("R")
	X := f.In("X", tl.F32, R, 96)
	Y := f.Out("Y", tl.F16, R, 96)
	f.Kernel(tl.Grid(tl.CeilDiv(R, 32)), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		s := k.Shared(tl.BF16, 32, 96)
		x := k.Fragment(tl.F32, 32, 96)
		k.Copy(X.Sub(tl.Tile(bx, 32), tl.All), s)
		k.Copy(s, x)
		k.Copy(x, Y.Sub(tl.Tile(bx, 32), tl.All))
	})
	p := compile(t, f)
	checkInterp(t, p, inputs(p.Func, [][]int{{77, 96}, {77, 96}}), 0)
}

// A row reduction (sum and max over each row of a fragment, across lanes
// by shuffles) and a Parallel loop over the rows that combines them.
func TestRowReduce(t *testing.T) {
	needClang(t)
	f := tl.NewFunc("row_reduce")
	X := f.In("X", tl.F32, 100, 128)
	Y := f.Out("Y", tl.F32, 100)
	f.Kernel(tl.Grid(tl.CeilDiv(100, 16)), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		x := k.Fragment(tl.F32, 16, 128)
		s := k.Fragment(tl.F32, 16)
		m := k.Fragment(tl.F32, 16)
		o := k.Shared(tl.F32, 16)
		om := k.Shared(tl.F32, 16)
		k.Copy(X.Sub(tl.Tile(bx, 16), tl.All), x)
		k.ReduceSum(x, s, 1)
		k.ReduceMax(x, m, 1)
		k.Copy(s, o)
		k.Copy(m, om)
		k.Parallel(func(r tl.Expr) {
			o.Set(o.At(r).Mul(0.5).Add(om.At(r)), r)
		}, 16)
		k.Copy(o, Y.Sub(tl.Tile(bx, 16)))
	})
	p := compile(t, f)
	if !strings.Contains(p.Source, "tl::shfl_xor") {
		t.Errorf("no shuffles in the reduction:\n%s", p.Source)
	}
	checkInterp(t, p, inputs(p.Func, [][]int{{100, 128}, {100}}), 1e-6)
}

// gemmCfg tiles the GEMM tests: four waves over a 64×64 tile.
var gemmCfg = kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 256}

// runGemm runs kernels.Gemm for s and c in the emulator (with opt) and
// returns its error against ref.Gemm (float64).
func runGemm(t *testing.T, s kernels.GemmShape, c kernels.GemmConfig, opt Options) ref.Diff {
	t.Helper()
	p := compile(t, kernels.Gemm(s, c))
	if !strings.Contains(p.Source, "tl::mfma_") {
		t.Fatalf("no MFMA in the GEMM:\n%s", p.Source)
	}
	args := kernels.GemmInputs(s, uint64(s.M*7+s.N*3+s.K))
	args[2].Fill(math.NaN())
	start := time.Now()
	if err := RunWith(p, args, opt); err != nil {
		t.Fatal(err)
	}
	t.Logf("built and ran in %s", time.Since(start).Round(time.Millisecond))
	_, n, want := ref.Gemm(args[0], args[1], s.TransA, s.TransB)
	var d ref.Diff
	for i := range s.M {
		for j := range s.N {
			d.Add(args[2].At(i, j), want[i*n+j])
		}
	}
	return d
}

// GEMMs on the matrix cores (v_mfma_f32_16x16x16_{bf16,f16}) at a shape the
// tiles do not divide, every transpose, against a float64 reference.
func TestGemm(t *testing.T) {
	needClang(t)
	for _, dt := range []ir.DType{ir.BF16, ir.F16} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				if dt == ir.F16 && ta != tb { // f16: the plain and the doubly transposed
					continue
				}
				s := kernels.GemmShape{M: 200, N: 136, K: 96, TransA: ta, TransB: tb, DType: dt, OutDType: ir.F32}
				t.Run(fmt.Sprintf("%s_ta%v_tb%v", dt, ta, tb), func(t *testing.T) {
					if d := runGemm(t, s, gemmCfg, Options{Stagger: 200 * time.Microsecond}); d.Rel() > kernels.Tolerance(s.OutDType) {
						t.Errorf("%s", &d)
					}
				})
			}
		}
	}
}

// GEMMs tiled otherwise: larger tiles with a rasterized grid and a 16-bit
// output, eight waves splitting C by rows over three stages, four by
// columns with BK 64.
func TestGemmConfigs(t *testing.T) {
	needClang(t)
	for i, tc := range []struct {
		s kernels.GemmShape
		c kernels.GemmConfig
	}{
		{kernels.GemmShape{M: 77, N: 130, K: 40, TransB: true, DType: ir.BF16, OutDType: ir.BF16}, kernels.GemmConfig{BM: 128, BN: 128, BK: 32, Stages: 2, Threads: 256, Raster: 4}},
		{kernels.GemmShape{M: 77, N: 130, K: 40, TransA: true, DType: ir.F16, OutDType: ir.F32}, kernels.GemmConfig{BM: 128, BN: 64, BK: 32, Stages: 3, Threads: 512, Policy: ir.FullRow}},
		{kernels.GemmShape{M: 128, N: 128, K: 64, DType: ir.F16, OutDType: ir.F16}, kernels.GemmConfig{BM: 64, BN: 128, BK: 64, Stages: 2, Threads: 256, Policy: ir.FullCol}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if d := runGemm(t, tc.s, tc.c, Options{Stagger: 100 * time.Microsecond}); d.Rel() > kernels.Tolerance(tc.s.OutDType) {
				t.Errorf("%+v %+v: %s", tc.s, tc.c, &d)
			}
		})
	}
}

// The comparison catches a wrong lane mapping: with the MFMA accumulator
// transposed (TL_EMU_WRONG_MFMA) the GEMM is wrong.
func TestWrongMFMACaught(t *testing.T) {
	needClang(t)
	s := kernels.GemmShape{M: 200, N: 136, K: 96, TransB: true, DType: ir.BF16, OutDType: ir.F32}
	d := runGemm(t, s, gemmCfg, Options{Defines: []string{"TL_EMU_WRONG_MFMA"}})
	if d.Rel() <= kernels.Tolerance(s.OutDType) {
		t.Errorf("a transposed MFMA accumulator passed: %s", &d)
	}
	t.Logf("with the accumulator transposed: %s", &d)
}

// copyProgram is TestCopyConvert's program with edit applied to its
// source, and inputs for it.
func copyProgram(t *testing.T, edit func(string) string) (*cudagen.Program, []*tensor.Tensor) {
	f := tl.NewFunc("broken")
	X := f.In("X", tl.F32, 64, 64)
	Y := f.Out("Y", tl.F32, 64, 64)
	f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		s := k.Shared(tl.F32, 32, 64)
		k.Copy(X.Sub(tl.Tile(bx, 32), tl.All), s)
		k.Copy(s, Y.Sub(tl.Tile(bx, 32), tl.All))
	})
	p := compile(t, f)
	const anchor = "const int bx = blockIdx.x;"
	if !strings.Contains(p.Source, anchor) {
		t.Fatalf("no %q in:\n%s", anchor, p.Source)
	}
	p.Source = edit(p.Source)
	return p, inputs(p.Func, [][]int{{64, 64}, {64, 64}})
}

// Failures name what failed: a barrier only some threads reach is a hang
// (reported with where the threads wait), a write past a buffer a crash,
// bad source clang's message.
func TestFailures(t *testing.T) {
	needClang(t)
	for _, tc := range []struct {
		name, inject string
		kind         Kind
		msg          string
	}{
		{"hang", "if (tid < 64) __syncthreads();", Hang, "threads 0-63 at __syncthreads; threads 64-127 between blocks"},
		{"out of bounds", "if (tid == 0) Y[64 * 64 + 3] = 1.0f;", Crash, "wrote outside buffer 1"},
		{"segfault", "if (tid == 5) *(volatile int*)16 = 1;", Crash, "(segmentation fault) in block 0 thread 5"},
		{"compile", "no_such_function();", Compile, "no_such_function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, args := copyProgram(t, func(src string) string {
				return strings.Replace(src, "const int bx = blockIdx.x;", "const int bx = blockIdx.x; "+tc.inject, 1)
			})
			err := RunWith(p, args, Options{Timeout: 2 * time.Second})
			if !IsKind(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want a %s error with %q", err, tc.kind, tc.msg)
			}
		})
	}
}

// The cross-lane primitives keep their documented semantics in the
// emulation: shfl_xor(v, m) is lane (lane ^ m)'s v; after quad_transpose
// lane q of a quad holds lane j's word q as wj. A hand-written kernel
// records both for every thread of a 192-thread block (three waves).
func TestCrossLane(t *testing.T) {
	needClang(t)
	const n = 192
	f := tl.NewFunc("cross_lane")
	X := f.In("X", tl.F32, n)
	Y := f.Out("Y", tl.F32, n, 9)
	f.Kernel(tl.Grid(1), n, func(k *tl.Block) {
		y := k.Fragment(tl.F32, n)
		k.Copy(X, y)
		k.Copy(y, Y.Sub(tl.All, 0))
	})
	p := compile(t, f)
	p.Source = `#include "tilego_hip.h"
extern "C" __global__ void __launch_bounds__(192) cross_lane(const float* __restrict__ X, float* __restrict__ Y) {
  const int tid = threadIdx.x;
  const float v = X[tid];
  const int ms[5] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 5; ++i) Y[tid * 9 + i] = tl::shfl_xor(v, ms[i]);
  uint32_t w0 = tid * 4 + 0, w1 = tid * 4 + 1, w2 = tid * 4 + 2, w3 = tid * 4 + 3;
  tl::quad_transpose(w0, w1, w2, w3);
  Y[tid * 9 + 5] = float(w0), Y[tid * 9 + 6] = float(w1), Y[tid * 9 + 7] = float(w2), Y[tid * 9 + 8] = float(w3);
}
`
	args := inputs(p.Func, [][]int{{n}, {n, 9}})
	if err := Run(p, args); err != nil {
		t.Fatal(err)
	}
	x, y := args[0], args[1]
	for tid := range n {
		for i, m := range []int{1, 2, 4, 8, 16} {
			if got, want := y.At(tid, i), x.At(tid^m); got != want {
				t.Errorf("thread %d: shfl_xor(v, %d) = %g, want %g", tid, m, got, want)
			}
		}
		q, base := tid%4, tid&^3
		for j := range 4 {
			if got, want := y.At(tid, 5+j), float64((base+j)*4+q); got != want {
				t.Errorf("thread %d: quad_transpose w%d = %g, want %g", tid, j, got, want)
			}
		}
	}
}

// Staggered waves catch a missing barrier: with the barriers taken out of
// a copy global -> LDS -> fragment (whose layouts differ, so waves read
// what other waves wrote), the result is wrong.
func TestStaggerCatchesMissingBarrier(t *testing.T) {
	needClang(t)
	f := tl.NewFunc("racy")
	X := f.In("X", tl.F32, 64, 64)
	Y := f.Out("Y", tl.F32, 64, 64)
	f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		s := k.Shared(tl.F32, 32, 64)
		x := k.Fragment(tl.F32, 32, 64)
		k.Copy(X.Sub(tl.Tile(bx, 32), tl.All), s)
		k.Copy(s, x)
		k.Copy(x, Y.Sub(tl.Tile(bx, 32), tl.All))
	})
	p := compile(t, f)
	args := inputs(p.Func, [][]int{{64, 64}, {64, 64}})
	wrong := func() int { // Y should be X
		got := clone(args)
		if err := RunWith(p, got, Options{Stagger: 2 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, v := range got[1].Data {
			if v != args[0].Data[i] {
				bad++
			}
		}
		return bad
	}
	if bad := wrong(); bad > 0 {
		t.Fatalf("with its barriers, %d elements wrong", bad)
	}
	if !strings.Contains(p.Source, "__syncthreads();") {
		t.Fatalf("no barrier to take out:\n%s", p.Source)
	}
	p.Source = strings.ReplaceAll(p.Source, "__syncthreads();", "")
	bad := wrong()
	if bad == 0 {
		t.Errorf("without its barriers the copy still came out right")
	}
	t.Logf("without barriers: %d of %d elements wrong", bad, 64*64)
}

// A GEMM whose A operand is a fragment (converted from f32 on the way in)
// and whose result is scaled per row from a reduction: the MFMA operand
// layout of a register tile, against the interpreter.
func TestGemmFragmentA(t *testing.T) {
	needClang(t)
	f := tl.NewFunc("gemm_frag_a")
	X := f.In("X", tl.F32, 96, 32)
	B := f.In("B", tl.F16, 32, 64)
	Y := f.Out("Y", tl.F32, 96, 64)
	f.Kernel(tl.Grid(tl.CeilDiv(96, 64)), 256, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		a := k.Fragment(tl.F16, 64, 32)
		bs := k.Shared(tl.F16, 32, 64)
		acc := k.Fragment(tl.F32, 64, 64)
		m := k.Fragment(tl.F32, 64)
		k.Copy(X.Sub(tl.Tile(bx, 64), tl.All), a)
		k.Copy(B, bs)
		k.Gemm(a, bs, acc, tl.ClearAccum)
		k.ReduceAbsMax(acc, m, 1)
		k.Parallel(func(i, j tl.Expr) {
			acc.Set(acc.At(i, j).Div(m.At(i).Add(1)), i, j)
		}, 64, 64)
		k.Copy(acc, Y.Sub(tl.Tile(bx, 64), tl.All))
	})
	p := compile(t, f)
	if !strings.Contains(p.Source, "tl::mfma_f16_16x16x16") {
		t.Fatalf("no MFMA:\n%s", p.Source)
	}
	checkInterp(t, p, inputs(p.Func, [][]int{{96, 32}, {32, 64}, {96, 64}}), 1e-5)
}

// A pipelined loop that loads ahead through a variable the kernel set
// before the serial loop around it (a packed sequence's offset) reads the
// rows the interpreter does, at offsets no tile divides.
func TestLoadAheadThroughKernelVariable(t *testing.T) {
	needClang(t)
	p := compile(t, testprog.OffsetBeforeSerialLoop(false))
	if !strings.Contains(p.Source, " - lo) % 2)") { // the copy's slot of a ring of two
		t.Fatalf("the loop's copy is not issued ahead:\n%s", p.Source)
	}
	args := inputs(p.Func, [][]int{{2}, {512, 64}, {2, 2, 256, 64}})
	args[0].Data[0], args[0].Data[1] = 7, 100
	checkInterp(t, p, args, 0)
}
