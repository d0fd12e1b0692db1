package cuda

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// With Options.TMA on sm_90a, FlashAttention's K and V prefetches become
// TMA loads (one per 64-column panel) completing on the ring's mbarriers;
// without it, or on sm_80, nothing changes.
func TestEmitTMA(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a", TMA: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.TMA) != 2 || p.TMA[0].Param != 1 || p.TMA[1].Param != 2 || !slices.Equal(p.TMA[0].Box, []uint32{64, 64, 1, 1}) {
		t.Errorf("tensor maps %+v", p.TMA)
	}
	src := p.Source
	for _, want := range []string{"const __grid_constant__ tl::TensorMap tm0, const __grid_constant__ tl::TensorMap tm1)",
		"tl::mbar_init(", "tl::mbar_arrive_expect_tx(", "tl::mbar_wait(", "&tm0, 0 + 64, (k0 * 64)"} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %q", want)
		}
	}
	// Two panels each of K and V, in the prologue and in the loop.
	if n := strings.Count(src, "tl::tma_load_4d("); n != 8 {
		t.Errorf("%d TMA loads, want 8", n)
	}
	// 16 KB per K or V tile, expected on the slot's barrier per iteration.
	if !strings.Contains(src, ", 32768);") {
		t.Error("expect_tx is not K's and V's bytes")
	}
	plain, err := Compile(f, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.TMA) != 0 || strings.Contains(plain.Source, "tma_load") {
		t.Error("TMA without the option")
	}
	if plain.Shared+8*2 != p.Shared {
		t.Errorf("shared %d with TMA, %d without: want the barriers' 16 bytes more", p.Shared, plain.Shared)
	}
	old, err := Compile(f, Options{Arch: "sm_80", TMA: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.TMA) != 0 || strings.Contains(old.Source, "tma_load") {
		t.Error("TMA on sm_80")
	}
}

// The tensor maps describe the tensors as TMA counts them: dims and byte
// strides innermost first, one 64-column panel of the tile's rows a box,
// for BSHD (strides out of order) and BHSD alike, and they pass the
// driver's rules (checked here, before any driver call).
func TestTiledSpec(t *testing.T) {
	for _, bshd := range []bool{true, false} {
		s := kernels.AttnShape{B: 2, H: 8, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 64, BSHD: bshd, DType: ir.F16}
		f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90a", TMA: true})
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([]drv.Buffer, len(f.Params))
		for i, prm := range f.Params {
			n := 1
			for _, d := range prm.Shape {
				v, _ := ir.ConstInt(d)
				n *= int(v)
			}
			bufs[i] = drv.Buffer{Ptr: uint64(1+i) << 20, Size: n * prm.DType.Bytes()}
		}
		for i, want := range []struct {
			dims, strides []uint64
		}{
			{[]uint64{128, 500, 2, 2}, map[bool][]uint64{true: {2 * 128 * 2, 128 * 2, 500 * 2 * 128 * 2}, false: {128 * 2, 500 * 128 * 2, 2 * 500 * 128 * 2}}[bshd]}, // K
			{[]uint64{64, 500, 2, 2}, map[bool][]uint64{true: {2 * 64 * 2, 64 * 2, 500 * 2 * 64 * 2}, false: {64 * 2, 500 * 64 * 2, 2 * 500 * 64 * 2}}[bshd]},        // V
		} {
			spec, err := tiledSpec(p, i, bufs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(spec.Dims, want.dims) || !slices.Equal(spec.Strides, want.strides) || !slices.Equal(spec.Box, []uint32{64, 64, 1, 1}) ||
				spec.DType != drv.TensorFloat16 || spec.Swizzle != drv.Swizzle128B {
				t.Errorf("bshd %v map %d: %+v, want dims %v strides %v", bshd, i, spec, want.dims, want.strides)
			}
			if err := spec.Validate(); err != nil {
				t.Errorf("bshd %v map %d: %v", bshd, i, err)
			}
		}
	}
}

// Warp specialization on top of TMA: a producer warpgroup after the
// program's threads issues the loads; the consumers wait on full barriers,
// free slots on empty ones, and meet on a named barrier only.
func TestEmitWarpSpecialized(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	for _, tc := range []struct {
		c       kernels.AttnConfig
		threads int
		regs    bool
	}{
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, 384, true},
		{kernels.AttnConfig{M: 64, N: 64, Stages: 3, Threads: 128}, 256, false},
	} {
		f, err := kernels.FlashAttention(s, tc.c).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90a", TMA: true, WarpSpecialize: true})
		if err != nil {
			t.Fatal(err)
		}
		src := p.Source
		T := tc.c.Threads
		if p.Threads != tc.threads || !strings.Contains(src, fmt.Sprintf("__launch_bounds__(%d, 1)", tc.threads)) {
			t.Errorf("%+v: %d threads", tc.c, p.Threads)
		}
		for _, want := range []string{fmt.Sprintf("if (tid >= %d)", T), fmt.Sprintf("if (tid == %d)", T), "return;",
			"tl::mbar_arrive(", fmt.Sprintf("tl::bar_sync(1, %d);", T), ", " + fmt.Sprint(T) + ");\n"} {
			if !strings.Contains(src, want) {
				t.Errorf("%+v: source lacks %q", tc.c, want)
			}
		}
		if n := strings.Count(src, "__syncthreads();"); n != 1 { // the barriers' initialization, before the split
			t.Errorf("%+v: %d __syncthreads, want 1", tc.c, n)
		}
		if got := strings.Contains(src, "setmaxnreg_inc<232>") && strings.Contains(src, "setmaxnreg_dec<40>"); got != tc.regs {
			t.Errorf("%+v: setmaxnreg %v, want %v", tc.c, got, tc.regs)
		}
		// The producer issues each iteration once; the consumers none.
		if n := strings.Count(src, "tl::mbar_arrive_expect_tx("); n != 1 {
			t.Errorf("%+v: %d expect_tx, want 1", tc.c, n)
		}
	}
	// MLA's loop bound reads the cache length the consumers load: no producer.
	m := kernels.MLAShape{Hq: 32, Sq: 2, DType: ir.BF16}
	f, err := kernels.MLADecode(m, kernels.MLAConfig{M: 32, Stages: 2, Threads: 128}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a", TMA: true, WarpSpecialize: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Threads != 128 || len(p.TMA) != 1 {
		t.Errorf("MLA: %d threads, %d tensor maps; want TMA without a producer", p.Threads, len(p.TMA))
	}
}
