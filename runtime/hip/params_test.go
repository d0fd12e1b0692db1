package hip

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

// at reads the n bytes kernelParams[i] points to, as the runtime would.
func at(p *paramBlock, i, n int) []byte {
	pp := unsafe.Slice((*unsafe.Pointer)(p.Params()), p.Len())
	return unsafe.Slice((*byte)(pp[i]), n)
}

func TestPackParams(t *testing.T) {
	vec := Raw{Data: make([]byte, 16), Align: 16} // a float4 by value
	for i := range vec.Data {
		vec.Data[i] = byte(i + 1)
	}
	args := []any{
		int32(-7),                            // 0 @0
		Buffer{Ptr: 0xdead00},                // 1 @8
		float32(1.5),                         // 2 @16
		vec,                                  // 3 @32
		uint64(1 << 40),                      // 4 @48
		int16(-2),                            // 5 @56
		uint8(9),                             // 6 @58
		&Buffer{Ptr: 0xbeef00},               // 7 @64
		float64(math.Pi),                     // 8 @72
		Raw{Data: []byte{1, 2, 3}, Align: 4}, // 9 @80
		true,                                 // 10 @83
		int64(-1 << 40),                      // 11 @88
		uint32(7),                            // 12 @96
	}
	p, err := packParams(args)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()

	wantOffs := []int{0, 8, 16, 32, 48, 56, 58, 64, 72, 80, 83, 88, 96}
	for i, w := range wantOffs {
		if p.Offset(i) != w {
			t.Errorf("arg %d at offset %d, want %d", i, p.Offset(i), w)
		}
	}
	if a := uintptr(p.Start()); a%paramAlign != 0 {
		t.Errorf("block at %#x, not %d-byte aligned", a, paramAlign)
	}
	if a := uintptr(unsafe.Pointer(&at(p, 3, 1)[0])); a%16 != 0 {
		t.Errorf("16-byte Raw at %#x, not 16-byte aligned", a)
	}
	if string(at(p, 3, 16)) != string(vec.Data) {
		t.Errorf("Raw float4 bytes differ")
	}
	if v := *(*int32)(unsafe.Pointer(&at(p, 0, 4)[0])); v != -7 {
		t.Errorf("int32 = %d", v)
	}
	if v := *(*uint64)(unsafe.Pointer(&at(p, 1, 8)[0])); v != 0xdead00 {
		t.Errorf("Buffer = %#x", v)
	}
	if v := *(*float32)(unsafe.Pointer(&at(p, 2, 4)[0])); v != 1.5 {
		t.Errorf("float32 = %v", v)
	}
	if v := *(*uint64)(unsafe.Pointer(&at(p, 4, 8)[0])); v != 1<<40 {
		t.Errorf("uint64 = %#x", v)
	}
	if v := *(*int16)(unsafe.Pointer(&at(p, 5, 2)[0])); v != -2 {
		t.Errorf("int16 = %d", v)
	}
	if v := at(p, 6, 1)[0]; v != 9 {
		t.Errorf("uint8 = %d", v)
	}
	if v := *(*uint64)(unsafe.Pointer(&at(p, 7, 8)[0])); v != 0xbeef00 {
		t.Errorf("*Buffer = %#x", v)
	}
	if v := *(*float64)(unsafe.Pointer(&at(p, 8, 8)[0])); v != math.Pi {
		t.Errorf("float64 = %v", v)
	}
	if v := at(p, 9, 3); string(v) != "\x01\x02\x03" {
		t.Errorf("Raw = %v", v)
	}
	if v := at(p, 10, 1)[0]; v != 1 {
		t.Errorf("bool = %d", v)
	}
	if v := *(*int64)(unsafe.Pointer(&at(p, 11, 8)[0])); v != -1<<40 {
		t.Errorf("int64 = %d", v)
	}
	if v := *(*uint32)(unsafe.Pointer(&at(p, 12, 4)[0])); v != 7 {
		t.Errorf("uint32 = %d", v)
	}
}

func TestPackParamsEmpty(t *testing.T) {
	p, err := packParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if p.Params() != nil {
		t.Error("no arguments should give a nil kernelParams")
	}
}

func TestPackParamsRejects(t *testing.T) {
	tests := []struct {
		arg  any
		want string
	}{
		{42, "ambiguous, pass int32 or int64"},
		{uint(42), "ambiguous"},
		{"str", "unsupported type string"},
		{[]float32{1}, "unsupported type []float32"},
		{Raw{Data: []byte{1}, Align: 3}, "not a power of two"},
		{Raw{Data: []byte{1}, Align: 32}, "not a power of two <= 16"},
	}
	for _, tt := range tests {
		_, err := packParams([]any{int32(1), tt.arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "argument 1") {
			t.Errorf("%T: got %v, want an error about argument 1 containing %q", tt.arg, err, tt.want)
		}
	}
}

func TestLaunchDims(t *testing.T) {
	dims, err := launchDims([3]int{304, 2, 1}, [3]int{256, 1, 1}, 4096)
	if err != nil || dims != [7]uint32{304, 2, 1, 256, 1, 1, 4096} {
		t.Errorf("launchDims = %v, %v", dims, err)
	}
	bad := []struct {
		grid, block [3]int
		lds         int
		want        string
	}{
		{[3]int{0, 1, 1}, [3]int{64, 1, 1}, 0, "positive"},
		{[3]int{1, 1, 1}, [3]int{64, -1, 1}, 0, "positive"},
		{[3]int{1, 1, 1}, [3]int{64, 1, 1}, -4, "positive"},
		{[3]int{1 << 23, 1, 1}, [3]int{1024, 1, 1}, 0, "fewer than 2^32"},
		{[3]int{1, 1, 1 << 22}, [3]int{1, 1, 1024}, 0, "dimension 2"},
	}
	if math.MaxInt > math.MaxUint32 {
		bad = append(bad, struct {
			grid, block [3]int
			lds         int
			want        string
		}{[3]int{math.MaxInt, 1, 1}, [3]int{64, 1, 1}, 0, "fit 32 bits"})
	}
	for _, tt := range bad {
		if _, err := launchDims(tt.grid, tt.block, tt.lds); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("grid %v block %v lds %d: got %v, want %q", tt.grid, tt.block, tt.lds, err, tt.want)
		}
	}
}
