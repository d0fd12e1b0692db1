package kernels

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
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

// The spaces of the FA3 sweep: at least 100 configs for head dim 64 (85
// for 128), every one within the shared-memory and register limits and on
// Hopper's wgmma path.
func TestSpaceFASweep(t *testing.T) {
	for _, tc := range []struct{ d, min int }{{64, 100}, {128, 85}, {256, 20}} {
		for _, causal := range []bool{false, true} {
			for _, seq := range []int{512, 1024, 2048, 4096, 8192, 16384} {
				p := sweepPoint(t, tc.d, seq, causal)
				for _, arch := range []string{"sm_90a", "sm_80"} {
					sp := Space(p, arch)
					if len(sp) < tc.min {
						t.Errorf("d%d causal=%v seq %d %s: %d configs, want at least %d", tc.d, causal, seq, arch, len(sp), tc.min)
					}
					for _, c := range sp {
						e := EstimateConfig(p, c, arch)
						if e.SharedBytes > MaxSharedBytes || e.DeclaredShared > MaxSharedBytes || e.Regs > MaxRegs-RegMargin || e.Reject != "" {
							t.Errorf("d%d %s %+v: %+v in the space", tc.d, arch, c, e)
						}
						if arch == "sm_90a" && !e.WGMMA {
							t.Errorf("d%d %+v: not wgmma on sm_90a", tc.d, c)
						}
					}
				}
			}
		}
	}
}

// Known-bad configs are pruned, for the reason given; those pruned for
// divisibility or shared memory are ones the compiler rejects.
func TestRejectKnownBad(t *testing.T) {
	d64, d128, d256 := sweepPoint(t, 64, 4096, false), sweepPoint(t, 128, 4096, true), sweepPoint(t, 256, 4096, false)
	small := attnP(t, map[string]string{"seq-q": "40", "seq-kv": "100"})
	g := gemmP(t, map[string]string{"m": "4096", "n": "4096", "k": "4096"})
	gsmall := gemmP(t, map[string]string{"m": "64", "n": "100", "k": "24"})
	f8 := gemmP(t, map[string]string{"dtype": "f8e4m3"})
	tests := []struct {
		name     string
		p        Problem
		c        Config
		arch     string
		want     string
		compiles bool // the compiler accepts it (pruned as pointless or for registers)
	}{
		{"64 rows over 2 warpgroups", d64, AttnConfig{M: 64, N: 64, Stages: 2, Threads: 256}, "sm_90a", "cannot split", false},
		{"128 rows over 3 warpgroups", d64, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 384}, "sm_90a", "cannot split", false},
		{"192 rows over 8 warps", d128, AttnConfig{M: 192, N: 64, Stages: 2, Threads: 256}, "sm_80", "cannot split", false},
		{"d128 N256 3 stages", d128, AttnConfig{M: 128, N: 256, Stages: 3, Threads: 256}, "sm_90a", "shared memory", false},
		{"d256 M192 N256", d256, AttnConfig{M: 192, N: 256, Stages: 1, Threads: 384}, "sm_90a", "shared memory", false},
		{"d128 M128 over one warpgroup", d128, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128}, "sm_90a", "registers", true},
		{"d256 M192 over one warpgroup", d256, AttnConfig{M: 192, N: 32, Stages: 1, Threads: 128}, "sm_90a", "registers", true},
		{"M beyond the queries", small, AttnConfig{M: 128, N: 64, Stages: 2, Threads: 128}, "sm_90a", "smaller tile covers the 40 query rows", true},
		{"N beyond the keys", small, AttnConfig{M: 64, N: 128, Stages: 1, Threads: 128}, "sm_90a", "smaller tile covers the 100 keys", true},
		{"stages beyond the tiles", small, AttnConfig{M: 64, N: 64, Stages: 3, Threads: 128}, "sm_90a", "fewer tiles", true},
		{"ping-pong without a producer", d128, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, PingPong: true}, "sm_90a", "pingpong", true},
		{"ping-pong on one warpgroup", d128, AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128, WS: true, PingPong: true}, "sm_90a", "pingpong", true},
		{"f32 C 256×256", g, GemmConfig{BM: 256, BN: 256, BK: 32, Stages: 2, Threads: 256, Policy: ir.Square}, "sm_90a", "shared memory", false},
		{"4 stages of 256×256×64", g, GemmConfig{BM: 256, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square}, "sm_90a", "shared memory", false},
		{"128×256 over 4 warps", g, GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 128, Policy: ir.Square}, "sm_90a", "registers", true},
		{"BM beyond M", gsmall, GemmConfig{BM: 128, BN: 64, BK: 32, Stages: 1, Threads: 128, Policy: ir.Square}, "sm_90a", "smaller tile covers the 64 rows", true},
		{"f8", f8, GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 128, Policy: ir.Square}, "sm_90a", "f16 or bf16", false},
		{"wrong config type", g, AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}, "sm_90a", "want kernels.GemmConfig", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := Reject(tt.p, tt.c, tt.arch)
			if !strings.Contains(why, tt.want) {
				t.Errorf("Reject = %q, want %q", why, tt.want)
			}
			for _, c := range Space(tt.p, tt.arch) {
				if c == tt.c {
					t.Errorf("%+v is in the space", c)
				}
			}
			err := compileFor(tt.p, tt.c, tt.arch)
			if tt.compiles != (err == nil) {
				t.Errorf("compiles %v, want %v (%v)", err == nil, tt.compiles, err)
			}
		})
	}
}

func compileFor(p Problem, c Config, arch string) error {
	fn, err := Build(p, c, ir.DefaultLimits)
	if err != nil {
		return err
	}
	_, err = cudagen.Compile(fn, cudagen.Options{Arch: arch})
	return err
}

// Every config of a space compiles, and the shared memory the backend
// plans and the verifier counts are exactly the estimates.
func TestSpaceCompiles(t *testing.T) {
	problems := []Problem{
		sweepPoint(t, 64, 2048, false),
		sweepPoint(t, 128, 4096, true),
		sweepPoint(t, 256, 1024, false),
		attnP(t, map[string]string{"heads": "8", "heads-kv": "2", "seq-q": "100", "seq-kv": "300", "dim": "64", "dim-v": "128", "dtype": "f16"}),
		gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192", "out-dtype": "bf16"}),
		gemmP(t, map[string]string{"m": "1000", "n": "700", "k": "300", "trans-a": "true", "trans-b": "true"}),
	}
	archs := []string{"sm_90a", "sm_80"}
	if testing.Short() {
		problems, archs = problems[:2], archs[:1]
	}
	for _, p := range problems {
		for _, arch := range archs {
			sp := Space(p, arch)
			if len(sp) == 0 {
				t.Errorf("%s %s: empty space", p.Shape(), arch)
			}
			errs := make([]error, len(sp))
			parallel(len(sp), func(i int) {
				fn, err := Build(p, sp[i], ir.DefaultLimits)
				if err == nil {
					var prog *cudagen.Program
					if prog, err = cudagen.Compile(fn, cudagen.Options{Arch: arch}); err == nil {
						e := EstimateConfig(p, sp[i], arch)
						if prog.Shared != e.SharedBytes {
							err = fmt.Errorf("planned %d bytes of shared memory, estimated %d", prog.Shared, e.SharedBytes)
						} else if peak := fn.Kernel.PeakSharedBytes(); peak != e.DeclaredShared {
							err = fmt.Errorf("the verifier counts %d bytes of shared memory, estimated %d", peak, e.DeclaredShared)
						}
					}
				}
				errs[i] = err
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s %s %+v: %v", p.Kernel(), arch, sp[i], err)
				}
			}
		}
	}
}

func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	w := runtime.GOMAXPROCS(0)
	for k := range w {
		wg.Go(func() {
			for i := k; i < n; i += w {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// The space starts at the GPU config and, on sm_90a, puts the configs
// that miss wgmma last.
func TestSpaceOrder(t *testing.T) {
	for _, p := range []Problem{sweepPoint(t, 64, 4096, false), gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192"})} {
		sp := Space(p, "sm_90a")
		if sp[0] != p.GPUConfig() {
			t.Errorf("%s: space starts at %+v, want the GPU config %+v", p.Kernel(), sp[0], p.GPUConfig())
		}
		seenSlow := false
		for _, c := range sp {
			w := EstimateConfig(p, c, "sm_90a").WGMMA
			if w && seenSlow {
				t.Errorf("%s: wgmma config %+v after an mma.sync one", p.Kernel(), c)
			}
			seenSlow = seenSlow || !w
		}
		if p.Kernel() == "gemm" && !seenSlow {
			t.Errorf("gemm: no mma.sync configs (BM 64 over 256 threads) in the space")
		}
	}
	a := AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
	if d := ConfigDistance(a, AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}); d != 1 {
		t.Errorf("distance %v, want 1", d)
	}
	if d := ConfigDistance(a, GemmConfig{}); d < 1e300 {
		t.Errorf("distance across types %v", d)
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

// On Hopper the spaces offer warp-specialized configs (a producer
// warpgroup needs TMA loads); elsewhere none.
func TestSpaceWS(t *testing.T) {
	for _, p := range []Problem{sweepPoint(t, 128, 4096, false), gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192"})} {
		count := func(arch string) int {
			n := 0
			for _, c := range Space(p, arch) {
				if v := reflect.ValueOf(c); v.FieldByName("WS").Bool() {
					n++
				}
			}
			return n
		}
		if n := count("sm_90a"); n == 0 {
			t.Errorf("%s sm_90a: no WS configs", p.Kernel())
		}
		if n := count("sm_80"); n != 0 {
			t.Errorf("%s sm_80: %d WS configs", p.Kernel(), n)
		}
	}
}
