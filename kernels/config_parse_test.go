package kernels

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
)

func TestParseConfig(t *testing.T) {
	attn := AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	gemm := GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square}
	for _, tc := range []struct {
		base Config
		in   string
		want Config
		err  string
	}{
		{attn, "", attn, ""},
		{attn, "n=64 ws=true overlap", AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true}, ""},
		{attn, "M=64,threads=128", AttnConfig{M: 64, N: 128, Stages: 2, Threads: 128}, ""},
		{attn, "ws=false", attn, ""},
		{gemm, "bn=128 raster=8", GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square, Raster: 8}, ""},
		{attn, "k=3", nil, `no field "k" (it has m, n, stages`},
		{attn, "n=big", nil, `n="big": want a whole number`},
		{attn, "n", nil, `want a whole number`},
		{attn, "ws=maybe", nil, `want true or false`},
		{gemm, "policy=1", nil, "policy cannot be set"},
	} {
		got, err := ParseConfig(tc.base, tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case got != tc.want:
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
