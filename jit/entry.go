package jit

// On-disk entries. A header with a checksum guards against truncated writes
// (a crash, a full disk) and bit rot: anything that does not verify is
// treated as a miss and overwritten. Writes go to a temporary file in the
// same folder and are renamed into place, so readers in other processes see
// either no entry or a complete one.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
)

var magic = [8]byte{'T', 'I', 'L', 'E', 'G', 'O', 'J', 'C'}

// Header layout: magic, format, reserved, key, payload length, payload sum.
const headerSize = 8 + 4 + 4 + sha256.Size + 8 + sha256.Size

var errCorrupt = errors.New("corrupt cache entry")

func encodeEntry(k Key, payload []byte) []byte {
	b := make([]byte, headerSize, headerSize+len(payload))
	copy(b, magic[:])
	binary.LittleEndian.PutUint32(b[8:], formatVersion)
	copy(b[16:], k[:])
	binary.LittleEndian.PutUint64(b[16+sha256.Size:], uint64(len(payload)))
	sum := sha256.Sum256(payload)
	copy(b[24+sha256.Size:], sum[:])
	return append(b, payload...)
}

// decodeEntry returns the payload of a verified entry for k.
func decodeEntry(k Key, b []byte) ([]byte, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", errCorrupt, len(b))
	}
	if !bytes.Equal(b[:8], magic[:]) {
		return nil, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVersion {
		return nil, fmt.Errorf("%w: format %d, want %d", errCorrupt, v, formatVersion)
	}
	if !bytes.Equal(b[16:16+sha256.Size], k[:]) {
		return nil, fmt.Errorf("%w: entry is for another key", errCorrupt)
	}
	n := binary.LittleEndian.Uint64(b[16+sha256.Size:])
	payload := b[headerSize:]
	if uint64(len(payload)) != n {
		return nil, fmt.Errorf("%w: payload %d bytes, header says %d", errCorrupt, len(payload), n)
	}
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], b[24+sha256.Size:headerSize]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	return payload, nil
}

// entryPath is where k's entry lives in generation gen (maintain.go),
// sharded by the key's first byte to keep folders small.
func entryPath(dir, gen string, k Key) string {
	s := k.String()
	return filepath.Join(dir, gen, s[:2], s+".bin")
}
