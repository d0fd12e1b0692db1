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

// A field set out of its domain is refused with the field, its value and
// why, before any program is built.
func TestParseConfigDomains(t *testing.T) {
	attn := AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}
	gemm := GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 128}
	mla := MLAConfig{M: 64, Stages: 1, Threads: 256}
	for _, tc := range []struct {
		base Config
		in   string
		err  string // "" accepts
	}{
		{attn, "m=0", "config m=0: must be a positive multiple of 16"},
		{attn, "n=24", "config n=24: must be a positive multiple of 16"},
		{attn, "n=176", ""},
		{attn, "m=4096", "config m=4096: too large (at most 1024)"},
		{attn, "m=-16", "config m=-16: must be a positive multiple of 16"},
		{attn, "stages=0", "config stages=0: must be at least 1"},
		{attn, "threads=100", "config threads=100: must be a positive multiple of 32"},
		{attn, "threads=2048", "config threads=2048: too large (at most 1024)"},
		{attn, "cluster=3", "config cluster=3: too large (at most 2)"},
		{attn, "cluster=1", "config cluster=1: must be 0 or at least 2"},
		{attn, "cluster=0", ""},
		{attn, "m=99999999999999999999", "config m=99999999999999999999: too large"},
		{attn, "m=-99999999999999999999", "config m=-99999999999999999999: too small"},
		{gemm, "bn=8", ""},
		{gemm, "bk=8", "config bk=8: must be a positive multiple of 16"},
		{gemm, "raster=-1", "config raster=-1: must be 0 or at least 1"},
		{mla, "m=0", "config m=0: must be at least 1"},
		{mla, "v0=100", "config v0=100: must be 0 or a positive multiple of 64"},
		{mla, "threads=64 splitn", "config splitn with threads=64"},
		{mla, "threads=128 splitn", ""},
		{CombineConfig{Rows: 8, Threads: 128}, "early=-1", "config early=-1: must not be negative"},
	} {
		_, err := ParseConfig(tc.base, tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%T %q: %v", tc.base, tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%T %q: error %v, want %q", tc.base, tc.in, err, tc.err)
		}
	}
}
