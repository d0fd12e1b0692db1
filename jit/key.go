package jit

// Cache keys. Each field is length-prefixed before hashing so that no two
// different inputs (say, options "a b" vs "a", "b") can produce the same
// byte stream.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// formatVersion changes whenever the entry layout or the meaning of a key
// changes; old entries then stop matching and are recompiled.
const formatVersion = 1

// Key identifies one compilation.
type Key [sha256.Size]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// KeyOf hashes everything that can change the compiled image.
func KeyOf(src, name, arch, compilerVersion string, opts []string) Key {
	return keyWithFormat(formatVersion, src, name, arch, compilerVersion, opts)
}

func keyWithFormat(format uint32, src, name, arch, compilerVersion string, opts []string) Key {
	h := sha256.New()
	putU64(h, uint64(format))
	for _, s := range []string{compilerVersion, arch, name} {
		putStr(h, s)
	}
	putU64(h, uint64(len(opts)))
	for _, o := range opts {
		putStr(h, o)
	}
	putStr(h, src)
	var k Key
	h.Sum(k[:0])
	return k
}

func putU64(h hash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.Write(b[:])
}

func putStr(h hash.Hash, s string) {
	putU64(h, uint64(len(s)))
	h.Write([]byte(s))
}
