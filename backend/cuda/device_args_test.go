package cuda

import (
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// Device tensors are checked before anything reaches the driver: one per
// parameter, and each buffer big enough for its type and shape.
func TestDeviceHeaders(t *testing.T) {
	f := &ir.Func{Name: "k", Params: []*ir.Buffer{{Name: "x"}, {Name: "y"}}}
	buf := drv.Buffer{Ptr: 0x1000, Size: 2 * 3 * 4}
	ok := DeviceTensor{Buf: buf, DType: ir.F32, Shape: []int{2, 3}}
	cases := []struct {
		args []DeviceTensor
		want string
	}{
		{[]DeviceTensor{ok}, "1 device tensors for 2 parameters"},
		{[]DeviceTensor{ok, {Buf: buf, DType: ir.F32, Shape: []int{2, 4}}}, "device tensor 1 (f32 [2 4]) needs 32 bytes; its buffer has 24"},
		{[]DeviceTensor{ok, {DType: ir.F16, Shape: []int{1}}}, "its buffer has 0 at 0x0"},
		{[]DeviceTensor{ok, {Buf: buf, DType: ir.F16, Shape: []int{-1}}}, "has shape [-1]"},
		{[]DeviceTensor{ok, {Buf: buf, DType: ir.F16, Shape: []int{2, 2}, Strides: []int{1}}}, "strides [1]"},
		// Strided: element (1, 2) sits at 1·8 + 2 = 10, so 11 f32s.
		{[]DeviceTensor{ok, {Buf: buf, DType: ir.F32, Shape: []int{2, 3}, Strides: []int{8, 1}}}, "needs 44 bytes"},
		// A view 3 bf16 elements into a buffer.
		{[]DeviceTensor{ok, {Buf: drv.Buffer{Ptr: 0x1006, Size: 64}, DType: ir.BF16, Shape: []int{4}}}, "starts at 0x1006, not on 16 bytes"},
	}
	for _, c := range cases {
		if _, _, err := deviceHeaders(f, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	hdrs, bufs, err := deviceHeaders(f, []DeviceTensor{ok, {Buf: buf, DType: ir.BF16, Shape: []int{3, 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hdrs[1].Shape, []int{3, 4}) || !slices.Equal(hdrs[1].Strides, []int{4, 1}) || hdrs[1].Data != nil || bufs[1] != buf {
		t.Errorf("header %+v, buffer %+v", hdrs[1], bufs[1])
	}
}
