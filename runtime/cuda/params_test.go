package cuda

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// at reads the n bytes kernelParams[i] points to, as the driver would.
func at(p *paramBlock, i, n int) []byte {
	pp := unsafe.Slice((*unsafe.Pointer)(p.Params()), p.Len())
	return unsafe.Slice((*byte)(pp[i]), n)
}

func TestPackParams(t *testing.T) {
	var tm TensorMap
	for i := range tm {
		tm[i] = byte(i + 1)
	}
	args := []any{
		int32(-7),                            // 0 @0
		Buffer{Ptr: 0xdead00},                // 1 @8
		float32(1.5),                         // 2 @16
		tm,                                   // 3 @64
		uint64(1 << 40),                      // 4 @192
		int16(-2),                            // 5 @200
		uint8(9),                             // 6 @202
		&tm,                                  // 7 @256
		float64(math.Pi),                     // 8 @384
		Raw{Data: []byte{1, 2, 3}, Align: 4}, // 9 @392
		true,                                 // 10 @395
	}
	p, err := packParams(args)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()

	wantOffs := []int{0, 8, 16, 64, 192, 200, 202, 256, 384, 392, 395}
	for i, w := range wantOffs {
		if p.Offset(i) != w {
			t.Errorf("arg %d at offset %d, want %d", i, p.Offset(i), w)
		}
	}
	if a := uintptr(p.Start()); a%64 != 0 {
		t.Errorf("block at %#x, not 64-byte aligned", a)
	}
	for _, i := range []int{3, 7} {
		if a := uintptr(unsafe.Pointer(&at(p, i, 1)[0])); a%64 != 0 {
			t.Errorf("TensorMap arg %d at %#x, not 64-byte aligned", i, a)
		}
		if string(at(p, i, 128)) != string(tm[:]) {
			t.Errorf("TensorMap arg %d bytes differ", i)
		}
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
	if v := *(*float64)(unsafe.Pointer(&at(p, 8, 8)[0])); v != math.Pi {
		t.Errorf("float64 = %v", v)
	}
	if v := at(p, 9, 3); string(v) != "\x01\x02\x03" {
		t.Errorf("Raw = %v", v)
	}
	if v := at(p, 10, 1)[0]; v != 1 {
		t.Errorf("bool = %d", v)
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
		{Raw{Data: []byte{1}, Align: 128}, "not a power of two <= 64"},
	}
	for _, tt := range tests {
		_, err := packParams([]any{int32(1), tt.arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "argument 1") {
			t.Errorf("%T: got %v, want an error about argument 1 containing %q", tt.arg, err, tt.want)
		}
	}
}

func TestLaunchValidatesDims(t *testing.T) {
	fn := &Function{name: "k"} // never reaches the driver
	tests := []struct {
		grid, block [3]int
		smem        int
	}{
		{[3]int{0, 1, 1}, [3]int{32, 1, 1}, 0},
		{[3]int{1, 1, 1}, [3]int{32, -1, 1}, 0},
		{[3]int{1, 1, 1}, [3]int{32, 1, 1}, -4},
	}
	if math.MaxInt > math.MaxUint32 {
		tests = append(tests, struct {
			grid, block [3]int
			smem        int
		}{[3]int{math.MaxInt, 1, 1}, [3]int{32, 1, 1}, 0})
	}
	for _, tt := range tests {
		err := Launch(fn, tt.grid, tt.block, tt.smem, nil)
		if err == nil || !strings.Contains(err.Error(), `"k"`) {
			t.Errorf("grid %v block %v smem %d: got %v", tt.grid, tt.block, tt.smem, err)
		}
	}
}

// launchConfig and launchAttr match CUlaunchConfig and CUlaunchAttribute on
// 64-bit hosts: 56 and 72 bytes, the stream at 32, the attributes at 40,
// the attribute's value at 8.
func TestLaunchConfigLayout(t *testing.T) {
	var c launchConfig
	if s, st, at := unsafe.Sizeof(c), unsafe.Offsetof(c.stream), unsafe.Offsetof(c.attrs); s != 56 || st != 32 || at != 40 {
		t.Errorf("launchConfig: %d bytes, stream at %d, attrs at %d; want 56, 32, 40", s, st, at)
	}
	var a launchAttr
	if s, v := unsafe.Sizeof(a), unsafe.Offsetof(a.value); s != 72 || v != 8 {
		t.Errorf("launchAttr: %d bytes, value at %d; want 72, 8", s, v)
	}
}

// A launch's attributes: programmatic serialization where it may start
// early and the driver can, cooperative where asked (an error without
// cuLaunchKernelEx, rather than a launch in waves), each an int 1.
func TestLaunchAttrs(t *testing.T) {
	for _, tc := range []struct {
		opt    LaunchOptions
		haveEx bool
		want   []uint32
		err    bool
	}{
		{LaunchOptions{}, true, nil, false},
		{LaunchOptions{Early: true}, true, []uint32{attrProgrammaticSerialization}, false},
		{LaunchOptions{Early: true}, false, nil, false},
		{LaunchOptions{Cooperative: true}, true, []uint32{attrCooperative}, false},
		{LaunchOptions{Cooperative: true}, false, nil, true},
		{LaunchOptions{Early: true, Cooperative: true}, true, []uint32{attrProgrammaticSerialization, attrCooperative}, false},
	} {
		attrs, err := launchAttrs(tc.opt, tc.haveEx)
		if (err != nil) != tc.err {
			t.Errorf("%+v, ex %v: error %v, want one: %v", tc.opt, tc.haveEx, err, tc.err)
			continue
		}
		var ids []uint32
		for _, a := range attrs {
			ids = append(ids, a.id)
			if a.value[0] != 1 || a.value[1] != 0 {
				t.Errorf("%+v: attribute %d's value starts %v, want the int 1", tc.opt, a.id, a.value[:4])
			}
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%+v, ex %v: attributes %v, want %v", tc.opt, tc.haveEx, ids, tc.want)
		}
	}
}
