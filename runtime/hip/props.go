package hip

// The device's architecture name ("gfx942:sramecc+:xnack-") is reported
// only inside hipDeviceProp_t: the attribute that once gave it is retired
// (hipDeviceAttributeUnused5). The struct's layout changed in ROCm 6.0, and
// the entry point's plain name kept the old layout for old binaries, so the
// offset read depends on which entry point was bound.

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tilego/tilego/internal/cstr"
)

// Offsets and sizes of hipDeviceProp_t on 64-bit hosts, measured with
// offsetof/sizeof over ROCm's headers:
//   - hipDeviceProp_tR0600 (include/hip/hip_runtime_api.h, ROCm 6.0 on; the
//     same in ROCm/rocm-systems' 7.x header): 1472 bytes, gcnArchName at 1160;
//   - hipDeviceProp_tR0000 (include/hip/hip_deprecated.h, and ROCm 5.x's
//     hipDeviceProp_t): 792 bytes, gcnArchName at 396.
//
// Both start with char name[256].
const (
	propsR0600Size        = 1472
	propsR0600ArchNameOff = 1160
	propsR0000Size        = 792
	propsR0000ArchNameOff = 396
	propsArchNameLen      = 256

	// propsBufSize is what the runtime is given to fill: room to spare, so
	// that a runtime with a grown struct cannot write past Go memory.
	propsBufSize = 8 << 10
)

// archNameAt reads the NUL-terminated gcnArchName at off of a filled
// properties buffer, and checks it looks like one.
func archNameAt(buf []byte, off int) (string, error) {
	if off+propsArchNameLen > len(buf) {
		return "", fmt.Errorf("hip: properties buffer of %d bytes has no gcnArchName at %d", len(buf), off)
	}
	s := string(cstr.TrimNUL(buf[off : off+propsArchNameLen]))
	if !strings.HasPrefix(s, "gfx") {
		return "", fmt.Errorf("hip: gcnArchName at byte %d of hipDeviceProp_t reads %q, not a gfx target: "+
			"the runtime's struct layout is not the one this package knows", off, s)
	}
	return s, nil
}

// archName asks the runtime for device dev's gcnArchName.
func (api *hipAPI) archName(dev int32) (string, error) {
	buf := make([]byte, propsBufSize)
	switch {
	case api.hipGetDevicePropertiesR0600 != nil:
		if err := api.check("hipGetDevicePropertiesR0600",
			api.hipGetDevicePropertiesR0600(unsafe.Pointer(&buf[0]), dev)); err != nil {
			return "", err
		}
		return archNameAt(buf, propsR0600ArchNameOff)
	case api.hipGetDevicePropertiesR0000 != nil:
		if err := api.check("hipGetDeviceProperties",
			api.hipGetDevicePropertiesR0000(unsafe.Pointer(&buf[0]), dev)); err != nil {
			return "", err
		}
		return archNameAt(buf, propsR0000ArchNameOff)
	}
	return "", missing("hipGetDevicePropertiesR0600")
}
