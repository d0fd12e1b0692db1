package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
)

func attnP(t *testing.T, vals map[string]string) Problem {
	t.Helper()
	p, err := attentionEntry.Problem(vals)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gemmP(t *testing.T, vals map[string]string) Problem {
	t.Helper()
	p, err := gemmEntry.Problem(vals)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepPoint is a point of FlashAttention-3's sweep (bench/suites.go):
// batch × seq = 16k, heads × dim = 2048, BSHD, bf16.
func sweepPoint(t *testing.T, d, seq int, causal bool) Problem {
	return attnP(t, map[string]string{"batch": fmt.Sprint(16384 / seq), "heads": fmt.Sprint(2048 / d),
		"seq-q": fmt.Sprint(seq), "dim": fmt.Sprint(d), "causal": fmt.Sprint(causal), "layout": "bshd"})
}

func TestCandidates(t *testing.T) {
	// M × N × stages × threads × (no producer, producer, producer with
	// P·V deferred), plus two ping-pong configs (P·V deferred or not) for
	// each M × N × stages at 256 threads; then each with a producer again
	// as a persistent walk, its output staged or stored from registers.
	grid, producer := 3*15*3*3*3+3*15*3*2, 3*15*3*(3*2+2)
	if n := len(Candidates(attnP(t, nil))); n != grid+2*producer {
		t.Errorf("attention: %d candidates, want %d", n, grid+2*producer)
	}
	if n := len(Candidates(gemmP(t, nil))); n != 3*3*2*3*2*2*2 {
		t.Errorf("gemm: %d candidates, want 432", n)
	}
}

func TestBytes(t *testing.T) {
	type byter interface{ Bytes() float64 }
	a := attnP(t, map[string]string{"batch": "2", "heads": "4", "heads-kv": "2", "seq-q": "8", "seq-kv": "16", "dim": "32", "dim-v": "16"})
	want := float64(2*4*8*32+2*2*16*(32+16)+2*4*8*16)*2 + 2*4*8*4
	if got := a.(byter).Bytes(); got != want {
		t.Errorf("attention bytes %v, want %v", got, want)
	}
	g := gemmP(t, map[string]string{"m": "10", "n": "20", "k": "30", "out-dtype": "bf16"})
	if got := g.(byter).Bytes(); got != (10*30+30*20)*2+10*20*2 {
		t.Errorf("gemm bytes %v", got)
	}
}

// Unfit turns down configs for what the problem says of them alone: a
// config of another kernel, a field off its domain, tiles or stages the
// problem's sizes leave partly empty. The rest it leaves to the compiler.
func TestUnfit(t *testing.T) {
	d128 := sweepPoint(t, 128, 4096, false)
	small := attnP(t, map[string]string{"seq-q": "40", "seq-kv": "100"})
	g := gemmP(t, map[string]string{"m": "4096", "n": "4096", "k": "4096"})
	gsmall := gemmP(t, map[string]string{"m": "64", "n": "100", "k": "24"})
	mla, err := mlaEntry.Problem(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Problem
		c    Config
		want string // "" fits
	}{
		{d128, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}, ""},
		{d128, AttnConfig{M: 192, N: 256, Stages: 3, Threads: 384, WS: true}, ""}, // too big: the compiler's to say
		{d128, AttnConfig{M: 128, N: 120, Stages: 2, Threads: 256}, "n = 120: must be a positive multiple of 16"},
		{d128, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 200}, "threads = 200: must be a positive multiple of 32"},
		{d128, AttnConfig{M: 128, N: 128, Stages: 0, Threads: 256}, "stages = 0: must be at least 1"},
		{small, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 128}, "M = 128: a smaller tile covers the 40 query rows"},
		{small, AttnConfig{M: 64, N: 128, Stages: 1, Threads: 128}, "N = 128: a smaller tile covers the 100 keys"},
		{small, AttnConfig{M: 64, N: 64, Stages: 3, Threads: 128}, "3 stages: the 100 keys take fewer tiles"},
		{g, GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square}, ""},
		{g, GemmConfig{BM: 64, BN: 64, BK: 24, Stages: 2, Threads: 128, Policy: ir.Square}, "bk = 24: must be a positive multiple of 16"},
		{gsmall, GemmConfig{BM: 128, BN: 64, BK: 32, Stages: 1, Threads: 128, Policy: ir.Square}, "BM = 128: a smaller tile covers the 64 rows"},
		{gsmall, GemmConfig{BM: 64, BN: 256, BK: 32, Stages: 1, Threads: 128, Policy: ir.Square}, "BN = 256: a smaller tile covers the 100 columns"},
		{gsmall, GemmConfig{BM: 64, BN: 128, BK: 64, Stages: 1, Threads: 128, Policy: ir.Square}, "BK = 64: a smaller tile covers K = 24"},
		{gsmall, GemmConfig{BM: 64, BN: 128, BK: 16, Stages: 3, Threads: 128, Policy: ir.Square}, "3 stages: K = 24 takes fewer tiles"},
		{g, AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}, "config is kernels.AttnConfig, want kernels.GemmConfig"},
		{d128, GemmConfig{}, "config is kernels.GemmConfig, want kernels.AttnConfig"},
		{mla, MLAConfig{}, "mla-decode has no config space"},
	} {
		if got := Unfit(tc.p, tc.c); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s %s: Unfit = %q, want %q", tc.p.Kernel(), ConfigFields(tc.c), got, tc.want)
		}
	}
}

// The register estimate: the f32 fragments a thread holds, plus the
// overhead; the budget a block's threads leave each thread.
func TestRegs(t *testing.T) {
	d64 := sweepPoint(t, 64, 4096, false)
	g := gemmP(t, map[string]string{"m": "4096", "n": "4096", "k": "4096"})
	for _, tc := range []struct {
		p    Problem
		c    Config
		want int
	}{
		{d64, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, (128*64+128*64)/256 + attnRegOverhead},
		{d64, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Overlap: true}, (128*64+128*64)/256 + 128*64/2/256 + attnRegOverhead},
		{g, GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 256}, 128*256/256 + gemmRegOverhead},
		{g, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, 0},
	} {
		if got := Regs(tc.p, tc.c); got != tc.want {
			t.Errorf("%s %s: Regs = %d, want %d", tc.p.Kernel(), ConfigFields(tc.c), got, tc.want)
		}
	}
	for threads, want := range map[int]int{0: 255, 128: 255, 256: 255, 384: 168, 512: 128, 1024: 64} {
		if got := RegBudget(threads); got != want {
			t.Errorf("RegBudget(%d) = %d, want %d", threads, got, want)
		}
	}
	if RegsOver(239, 255) != "" || !strings.Contains(RegsOver(240, 255), "about 240 registers per thread, over 239") {
		t.Errorf("RegsOver keeps RegMargin below the budget: %q, %q", RegsOver(239, 255), RegsOver(240, 255))
	}
}

func TestConfigDistance(t *testing.T) {
	a := AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
	if d := ConfigDistance(a, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}); d != 1 {
		t.Errorf("distance %v, want 1", d)
	}
	if d := ConfigDistance(a, GemmConfig{}); d < 1e300 {
		t.Errorf("distance across types %v", d)
	}
}
