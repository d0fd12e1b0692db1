package cudagen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// A persistent walk whose query tiles the producer loads, with two
// consumer warpgroups, stores its output by warpgroup halves: each
// warpgroup meets only itself (before its half's TMA store and before
// writing the half again), the store's box is half the tile's rows, and
// ping-pong's turns are given and taken once a walk. Anywhere else the
// epilogue is the whole tile's, behind barriers of all consumers.
// fencedHalf is a half written, fenced for TMA, then the warpgroup's
// barrier.
var fencedHalf = regexp.MustCompile(`tl::fence_proxy_async\(\);\n *tl::bar_sync\(6 \+ tid / 128, 128\);`)

func TestHalves(t *testing.T) {
	s := kernels.AttnShape{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16}
	d64 := s
	d64.Dqk, d64.Dv = 64, 64
	causal := s
	causal.Causal = true
	d256 := s
	d256.Dqk, d256.Dv = 256, 256
	for _, tc := range []struct {
		name   string
		s      kernels.AttnShape
		c      kernels.AttnConfig
		env    string // TILEGO_HALVES
		halves bool
		noTile bool // the output goes from registers: no half to store, no barrier at all
	}{
		{"ws persistent", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true}, "", true, false},
		{"pingpong overlap n128", s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true}, "", true, false},
		{"pingpong d64 causal", d64, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Persistent: true}, "", true, false},
		{"causal overlap", causal, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, "", true, false},
		{"d256 from registers", d256, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Direct: true}, "", true, true},
		{"d256 overlap from registers", d256, kernels.AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true, Direct: true}, "", true, true},
		{"turned off", s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Persistent: true}, "0", false, false},
		{"one consumer warpgroup", s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128, WS: true, Persistent: true}, "", false, false},
		{"consumers load the query tile", s, kernels.AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, "", false, false},
		{"no producer", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true}, "", false, false},
		{"no walk", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compileAttn(t, tc.s, tc.c, "sm_90a", forced(SwitchHalves, tc.env))
			src := p.Source
			var box []uint32
			for _, spec := range p.TMA {
				if spec.Param == 3 { // O, after Q, K and V
					box = spec.Box
				}
			}
			halfBars := strings.Count(src, "tl::bar_sync(6 + tid / 128, 128);")
			if !tc.halves {
				if halfBars != 0 || strings.Contains(src, "half * ") {
					t.Errorf("stores by halves (%d half barriers):\n%s", halfBars, src)
				}
				return
			}
			consumers := src[strings.Index(src, "setmaxnreg_inc"):]
			if strings.Contains(consumers, "tl::bar_sync(1, 256)") {
				t.Errorf("the consumers still meet all together:\n%s", consumers)
			}
			if tc.noTile {
				if halfBars != 0 || box != nil || !strings.Contains(src, "*(uint4*)(gp") || strings.Contains(src, "cp_async16(") {
					t.Errorf("%d half barriers, store box %v, want none; the output stored 16 bytes a lane from registers, the query tile loaded by the producer:\n%s", halfBars, box, src)
				}
				return
			}
			if halfBars != 2 || box == nil || box[1] != uint32(tc.c.M/2) {
				t.Errorf("%d half barriers, want 2; store box %v, want %d rows", halfBars, box, tc.c.M/2)
			}
			for _, want := range []string{
				"if (tid % 128 == 0) {",
				"+ half * 64, ", // the half's rows
				"+ half * 8192);",
			} {
				if !strings.Contains(src, want) {
					t.Errorf("no %q in\n%s", want, src)
				}
			}
			if !fencedHalf.MatchString(src) {
				t.Errorf("the half is not fenced for TMA before its barrier:\n%s", src)
			}
			if tc.c.PingPong {
				// warpgroup 1's last turn at the walk's last tile (a drawn
				// walk takes it past the walk: TestSpread)
				for _, want := range []string{"if (tid >= 128 && k0_n == 0) tl::bar_arrive(2, 256);", "if (tid < 128 && k0_n == ("} {
					if !strings.Contains(src, want) {
						t.Errorf("turns not once a walk: no %q in\n%s", want, src)
					}
				}
			}
		})
	}
}
