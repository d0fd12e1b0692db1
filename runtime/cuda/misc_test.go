package cuda

import (
	"strings"
	"testing"
)

func TestCheckTiled(t *testing.T) {
	dims := []uint64{64, 32}
	tests := []struct {
		name    string
		rank    int
		dims    []uint64
		strides []uint64
		box     []uint32
		elem    []uint32
		want    string
	}{
		{"ok", 2, dims, []uint64{256}, []uint32{16, 8}, nil, ""},
		{"ok elem", 2, dims, []uint64{256}, []uint32{16, 8}, []uint32{1, 1}, ""},
		{"rank 0", 0, nil, nil, nil, nil, "rank 0"},
		{"rank 6", 6, nil, nil, nil, nil, "rank 6"},
		{"dims", 2, dims[:1], []uint64{256}, []uint32{16, 8}, nil, "global dims"},
		{"strides", 2, dims, []uint64{4, 256}, []uint32{16, 8}, nil, "rank-1"},
		{"stride align", 2, dims, []uint64{100}, []uint32{16, 8}, nil, "multiple of 16"},
		{"box len", 2, dims, []uint64{256}, []uint32{16}, nil, "box dims"},
		{"box size", 2, dims, []uint64{256}, []uint32{512, 8}, nil, "1..256"},
		{"elem len", 2, dims, []uint64{256}, []uint32{16, 8}, []uint32{1}, "element strides"},
	}
	for _, tt := range tests {
		err := checkTiled(tt.rank, tt.dims, tt.strides, tt.box, tt.elem)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	// Validation happens before the driver is needed.
	_, err := EncodeTiled(TensorFloat32, 2, 0, dims, nil, []uint32{16, 8}, nil,
		InterleaveNone, SwizzleNone, L2PromotionNone, OOBFillNone)
	if err == nil || !strings.Contains(err.Error(), "EncodeTiled") {
		t.Errorf("EncodeTiled: got %v", err)
	}
}

func TestBufferSlice(t *testing.T) {
	b := Buffer{Ptr: 0x1000, Size: 256}
	s, err := b.Slice(16, 32)
	if err != nil || s.Ptr != 0x1010 || s.Size != 32 {
		t.Errorf("Slice = %+v, %v", s, err)
	}
	for _, c := range [][2]int{{-1, 4}, {0, 257}, {250, 8}, {0, -1}} {
		if _, err := b.Slice(c[0], c[1]); err == nil {
			t.Errorf("Slice(%d, %d) succeeded", c[0], c[1])
		}
	}
}

func TestBytesAndImages(t *testing.T) {
	if b := Bytes([]float32{1}); len(b) != 4 || b[3] != 0x3f || b[2] != 0x80 {
		t.Errorf("Bytes(float32 1) = %x", b)
	}
	if Bytes([]int64(nil)) != nil {
		t.Error("Bytes(nil) != nil")
	}
	if !isBinary([]byte("\x7fELF\x02")) || !isBinary([]byte{0x50, 0xed, 0x55, 0xba, 1}) || isBinary([]byte(".version 8.0")) {
		t.Error("isBinary misclassifies")
	}
	if got := string(trimNUL([]byte("ab\x00cd"))); got != "ab" {
		t.Errorf("trimNUL = %q", got)
	}
	d := &Device{Major: 9, Minor: 0}
	if d.Arch() != "sm_90" || d.ArchSpecific() != "sm_90a" {
		t.Errorf("arch %s / %s", d.Arch(), d.ArchSpecific())
	}
	d = &Device{Major: 8, Minor: 6}
	if d.Arch() != "sm_86" || d.ArchSpecific() != "sm_86" {
		t.Errorf("arch %s / %s", d.Arch(), d.ArchSpecific())
	}
}
