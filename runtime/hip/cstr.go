package hip

// C strings cross the purego boundary; these helpers keep the byte
// handling in one place.

// cString returns s as a NUL-terminated byte slice.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// trimNUL drops a trailing NUL (and anything after the first NUL).
func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
