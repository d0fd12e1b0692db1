package cuda

import (
	"fmt"

	"github.com/tilego/tilego/backend"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// maxCopyBytes bounds CopyRate's buffers: the copy bandwidth is flat well
// below it, and a large problem's tensors already take the memory.
const maxCopyBytes = 2 << 30

// CopyRate is the device's copy bandwidth for a memory-bound kernel that
// moves bytes: a device-to-device copy reading half of them and writing
// the other half (at most maxCopyBytes in all), timed as opt times a
// kernel (warmup, repeats, L2 flush), in bytes per second.
func (b *Backend) CopyRate(bytes int64, opt backend.RunOptions) (float64, error) {
	half := int(min(bytes, maxCopyBytes)/2) &^ 255
	if half < 256 {
		return 0, fmt.Errorf("cuda: CopyRate of %d bytes: too few to time", bytes)
	}
	src, err := b.dev.Alloc(half)
	if err != nil {
		return 0, err
	}
	defer b.dev.Free(src)
	dst, err := b.dev.Alloc(half)
	if err != nil {
		return 0, err
	}
	defer b.dev.Free(dst)
	if err := b.dev.MemsetD8(src, 1); err != nil {
		return 0, err
	}
	r, err := b.timeBackToBack(copyRun{b, dst, src}, opt)
	if err != nil {
		return 0, err
	}
	if r.Time <= 0 {
		return 0, fmt.Errorf("cuda: CopyRate: a copy timed at %v", r.Time)
	}
	return 2 * float64(half) / r.Time.Seconds(), nil
}

// copyRun is a device-to-device copy that TimeEach times like a launch.
type copyRun struct {
	b        *Backend
	dst, src drv.Buffer
}

func (c copyRun) start() error       { return c.b.dev.CopyDtoD(c.dst, c.src) }
func (c copyRun) kernelName() string { return "device-to-device copy" }
