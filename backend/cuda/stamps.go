package cuda

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/tilego/tilego/internal/atomicfile"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// Timelines of hand-edited programs. A program compiled from TILEGO_SOURCE
// may declare `__device__ unsigned long long tilego_stamps[N];` and store
// tl::globaltimer() readings in it (at a piece's start and end, say): a
// printf in the kernel would serialize its wgmmas, and the stamps cost a
// store each. With TILEGO_STAMPS=prefix set, each Download (after the timed
// launches) writes the array of every such program to prefix.NAME.txt, one
// value a line, as the last launch left it.

// stampsVar is the global a program's stamps live in.
const stampsVar = "tilego_stamps"

// stampArray is a loaded program's stamps.
type stampArray struct {
	name string
	buf  drv.Buffer
}

// noteStamps records m's stamps array, where TILEGO_STAMPS asks and the
// module has one (b.mu held).
func (b *Backend) noteStamps(name string, m *drv.Module) {
	if os.Getenv("TILEGO_STAMPS") == "" {
		return
	}
	if buf, err := m.Global(stampsVar); err == nil {
		b.stamps = append(b.stamps, stampArray{name, buf})
	}
}

// dumpStamps writes every recorded stamps array to its file.
func (b *Backend) dumpStamps() error {
	prefix := os.Getenv("TILEGO_STAMPS")
	b.mu.Lock()
	arrays := b.stamps
	b.mu.Unlock()
	for _, a := range arrays {
		raw := make([]byte, a.buf.Size)
		if err := b.dev.CopyDtoH(raw, a.buf); err != nil {
			return fmt.Errorf("TILEGO_STAMPS: %s: %w", a.name, err)
		}
		if err := writeStamps(prefix+"."+a.name+".txt", raw); err != nil {
			return fmt.Errorf("TILEGO_STAMPS: %w", err)
		}
	}
	return nil
}

// writeStamps writes raw's little-endian uint64s to path, one a line,
// through a temporary file and a rename: a symlink planted at the path is
// replaced, never followed to overwrite what it names.
func writeStamps(path string, raw []byte) error {
	var sb strings.Builder
	for i := 0; i+8 <= len(raw); i += 8 {
		fmt.Fprintln(&sb, binary.LittleEndian.Uint64(raw[i:]))
	}
	return atomicfile.Write(path, []byte(sb.String()))
}
