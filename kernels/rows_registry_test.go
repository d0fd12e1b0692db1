package kernels

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
)

// RMSNorm's and LayerNorm's GPU config keeps a thread's share of the
// block's rows at 32-64 elements from 4096 to 16384 columns (4 rows over
// 128 threads spilled there) and builds for Hopper; the softmax keeps
// 128 threads and the rows whose tiles fit shared memory.
func TestRowsGPUConfig(t *testing.T) {
	for _, name := range []string{"rmsnorm", "layernorm", "softmax"} {
		e, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, cols := range []int{1024, 2048, 4096, 8192, 16384} {
			for _, dt := range []string{"bf16", "f32"} {
				p, err := e.Problem(map[string]string{"rows": "4096", "cols": fmt.Sprint(cols), "dtype": dt})
				if err != nil {
					t.Fatal(err)
				}
				c := p.GPUConfig().(RowsConfig)
				share := c.BM * cols / c.Threads
				switch {
				case name == "softmax" && (c.Threads != 128 || c.BM*cols*p.(*rowsProblem).s.DType.Bytes() > 200<<10 || c.BM < 4 && cols < 8192):
					t.Errorf("%s %d %s: config %+v, want 128 threads and the most of 4 rows that fit 200 KiB", name, cols, dt, c)
				case name != "softmax" && cols >= 4096 && (share < 16 || share > 64):
					t.Errorf("%s %d: config %+v gives a thread %d elements", name, cols, c, share)
				}
				if _, err := Build(p, c, cudagen.Limits("sm_90a")); err != nil {
					t.Errorf("%s %d %s: %v", name, cols, dt, err)
				}
			}
		}
	}
}
