package cudagen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/examples"
	"github.com/tilego/tilego/ir"
)

// A 16-bit shared tile stored whole goes by TMA only where the hardware's
// swizzle is the threads' (hardwareSwizzled): 8-row tiles do, 4-row tiles
// of several panels do not, one-panel tiles of any rows do.
func TestSoftmaxTMAStore(t *testing.T) {
	for _, c := range []struct {
		rows, cols, bm, bn int
		tma                bool
	}{
		{4, 1024, 4, 1024, false},
		{37, 1024, 4, 256, false},
		{64, 512, 8, 256, true},
		{24, 384, 12, 128, false},
		{16, 64, 4, 64, true},
	} {
		t.Run(fmt.Sprintf("%dx%d/bm%d", c.rows, c.cols, c.bm), func(t *testing.T) {
			fn, err := examples.Softmax(c.rows, c.cols, ir.BF16, c.bm, c.bn, 128).Build()
			if err != nil {
				t.Fatal(err)
			}
			for _, arch := range []string{"sm_80", "sm_90a"} {
				p, err := Compile(fn, Options{Arch: arch})
				if err != nil {
					t.Fatalf("%s: %v", arch, err)
				}
				if got := strings.Contains(p.Source, "tma_store"); got != (c.tma && arch == "sm_90a") {
					t.Errorf("%s: TMA store %v, want %v", arch, got, c.tma && arch == "sm_90a")
				}
			}
		})
	}
}
