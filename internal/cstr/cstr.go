// Package cstr converts C strings where they cross the purego boundary
// (runtime/cuda, runtime/hip), keeping the unsafe pointer walking in one
// audited place.
package cstr

import "unsafe"

// Go copies the NUL-terminated C string at p.
func Go(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// C returns s as a NUL-terminated byte slice.
func C(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// TrimNUL drops a trailing NUL (and anything after the first NUL).
func TrimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
