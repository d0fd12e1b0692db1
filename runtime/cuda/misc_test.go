package cuda

import (
	"testing"

	"github.com/tilego/tilego/internal/cstr"
)

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
	if got := string(cstr.TrimNUL([]byte("ab\x00cd"))); got != "ab" {
		t.Errorf("TrimNUL = %q", got)
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
