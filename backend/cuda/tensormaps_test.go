package cuda

import (
	"slices"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	drv "github.com/tilego/tilego/runtime/cuda"
)

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
		p, err := cudagen.Compile(f, cudagen.Options{Arch: "sm_90a"})
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
