//go:build gpu

package cuda

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// FlashAttention and two-stage MLA decoding with their pipelined loads
// lowered to TMA (Options.TMA, sm_90a only), and FlashAttention also with a
// producer warpgroup issuing them (Options.WarpSpecialize), against
// float64.
func TestGPUTMA(t *testing.T) {
	b := openGPU(t)
	if b.arch != "sm_90a" {
		t.Skipf("TMA needs sm_90a; this device is %s", b.arch)
	}
	ws := false // set per subtest below
	run := func(t *testing.T, f *ir.Func, args []*tensor.Tensor) {
		t.Helper()
		p := runPoisonedWith(t, b, cudagen.Options{Arch: b.arch, WarpSpecialize: ws}, f, args)
		if len(p.TMA) == 0 {
			t.Error("no TMA in the program")
		}
		if ws && p.Threads == f.Kernel.Threads {
			t.Error("no producer warpgroup")
		}
	}
	cfgs := []kernels.AttnConfig{{M: 128, N: 64, Stages: 2, Threads: 256}, {M: 128, N: 128, Stages: 3, Threads: 256}, {M: 64, N: 64, Stages: 2, Threads: 128}}
	for _, ws = range []bool{false, true} {
		for name, s := range attnCases() {
			if s.Dqk%64 != 0 || s.Dv%64 != 0 {
				continue // TMA takes 64-column panels
			}
			for ci, c := range cfgs {
				c = fitAttn(s, c)
				t.Run(fmt.Sprintf("ws%v/%s_cfg%d", ws, name, ci), func(t *testing.T) {
					f, err := kernels.FlashAttention(s, c).Build(b.Limits())
					if err == nil {
						_, err = cudagen.Compile(f, cudagen.Options{Arch: b.arch})
					}
					if err != nil {
						t.Fatal(err) // every case compiles (fitAttn): a refusal is a bug
					}
					args := kernels.AttentionInputs(s, 21)
					run(t, f, args)
					var do, dl ref.Diff
					kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
					if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
						t.Errorf("O: %s; LSE: %s", &do, &dl)
					}
				})
			}
		}
	}
	// The two consumer warpgroups taking turns at the tensor cores
	// (configs asking for WS and PingPong).
	ws = false // the configs ask
	for name, s := range attnCases() {
		if s.Dqk%64 != 0 || s.Dv%64 != 0 {
			continue
		}
		for ci, c := range cfgs[:2] {
			c.WS, c.PingPong = true, true
			c = fitAttn(s, c)
			t.Run(fmt.Sprintf("pingpong/%s_cfg%d", name, ci), func(t *testing.T) {
				f, err := kernels.FlashAttention(s, c).Build(b.Limits())
				if err == nil {
					_, err = cudagen.Compile(f, cudagen.Options{Arch: b.arch})
				}
				if err != nil {
					t.Fatal(err)
				}
				args := kernels.AttentionInputs(s, 22)
				if p := runPoisonedWith(t, b, cudagen.Options{Arch: b.arch}, f, args); !p.PingPong {
					t.Error("the consumer warpgroups did not take turns")
				}
				var do, dl ref.Diff
				kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
				if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
					t.Errorf("O: %s; LSE: %s", &do, &dl)
				}
			})
		}
	}
	// GEMMs whose config asks for a producer warpgroup (WS), odd sizes and
	// transposes included (row pitches stay multiples of 16 bytes).
	for _, s := range []kernels.GemmShape{{M: 200, N: 136, K: 96}, {M: 256, N: 384, K: 200, TransA: true}, {M: 72, N: 264, K: 520, TransB: true}} {
		for _, dt := range []ir.DType{ir.BF16, ir.F16} {
			s.DType, s.OutDType = dt, dt
			c := kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 3, Threads: 256, Raster: 4, WS: true}
			t.Run(fmt.Sprintf("gemm_ws/%dx%dx%d_ta%v_tb%v_%s", s.M, s.N, s.K, s.TransA, s.TransB, dt), func(t *testing.T) {
				f, err := kernels.Gemm(s, c).Build()
				if err != nil {
					t.Fatal(err)
				}
				if p, err := cudagen.Compile(f, cudagen.Options{Arch: b.arch}); err != nil || p.Threads != 384 || len(p.TMA) != 3 {
					t.Fatalf("want a producer warpgroup and three tensor maps (A, B, C): %v", err)
				}
				checkGemmGPU(t, b, b.arch, s, c)
			})
		}
	}
	// MLA: 32 rows on mma.sync; 64 rows over two warpgroups splitting the
	// columns of both wgmma products (SplitN), with and without a producer
	// (WS), its loop bound read from the cache lengths.
	for _, mc := range []struct {
		name string
		s    kernels.MLAShape
		c    kernels.MLAConfig
		lens []int32
	}{
		{"mla_m32_2stages", kernels.MLAShape{Hq: 32, Sq: 2, DType: ir.BF16}, kernels.MLAConfig{M: 32, Stages: 2, Threads: 128}, []int32{1, 64, 65, 300}},
		{"mla_m64_2stages_splitn", kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}, kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true}, []int32{1, 64, 65, 700}},
		{"mla_m64_ws_splitn", kernels.MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true}, []int32{0, 1, 63, 129, 1000}},
		{"mla_m64_ws_splitn_f16_hq64", kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.F16}, kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true}, []int32{2, 64, 300}},
	} {
		ws = mc.c.WS
		t.Run(mc.name, func(t *testing.T) {
			f, err := kernels.MLADecode(mc.s, mc.c).Build(b.Limits())
			if err != nil {
				t.Fatal(err)
			}
			args := kernels.MLAInputs(mc.s, mc.lens, 5)
			run(t, f, args)
			checkMLAGPU(t, mc.s, args, mlaRows(mc.s, len(mc.lens)))
		})
	}
}
