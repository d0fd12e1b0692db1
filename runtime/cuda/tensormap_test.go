package cuda

import (
	"strings"
	"testing"
)

// tiledBase is a valid spec: a dense 300-row × 200-col bf16 matrix, boxes of
// 64×64 with the 128B swizzle (64 bf16 = 128 bytes, exactly the span).
func tiledBase() TiledSpec {
	return TiledSpec{
		DType:   TensorBFloat16,
		Global:  Buffer{Ptr: 0x7f0000010000, Size: 300 * 400},
		Dims:    []uint64{200, 300},
		Strides: []uint64{400},
		Box:     []uint32{64, 64},
		Swizzle: Swizzle128B,
	}
}

func TestTiledSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *TiledSpec)
		want string // "" = valid; otherwise a substring of the error
	}{
		{"base", func(s *TiledSpec) {}, ""},
		{"rank 1", func(s *TiledSpec) { s.Dims, s.Strides, s.Box = []uint64{1000}, nil, []uint32{64} }, ""},
		{"rank 5", func(s *TiledSpec) {
			s.Dims, s.Strides, s.Box = []uint64{64, 2, 3, 4, 5}, []uint64{128, 256, 768, 3072}, []uint32{64, 2, 3, 4, 5}
			s.Global.Size = 5 * 3072
		}, ""},
		{"offset", func(s *TiledSpec) { s.Offset = 256; s.Global.Size += 256 }, ""},
		{"padded rows", func(s *TiledSpec) { s.Dims[0], s.Strides[0] = 300, 608; s.Global.Size = 608 * 300 }, ""},
		{"no swizzle, 256 wide", func(s *TiledSpec) { s.Swizzle, s.Box[0] = SwizzleNone, 256 }, ""},
		{"64B swizzle", func(s *TiledSpec) { s.Swizzle, s.Box[0] = Swizzle64B, 32 }, ""},
		{"32B swizzle", func(s *TiledSpec) { s.Swizzle, s.Box[0] = Swizzle32B, 16 }, ""},
		{"f32", func(s *TiledSpec) { s.DType, s.Dims[0], s.Box[0] = TensorFloat32, 100, 32 }, ""},
		{"u8", func(s *TiledSpec) { s.DType, s.Dims[0], s.Box[0] = TensorUint8, 400, 128 }, ""},
		{"f16 NaN fill", func(s *TiledSpec) { s.DType, s.OOB = TensorFloat16, OOBFillNaNRequestZeroFMA }, ""},
		{"elem strides", func(s *TiledSpec) { s.ElemStrides = []uint32{1, 8} }, ""},
		{"L2 256B", func(s *TiledSpec) { s.L2 = L2Promotion256B }, ""},
		{"box past tensor", func(s *TiledSpec) { s.Dims = []uint64{8, 3}; s.Box = []uint32{64, 64} }, ""},
		// Strides need not grow with the dim index: a [8][4][64] array
		// seen as (64, 8, 4) is a permuted view of the same bytes.
		{"permuted view", func(s *TiledSpec) {
			s.Dims, s.Strides, s.Box = []uint64{64, 8, 4}, []uint64{512, 128}, []uint32{64, 8, 4}
			s.Global.Size = 4096
		}, ""},

		{"rank 0", func(s *TiledSpec) { s.Dims = nil }, "rank 0"},
		{"rank 6", func(s *TiledSpec) { s.Dims = make([]uint64, 6) }, "rank 6"},
		{"dtype 13", func(s *TiledSpec) { s.DType = 13 }, "unknown data type 13"},
		{"dtype -1", func(s *TiledSpec) { s.DType = -1 }, "unknown data type -1"},
		{"stride count", func(s *TiledSpec) { s.Strides = []uint64{2, 400} }, "2 strides for rank 2, want 1"},
		{"box count", func(s *TiledSpec) { s.Box = []uint32{64} }, "1 box dims for rank 2"},
		{"elem count", func(s *TiledSpec) { s.ElemStrides = []uint32{1} }, "1 element strides for rank 2"},
		{"nil buffer", func(s *TiledSpec) { s.Global = Buffer{} }, "global buffer is nil"},
		{"negative offset", func(s *TiledSpec) { s.Offset = -16 }, "offset -16 outside"},
		{"offset past end", func(s *TiledSpec) { s.Offset = s.Global.Size }, "outside the 120000-byte"},
		{"offset misaligned", func(s *TiledSpec) { s.Offset = 8; s.Global.Size += 8 }, "not 16-byte aligned"},
		{"buffer misaligned", func(s *TiledSpec) { s.Global.Ptr += 2 }, "not 16-byte aligned"},
		{"dim 0", func(s *TiledSpec) { s.Dims[1] = 0 }, "dim 1 is 0"},
		{"dim 2^32+1", func(s *TiledSpec) { s.Dims[1] = 1<<32 + 1 }, "want 1..2^32"},
		{"dense 300 bf16", func(s *TiledSpec) { s.Dims[0], s.Strides[0] = 300, 600 }, "stride of dim 1 is 600 bytes, want a multiple of 16"},
		{"stride 2^40", func(s *TiledSpec) { s.Strides[0] = 1 << 40 }, "less than 2^40"},
		{"box 0", func(s *TiledSpec) { s.Box[1] = 0 }, "box dim 1 is 0"},
		{"box 257", func(s *TiledSpec) { s.Swizzle, s.Box[1] = SwizzleNone, 257 }, "box dim 1 is 257, want 1..256"},
		{"box row 24 bytes", func(s *TiledSpec) { s.Swizzle, s.Box[0] = SwizzleNone, 12 }, "= 24 bytes, want a multiple of 16"},
		{"128B span", func(s *TiledSpec) { s.Box[0] = 128 }, "256 bytes (128 bfloat16), more than the 128B swizzle span"},
		{"64B span", func(s *TiledSpec) { s.Swizzle = Swizzle64B }, "more than the 64B swizzle span"},
		{"32B span", func(s *TiledSpec) { s.Swizzle, s.Box[0] = Swizzle32B, 32 }, "64 bytes (32 bfloat16), more than the 32B swizzle span"},
		{"f32 128B span", func(s *TiledSpec) { s.DType, s.Dims[0] = TensorFloat32, 100 }, "(64 float32), more than the 128B"},
		{"elem stride 0", func(s *TiledSpec) { s.ElemStrides = []uint32{1, 0} }, "element stride 1 is 0"},
		{"elem stride 9", func(s *TiledSpec) { s.ElemStrides = []uint32{9, 1} }, "element stride 0 is 9, want 1..8"},
		{"swizzle 4", func(s *TiledSpec) { s.Swizzle = 4 }, "unknown swizzle 4"},
		{"L2 4", func(s *TiledSpec) { s.L2 = 4 }, "unknown L2 promotion 4"},
		{"OOB 2", func(s *TiledSpec) { s.OOB = 2 }, "unknown out-of-bounds fill 2"},
		{"u8 NaN fill", func(s *TiledSpec) { s.DType, s.Box[0], s.OOB = TensorUint8, 128, OOBFillNaNRequestZeroFMA }, "needs a floating-point type, not uint8"},
		{"buffer short", func(s *TiledSpec) { s.Global.Size-- }, "tensor reaches 120000 bytes past offset 0, beyond the 119999-byte"},
		{"offset pushes past end", func(s *TiledSpec) { s.Offset = 16 }, "past offset 16, beyond"},
		{"extent overflow", func(s *TiledSpec) {
			s.Dims = []uint64{8, 1 << 32, 1 << 32}
			s.Strides = []uint64{1<<40 - 16, 1<<40 - 16}
			s.Box = []uint32{64, 1, 1}
		}, "overflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tiledBase()
			tt.edit(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("valid spec %v rejected: %v", s, err)
			case tt.want != "" && err == nil:
				t.Errorf("invalid spec %v accepted, want an error containing %q", s, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			// EncodeTiled validates before it needs a device or driver.
			var d *Device
			_, err = d.EncodeTiled(s)
			if err == nil || !strings.HasPrefix(err.Error(), "cuda: EncodeTiled: ") {
				t.Errorf("EncodeTiled on a nil device: got %v", err)
			}
			if tt.want != "" && err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EncodeTiled error %q lacks %q", err, tt.want)
			}
			if tt.want == "" && err != nil && !strings.Contains(err.Error(), "nil device") {
				t.Errorf("EncodeTiled of a valid spec on a nil device: %v", err)
			}
		})
	}
}

func TestTiledSpecBoxBytes(t *testing.T) {
	s := tiledBase()
	if n := s.BoxBytes(); n != 64*64*2 {
		t.Errorf("BoxBytes = %d, want %d", n, 64*64*2)
	}
	s.ElemStrides = []uint32{4, 3} // dim 0 ignores its stride; ceil(64/3) rows
	if n := s.BoxBytes(); n != 64*22*2 {
		t.Errorf("BoxBytes with element strides = %d, want %d", n, 64*22*2)
	}
	s = tiledBase()
	s.DType, s.Dims, s.Strides, s.Box, s.Swizzle = TensorFloat32, []uint64{40, 20, 3, 5}, []uint64{160, 3200, 9600}, []uint32{32, 8, 2, 3}, Swizzle128B
	s.Global.Size = 5 * 9600
	if n := s.BoxBytes(); n != 32*8*2*3*4 {
		t.Errorf("4D BoxBytes = %d, want %d", n, 32*8*2*3*4)
	}
	s.Box[0] = 7
	if n := s.BoxBytes(); n != 0 {
		t.Errorf("BoxBytes of an invalid spec = %d, want 0", n)
	}
}

func TestTensorEnums(t *testing.T) {
	// The CUDA enum values, which the driver takes as plain ints.
	for _, c := range []struct {
		got, want int
		name      string
	}{
		{int(TensorUint8), 0, "UINT8"}, {int(TensorFloat16), 6, "FLOAT16"}, {int(TensorFloat32), 7, "FLOAT32"},
		{int(TensorBFloat16), 9, "BFLOAT16"}, {int(TensorTFloat32FTZ), 12, "TFLOAT32_FTZ"},
		{int(Swizzle32B), 1, "SWIZZLE_32B"}, {int(Swizzle128B), 3, "SWIZZLE_128B"},
		{int(L2Promotion128B), 2, "L2_PROMOTION_L2_128B"}, {int(OOBFillNaNRequestZeroFMA), 1, "NAN_REQUEST_ZERO_FMA"},
	} {
		if c.got != c.want {
			t.Errorf("CU_TENSOR_MAP_%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	sizes := map[TensorDataType]int{TensorUint8: 1, TensorFloat16: 2, TensorBFloat16: 2, TensorFloat32: 4,
		TensorFloat64: 8, TensorInt64: 8, TensorTFloat32: 4, 13: 0, -1: 0}
	for dt, n := range sizes {
		if dt.Size() != n {
			t.Errorf("%v.Size() = %d, want %d", dt, dt.Size(), n)
		}
	}
	s := tiledBase()
	if str := s.String(); !strings.Contains(str, "bfloat16 dims [200 300] strides [400] box [64 64]") ||
		!strings.Contains(str, "swizzle 128B") {
		t.Errorf("String() = %q", str)
	}
}
