package cudagen

import (
	"errors"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// Build with a target's Limits refuses, at the user's file:line, what the
// verifier accepts and the target's compiler refuses (issue 50), with the
// rule of that target; what compiles builds.
func TestLimitsBuild(t *testing.T) {
	d100 := kernels.AttnShape{B: 1, H: 1, HKV: 1, Sq: 128, Skv: 128, Dqk: 100, Dv: 100, DType: ir.BF16}
	d256 := kernels.AttnShape{B: 1, H: 1, HKV: 1, Sq: 256, Skv: 256, Dqk: 256, Dv: 256, DType: ir.BF16}
	cases := []struct {
		name, arch string
		prog       func() (f *tl.Func, line int)
		file       string // of the refused op
		want       string // "" builds
	}{
		{"gemm_k8", "sm_80", gemmK8, "limits_test.go", "K = 8 must be a multiple of 16 for mma m16n8k16"},
		{"gemm_k8", "sm_90a", gemmK8, "limits_test.go", "K = 8 must be a multiple of 16 for mma m16n8k16; nor can wgmma: K = 8 is not a multiple of 16"},
		{"flash_d100", "sm_80", attn(d100, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}), "attn_loop.go", "policy fullrow: 100 columns cannot be cut in 8-column pieces"},
		{"flash_d100", "sm_90a", attn(d100, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}), "attn_loop.go", "100 columns cannot be cut in 8-column pieces; nor can wgmma: N = 100 is not a multiple of 8"},
		{"gemm_f8_kxn", "sm_90a", func() (*tl.Func, int) {
			return kernels.Gemm(kernels.GemmShape{M: 128, N: 128, K: 128, DType: ir.F8E4M3, OutDType: ir.F32}, kernels.GemmConfig{BM: 64, BN: 64, BK: 64, Stages: 2, Threads: 128}), 0
		}, "gemm.go", "mma.sync multiplies f16 or bf16, not f8e4m3; nor can wgmma: 8-bit operands must both be K-major in shared memory"},
		{"gemm_f8_nxk", "sm_90a", func() (*tl.Func, int) {
			return kernels.Gemm(kernels.GemmShape{M: 128, N: 128, K: 128, TransB: true, DType: ir.F8E4M3, OutDType: ir.F32}, kernels.GemmConfig{BM: 64, BN: 64, BK: 64, Stages: 2, Threads: 128}), 0
		}, "", ""},
		{"gemm_f8_nxk", "sm_80", func() (*tl.Func, int) {
			return kernels.Gemm(kernels.GemmShape{M: 128, N: 128, K: 128, TransB: true, DType: ir.F8E4M3, OutDType: ir.F32}, kernels.GemmConfig{BM: 64, BN: 64, BK: 64, Stages: 2, Threads: 128}), 0
		}, "gemm.go", "mma.sync multiplies f16 or bf16, not f8e4m3"},
		// 192 KiB once pipelined: over an A100's 163 KiB, within Hopper's 227.
		{"shared_192k", "sm_80", attn(d256, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}), "flash.go", "shared memory after pipelining is 196608 bytes, over sm_80's 166912 per block"},
		{"shared_192k", "sm_90a", attn(d256, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}), "", ""},
		// Refused by the verifier, which Build runs first.
		{"huge_fragment", "sm_90a", hugeTiles((*tl.Block).Fragment), "limits_test.go", "a fragment may hold at most 1024 a thread"},
		{"huge_local", "sm_80", hugeTiles((*tl.Block).Local), "limits_test.go", "a local array may hold at most 1024"},
		{"overflowing_shared", "sm_90a", overflowingShared, "limits_test.go", "the element count of [4294967296 4294967296] overflows"},
		{"unbound_size", "sm_80", unboundSize, "limits_test.go", "size N is not a dim of any parameter"},
		// Each within the verifier's limit, too many together.
		{"many_fragments", "sm_90a", manyFragments, "limits_test.go", "takes one thread's fragments and locals to 20480 bytes, over the CUDA target's 16384"},
		// Within the verifier's even count; laid out, every thread holds
		// the whole tile: 4100 columns share no factor with 128 threads
		// beyond the vector.
		{"replicated_fragment", "sm_90a", replicatedRows(4100), "limits_test.go", "its layout gives each of the 128 threads 16400 elements"},
		{"replicated_fragment", "gfx942", replicatedRows(4100), "limits_test.go", "its layout gives each of the 128 threads 16400 elements"},
		{"spread_fragment", "sm_90a", replicatedRows(4096), "", ""},
		{"splitn_64_threads", "sm_90a", func() (*tl.Func, int) {
			return kernels.MLADecode(kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}, kernels.MLAConfig{M: 64, Stages: 1, Threads: 64, SplitN: true}), 0
		}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.arch, func(t *testing.T) {
			tf, line := tc.prog()
			fn, err := tf.Build(Limits(tc.arch))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if fn != nil {
				t.Error("Build returned a program with its error")
			}
			if _, ok := err.(ir.ErrorList); !ok {
				t.Errorf("error is %T; want ir.ErrorList, as Build's others", err)
			}
			checkRefusal(t, err, tc.want, tc.file, line)
		})
	}
}

// Limits are the opt-in shared memory of the architecture.
func TestLimitsShared(t *testing.T) {
	for arch, want := range map[string]int{"sm_80": 166912, "sm_90a": 232448, "sm_86": 101376, "": 166912, "sm_75x": ir.DefaultLimits.MaxSharedBytes} {
		if got := Limits(arch); got.MaxSharedBytes != want || got.MaxThreads != 1024 || got.Target == nil {
			t.Errorf("Limits(%s) = %d bytes, %d threads; want %d, 1024 and a check", arch, got.MaxSharedBytes, got.MaxThreads, want)
		}
	}
}

// gemmK8 multiplies 64×8 by 8×64 in one block.
func gemmK8() (*tl.Func, int) {
	f := tl.NewFunc("gemm_k8")
	A, B, C := f.In("A", tl.BF16, 64, 8), f.In("B", tl.BF16, 8, 64), f.Out("C", tl.F32, 64, 64)
	var line int
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		as, bs, acc := k.Shared(tl.BF16, 64, 8), k.Shared(tl.BF16, 8, 64), k.Fragment(tl.F32, 64, 64)
		k.Copy(A, as)
		k.Copy(B, bs)
		k.Gemm(as, bs, acc, tl.ClearAccum)
		line = callerLine() - 1
		k.Copy(acc, C)
	})
	return f, line
}

// hugeTiles allocates a 2^34-element tile with alloc (a fragment or a
// local): verified, it once took the layout pass minutes and gigabytes.
func hugeTiles(alloc func(*tl.Block, tl.DType, ...int) *tl.Tensor) func() (*tl.Func, int) {
	return func() (*tl.Func, int) {
		f := tl.NewFunc("huge")
		X := f.In("X", tl.F32, 64)
		var line int
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			fr := alloc(k, tl.F32, 1<<17, 1<<17)
			line = callerLine() - 1
			k.Copy(X.Sub(tl.Tile(0, 64)), fr.Sub(0, tl.Tile(0, 64)))
		})
		return f, line
	}
}

// replicatedRows scales a 4×cols f32 fragment over 128 threads.
func replicatedRows(cols int) func() (*tl.Func, int) {
	return func() (*tl.Func, int) {
		f := tl.NewFunc("rows")
		X, Y := f.In("X", tl.F32, 4, cols), f.Out("Y", tl.F32, 4, cols)
		var line int
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			x := k.Fragment(tl.F32, 4, cols)
			line = callerLine() - 1
			k.Copy(X, x)
			k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(2), i, j) }, 4, cols)
			k.Copy(x, Y)
		})
		return f, line
	}
}

// overflowingShared allocates a shared tile whose byte count overflows.
func overflowingShared() (*tl.Func, int) {
	f := tl.NewFunc("overflow")
	X := f.In("X", tl.F32, 64)
	var line int
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		s := k.Shared(tl.F32, 1<<32, 1<<32)
		line = callerLine() - 1
		k.Copy(X.Sub(tl.Tile(0, 64)), s.Sub(0, tl.Tile(0, 64)))
	})
	return f, line
}

// unboundSize sizes its grid by a Sym that no tensor's dim gives.
func unboundSize() (*tl.Func, int) {
	f := tl.NewFunc("unbound_size")
	n := f.Sym("N")
	line := callerLine() - 1
	X, Y := f.In("X", tl.F32, 64), f.Out("Y", tl.F32, 64)
	f.Kernel(tl.Grid(tl.CeilDiv(n, 64)), 128, func(k *tl.Block) {
		fr := k.Fragment(tl.F32, 64)
		k.Copy(X, fr)
		k.Copy(fr, Y)
	})
	return f, line
}

func attn(s kernels.AttnShape, c kernels.AttnConfig) func() (*tl.Func, int) {
	return func() (*tl.Func, int) { return kernels.FlashAttention(s, c), 0 }
}

// Every refusal of the library's config space, on both targets, is at a
// file:line of the kernel code and none is an internal error.
func TestRefusalsHavePositions(t *testing.T) {
	shapes := map[string][]map[string]string{
		"flash-attention": {{"dim": "128", "causal": "true"}, {"dim": "100"}, {"dim": "256"}},
		"gemm":            {{"k": "8"}, {"dtype": "f8e4m3", "trans-b": "true"}, {"m": "100", "n": "72", "k": "40"}},
	}
	refused := 0
	for kernel, list := range shapes {
		e, err := kernels.Lookup(kernel)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range list {
			p, err := e.Problem(sh)
			if err != nil {
				t.Fatal(err)
			}
			cs := kernels.Candidates(p)
			for i := 0; i < len(cs); i += 67 {
				for _, arch := range []string{"sm_80", "sm_90a"} {
					_, err := kernels.Build(p, cs[i], Limits(arch))
					var list ir.ErrorList
					switch {
					case err == nil:
						continue
					case !errors.As(err, &list):
						t.Errorf("%s %v %s: %v (%T): not an ir.ErrorList", kernel, sh, arch, err, err)
						continue
					}
					refused++
					for _, e := range list {
						if e.Pos.File == "" || e.Pos.Line == 0 || strings.Contains(e.Msg, "internal compiler error") {
							t.Errorf("%s %v %s: %v", kernel, sh, arch, e)
						}
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Error("no config refused: the test checks nothing")
	}
}

// manyFragments holds five f32 fragments of 1024 elements a thread: each
// within the verifier's limit, 20 KiB a thread together.
func manyFragments() (*tl.Func, int) {
	f := tl.NewFunc("many")
	X, Y := f.In("X", tl.F32, 128, 1024), f.Out("Y", tl.F32, 128, 1024)
	var line int
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		var frs []*tl.Tensor
		for range 5 {
			frs = append(frs, k.Fragment(tl.F32, 128, 1024))
		}
		line = callerLine() - 2
		for _, fr := range frs {
			k.Copy(X, fr)
			k.Copy(fr, Y)
		}
	})
	return f, line
}
