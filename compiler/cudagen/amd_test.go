package cudagen_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/backend/hip/codeobj"
	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// The GEMM kernel, unchanged, compiles for gfx942 to a code object whose
// main loop is MFMA instructions, without spills: both operand types, A
// and B transposed or not, square and full-row wave splits.
func TestAMDGemmCodeObject(t *testing.T) {
	dir := amdIncludeDir(t)
	for _, tc := range []struct {
		s kernels.GemmShape
		c kernels.GemmConfig
	}{
		{kernels.GemmShape{M: 256, N: 256, K: 128, DType: tl.BF16, OutDType: tl.BF16}, kernels.GemmConfig{BM: 128, BN: 128, BK: 32, Stages: 2, Threads: 256}},
		{kernels.GemmShape{M: 200, N: 136, K: 96, DType: tl.F16, OutDType: tl.F32, TransA: true, TransB: true}, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 256}},
		{kernels.GemmShape{M: 128, N: 96, K: 64, DType: tl.F16, OutDType: tl.F16, TransB: true}, kernels.GemmConfig{BM: 64, BN: 32, BK: 32, Stages: 1, Threads: 256, Policy: ir.FullRow}},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d_%s_ta%v_tb%v", tc.s.M, tc.s.N, tc.s.K, tc.s.DType, tc.s.TransA, tc.s.TransB), func(t *testing.T) {
			fn, err := kernels.Gemm(tc.s, tc.c).Build(cudagen.Limits("gfx942"))
			if err != nil {
				t.Fatal(err)
			}
			k := amdKernel(t, dir, fn)
			if k.Instr.MFMA == 0 || k.Spills() > 0 || k.ScratchBytes > 0 {
				t.Errorf("%s", k)
			}
			t.Log(k)
		})
	}
}

// FlashAttention, the same kernel source as for NVIDIA, compiles for
// gfx942 with its default AMD config: both multiplies on MFMA (S computed
// transposed, so that P feeds P·V from registers), no spills, no scratch;
// head dims 64, 128 and 256, causal with Sq ≠ Skv, GQA, both layouts.
func TestAMDAttentionCodeObject(t *testing.T) {
	dir := amdIncludeDir(t)
	for _, flags := range []map[string]string{
		{"dim": "128", "seq-q": "4096"},
		{"dim": "64", "batch": "2", "heads": "8", "heads-kv": "2", "seq-q": "300", "seq-kv": "517", "causal": "true", "layout": "bshd", "dtype": "f16"},
		{"dim": "256", "heads": "2", "heads-kv": "1", "seq-q": "200", "causal": "true"},
	} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			k := amdKernel(t, dir, libraryPrograms(t, "flash-attention", flags, "gfx942", "")[0])
			if k.Instr.MFMA == 0 || k.Spills() > 0 || k.ScratchBytes > 0 {
				t.Errorf("%s", k)
			}
			lo, hi := k.MFMABusy(16)
			if k.Loop.MFMA == 0 {
				t.Errorf("no MFMA in the hot loop: %+v", k.Loop)
			}
			t.Logf("hot loop: %d instructions, %d MFMA, %d VALU, %d ds_read, %d ds_write; matrix cores busy %.0f-%.0f%% of a SIMD's cycles at one wave", k.Loop.Total, k.Loop.MFMA, k.Loop.VALU, k.Loop.LDSRead, k.Loop.LDSWrite, 100*lo, 100*hi)
			t.Log(k)
		})
	}
}

// MLA decoding with its AMD config (16 query rows over two waves, each
// 64-token cache block taken in halves to fit 64 KiB of LDS) compiles to
// MFMA code without spills or scratch, single and split with its combine.
func TestAMDMLACodeObject(t *testing.T) {
	dir := amdIncludeDir(t)
	for _, flags := range []map[string]string{
		{"heads": "128", "seq-q": "2"},
		{"heads": "16", "splits": "2"},
	} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			fns := libraryPrograms(t, "mla-decode", flags, "gfx942", "")
			k := amdKernel(t, dir, fns[0])
			if k.Instr.MFMA == 0 || k.Spills() > 0 || k.ScratchBytes > 0 {
				t.Errorf("%s", k)
			}
			t.Log(k)
			for _, fn := range fns[1:] { // the combine: no matrix multiply
				if k := amdKernel(t, dir, fn); k.Spills() > 0 {
					t.Errorf("%s", k)
				}
			}
		})
	}
}

// amdKernel compiles fn for gfx942 and reports its kernel, checking that
// its registers leave the occupancy its LDS allows.
func amdKernel(t *testing.T, include string, fn *ir.Func) codeobj.Kernel {
	t.Helper()
	k, p := amdCodeObject(t, include, fn)
	// The occupancy the config intends is the one its LDS allows: the
	// registers clang allotted must not lower it.
	l, _ := codeobj.LimitsFor("gfx942")
	o := k.OccupancyAt(p.Threads, p.Shared)
	byRegs := l.SIMDsPerCU * min(o.VGPRWaves, o.SGPRWaves) / o.WavesPerWorkgroup
	bySlots := l.SIMDsPerCU * l.MaxWavesPerSIMD / o.WavesPerWorkgroup
	if want := min(o.LDSWorkgroups, bySlots); o.LDSWorkgroups > 0 && byRegs < want {
		t.Errorf("%s: registers allow %d workgroups a CU, its %d bytes of LDS and the wave slots %d: %s", p.Name, byRegs, p.Shared, want, k)
	}
	return k
}

// amdCodeObject compiles fn for gfx942 with clang and reads its kernel's
// resources.
func amdCodeObject(t *testing.T, include string, fn *ir.Func) (codeobj.Kernel, *cudagen.Program) {
	t.Helper()
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := codeobj.Build(p.Source, codeobj.Options{Includes: []string{include}, Flags: []string{"-Wno-parentheses-equality"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := obj.Report()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := r.Kernel(p.Name)
	if !ok {
		t.Fatalf("no kernel %s in %s", p.Name, r)
	}
	return k, p
}

// amdIncludeDir is a temporary folder holding the gfx942 device header,
// for clang's include path.
func amdIncludeDir(t *testing.T) string {
	t.Helper()
	name, text := cudagen.Header("gfx942")
	dir := t.TempDir()
	writeTemp(t, dir, name, text)
	return dir
}

func writeTemp(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FlashAttention for gfx942, emulated on the CPU (backend/hip/emu: 64-lane
// waves, MFMA from AMD's lane tables, independently of package layout),
// matches float64 at odd shapes: S computed transposed and fed to P·V from
// registers, the row statistics on the transposed layout, masks at ragged
// edges, GQA, both layouts, f16 and bf16, head dims 64, 128 and 256. With
// the emulator's accumulator lanes deliberately transposed it fails.
func TestAMDAttentionEmulated(t *testing.T) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []kernels.AttnShape{
		{B: 1, H: 2, HKV: 2, Sq: 100, Skv: 130, Dqk: 64, Dv: 64, DType: ir.BF16},
		{B: 2, H: 4, HKV: 2, Sq: 70, Skv: 93, Dqk: 64, Dv: 64, Causal: true, BSHD: true, DType: ir.F16},
		{B: 1, H: 1, HKV: 1, Sq: 65, Skv: 65, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16},
		{B: 1, H: 2, HKV: 1, Sq: 40, Skv: 50, Dqk: 256, Dv: 256, DType: ir.BF16},
	} {
		t.Run(fmt.Sprintf("d%d_sq%d_skv%d_causal%v_bshd%v_%s", s.Dqk, s.Sq, s.Skv, s.Causal, s.BSHD, s.DType), func(t *testing.T) {
			flags := map[string]string{"dim": fmt.Sprint(s.Dqk)}
			p, err := e.Problem(flags)
			if err != nil {
				t.Fatal(err)
			}
			c := kernels.GPUConfigFor(p, "gfx942").(kernels.AttnConfig)
			fn, err := kernels.FlashAttention(s, c).Build(cudagen.Limits("gfx942"))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
			if err != nil {
				t.Fatal(err)
			}
			args := kernels.AttentionInputs(s, 5)
			for i, prm := range fn.Params {
				if prm.Output {
					for j := range args[i].Data {
						args[i].Data[j] = math.NaN()
					}
				}
			}
			// As the hardware, then with the accumulator's lanes transposed:
			// a wrong MFMA layout must show.
			for _, wrong := range []bool{false, true} {
				opt := emu.Options{}
				if wrong {
					opt.Defines = []string{"TL_EMU_WRONG_MFMA"}
				}
				if err := emu.RunWith(prog, args, opt); err != nil {
					t.Fatal(err)
				}
				var do, dl ref.Diff
				kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
				ok := do.Bad == 0 && do.Rel() <= kernels.Tolerance(s.DType) && dl.Rel() <= kernels.LSETolerance
				if ok == wrong {
					t.Errorf("config %s, wrong MFMA %v: O: %s; LSE: %s", kernels.ConfigFields(c), wrong, &do, &dl)
				}
			}
		})
	}
}

// The output roundings (toward zero, ties away) on gfx942, emulated: O
// stays within its dtype's tolerance of float64, and toward zero differs
// from the nearest-even run's output (ties away differs only on exact
// ties, too rare in random data to count on).
func TestAMDAttentionRoundingEmulated(t *testing.T) {
	s := kernels.AttnShape{B: 1, H: 2, HKV: 1, Sq: 70, Skv: 90, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16}
	fn, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 256}).Build(cudagen.Limits("gfx942"))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string][]float64{}
	for _, mode := range []string{"rn", "rz", "ra"} {
		prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942", Rounding: mode})
		if err != nil {
			t.Fatal(err)
		}
		args := kernels.AttentionInputs(s, 9)
		o := 3 // Q, K, V, then O
		for j := range args[o].Data {
			args[o].Data[j] = math.NaN()
		}
		if err := emu.Run(prog, args); err != nil {
			t.Fatal(err)
		}
		var do, dl ref.Diff
		kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
		if do.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
			t.Errorf("%s: O: %s; LSE: %s", mode, &do, &dl)
		}
		outs[mode] = slices.Clone(args[o].Data)
	}
	if slices.Equal(outs["rz"], outs["rn"]) {
		t.Errorf("rz gave the nearest-even output exactly")
	}
}

// The tail-KV split for gfx942 (the split kernel with its AMD config, then
// the combine), emulated as a chain, matches float64: every output of
// either step is poisoned before the first runs.
func TestAMDTailSplitEmulated(t *testing.T) {
	for _, tc := range []struct {
		s           kernels.AttnShape
		sms, splits int
	}{
		{kernels.AttnShape{B: 1, H: 3, HKV: 3, Sq: 200, Skv: 300, Dqk: 64, Dv: 64, DType: ir.BF16}, 2, 2},
		{kernels.AttnShape{B: 1, H: 2, HKV: 1, Sq: 150, Skv: 260, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.F16}, 1, 3},
	} {
		t.Run(fmt.Sprintf("d%d_causal%v_sms%d_splits%d", tc.s.Dqk, tc.s.Causal, tc.sms, tc.splits), func(t *testing.T) {
			c := kernels.AttnConfig{M: 128, N: 32, Stages: 1, Threads: 256}
			steps, err := kernels.TailSplitSteps(tc.s, c, tc.sms, tc.splits)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) < 2 {
				t.Fatalf("%d steps: not split", len(steps))
			}
			args := kernels.TailSplitInputs(tc.s, c, tc.sms, tc.splits, 13)
			var progs []*cudagen.Program
			for _, st := range steps {
				fn, err := st.Func.Build(cudagen.Limits("gfx942"))
				if err != nil {
					t.Fatal(err)
				}
				for i, prm := range fn.Params {
					if prm.Output {
						for j := range args[st.Args[i]].Data {
							args[st.Args[i]].Data[j] = math.NaN()
						}
					}
				}
				p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
				if err != nil {
					t.Fatal(err)
				}
				progs = append(progs, p)
			}
			for i, st := range steps {
				sub := make([]*tensor.Tensor, len(st.Args))
				for j, a := range st.Args {
					sub[j] = args[a]
				}
				if err := emu.Run(progs[i], sub); err != nil {
					t.Fatal(err)
				}
			}
			var do, dl ref.Diff
			kernels.CheckAttentionRows(tc.s, args, kernels.AllRows(tc.s), &do, &dl)
			if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(tc.s.DType) || dl.Rel() > kernels.LSETolerance {
				t.Errorf("O: %s; LSE: %s", &do, &dl)
			}
		})
	}
}

// A Gemm MFMA cannot take (a block of 32 threads: not a whole wave) falls
// back to dot products a thread on gfx942, and emulated it gives what the
// interpreter gives, transposes included.
func TestAMDScalarGemmEmulated(t *testing.T) {
	for _, s := range []kernels.GemmShape{
		{M: 40, N: 24, K: 20, DType: tl.BF16, OutDType: tl.F32},
		{M: 33, N: 17, K: 48, DType: tl.F16, OutDType: tl.F32, TransA: true, TransB: true},
	} {
		fn, err := kernels.Gemm(s, kernels.GemmConfig{BM: 16, BN: 16, BK: 16, Stages: 1, Threads: 32}).Build(cudagen.Limits("gfx942"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Source, "float dot = ") {
			t.Fatalf("%+v: not the scalar fallback:\n%s", s, p.Source)
		}
		var a, b *tensor.Tensor
		if s.TransA {
			a = tensor.New(s.DType, s.K, s.M).Rand(1, 1)
		} else {
			a = tensor.New(s.DType, s.M, s.K).Rand(1, 1)
		}
		if s.TransB {
			b = tensor.New(s.DType, s.N, s.K).Rand(2, 1)
		} else {
			b = tensor.New(s.DType, s.K, s.N).Rand(2, 1)
		}
		want, got := tensor.New(tl.F32, s.M, s.N), tensor.New(tl.F32, s.M, s.N)
		if err := interp.Run(fn, []*tensor.Tensor{a, b, want}); err != nil {
			t.Fatal(err)
		}
		for i := range got.Data {
			got.Data[i] = math.NaN()
		}
		if err := emu.Run(p, []*tensor.Tensor{a, b, got}); err != nil {
			t.Fatal(err)
		}
		var d ref.Diff
		for i := range want.Data {
			d.Add(got.Data[i], want.Data[i])
		}
		if d.Bad > 0 || d.Rel() > 1e-5 {
			t.Errorf("%+v: %s", s, &d)
		}
	}
}

// FlashAttention's backward with its AMD config compiles for gfx942: the
// main program's five multiplies on MFMA without spills or scratch at
// head dims 64 and 128 (and at 256, its 16×32 tiles), causal and GQA;
// Delta's and dQ's programs without spills. Untuned: the main program's
// registers may hold it under the occupancy its LDS allows (one wave a
// SIMD at d64, where the LDS would allow two).
func TestAMDAttentionBwdCodeObject(t *testing.T) {
	dir := amdIncludeDir(t)
	for _, flags := range []map[string]string{
		{"dim": "128", "seq-q": "1024"},
		{"dim": "64", "heads": "8", "heads-kv": "2", "seq-q": "300", "seq-kv": "517", "causal": "true", "layout": "bshd"},
		{"dim": "256", "seq-q": "200", "causal": "true"},
	} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			for i, fn := range libraryPrograms(t, "flash-attention-bwd", flags, "gfx942", "") {
				k, _ := amdCodeObject(t, dir, fn)
				if k.Spills() > 0 || k.ScratchBytes > 0 || i == 1 && k.Instr.MFMA == 0 {
					t.Errorf("program %d: %s", i+1, k)
				}
				t.Log(k)
			}
		})
	}
}
