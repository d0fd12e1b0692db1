package autotune

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/internal/srcline"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

func kernelProblem(t testing.TB, kernel string, vals map[string]string) kernels.Problem {
	t.Helper()
	p, err := kernels.NewProblem(kernel, vals)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func attnP(t testing.TB, vals map[string]string) kernels.Problem {
	return kernelProblem(t, "flash-attention", vals)
}

func gemmP(t testing.TB, vals map[string]string) kernels.Problem {
	return kernelProblem(t, "gemm", vals)
}

// sweepPoint is a point of FlashAttention-3's sweep (bench/suites.go):
// batch × seq = 16k, heads × dim = 2048, BSHD, bf16.
func sweepPoint(t testing.TB, d, seq int, causal bool) kernels.Problem {
	return attnP(t, map[string]string{"batch": fmt.Sprint(16384 / seq), "heads": fmt.Sprint(2048 / d),
		"seq-q": fmt.Sprint(seq), "dim": fmt.Sprint(d), "causal": fmt.Sprint(causal), "layout": "bshd"})
}

// The spaces of the FA3 sweep hold at least so many configs (fewer on
// sm_80, whose blocks have 163 KiB of shared memory and no producer
// warpgroups), and on sm_90a every one is on Hopper's wgmma path.
func TestSpaceFASweep(t *testing.T) {
	least := map[int]map[string]int{64: {"sm_90a": 600, "sm_80": 120}, 128: {"sm_90a": 350, "sm_80": 60}, 256: {"sm_90a": 100, "sm_80": 15}}
	points := []struct {
		d, seq int
		causal bool
	}{{128, 4096, true}, {64, 4096, false}, {256, 512, false}}
	if testing.Short() {
		points = points[:1]
	}
	for _, pt := range points {
		p := sweepPoint(t, pt.d, pt.seq, pt.causal)
		for arch, least := range least[pt.d] {
			sp := Space(p, arch)
			if len(sp) < least {
				t.Errorf("d%d causal=%v seq %d %s: %d configs, want at least %d", pt.d, pt.causal, pt.seq, arch, len(sp), least)
			}
			for _, c := range sp {
				e := EstimateConfig(p, c, arch)
				if e.Reject != "" || e.Cost.Threads == 0 || e.Regs > kernels.MaxRegs-kernels.RegMargin {
					t.Errorf("d%d %s %+v: %+v in the space", pt.d, arch, c, e)
				}
				if arch == "sm_90a" && !e.WGMMA {
					t.Errorf("d%d %+v: not wgmma on sm_90a", pt.d, c)
				}
			}
		}
	}
}

// Known-bad configs are pruned, for the reason given: the problem's, the
// compiler's refusal at the kernel code's line, or the register
// estimate's (those the compiler accepts).
func TestRejectKnownBad(t *testing.T) {
	d64, d128, d256 := sweepPoint(t, 64, 4096, false), sweepPoint(t, 128, 4096, true), sweepPoint(t, 256, 4096, false)
	small := attnP(t, map[string]string{"seq-q": "40", "seq-kv": "100"})
	g := gemmP(t, map[string]string{"m": "4096", "n": "4096", "k": "4096"})
	gsmall := gemmP(t, map[string]string{"m": "64", "n": "100", "k": "24"})
	f8 := gemmP(t, map[string]string{"dtype": "f8e4m3"})
	tests := []struct {
		name     string
		p        kernels.Problem
		c        kernels.Config
		arch     string
		want     string
		compiles bool // the compiler accepts it (pruned as pointless or for registers)
	}{
		{"64 rows over 2 warpgroups", d64, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 256}, "sm_90a", srcline.Find("kernels/attn_loop.go", "k.Gemm(qs, ks, S") + ": gemm: policy fullrow: 8 warps cannot each own 16-row slices of 64 rows; nor can wgmma", false},
		{"128 rows over 3 warpgroups", d64, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 384}, "sm_90a", "384 threads' warpgroups cannot split M = 128", false},
		{"192 rows over 8 warps", d128, kernels.AttnConfig{M: 192, N: 64, Stages: 2, Threads: 256}, "sm_80", "8 warps cannot each own 16-row slices of 192 rows", false},
		{"d128 N256 3 stages", d128, kernels.AttnConfig{M: 128, N: 256, Stages: 3, Threads: 256}, "sm_90a", srcline.Find("kernels/flash.go", "f.Kernel(tl.Grid(nM, s.H, s.B)") + ": kernel: shared memory after pipelining is 425984 bytes", false},
		{"d128 M128 N144 on an A100", d128, kernels.AttnConfig{M: 128, N: 144, Stages: 2, Threads: 256}, "sm_80", "shared memory after pipelining is 180224 bytes, over sm_80's 166912", true},
		{"d256 M192 N256", d256, kernels.AttnConfig{M: 192, N: 256, Stages: 1, Threads: 384}, "sm_90a", "registers", false},
		{"d128 M128 over one warpgroup", d128, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128}, "sm_90a", "registers", true},
		{"d256 M192 over one warpgroup", d256, kernels.AttnConfig{M: 192, N: 32, Stages: 1, Threads: 128}, "sm_90a", "registers", true},
		{"M beyond the queries", small, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 128}, "sm_90a", "smaller tile covers the 40 query rows", true},
		{"N beyond the keys", small, kernels.AttnConfig{M: 64, N: 128, Stages: 1, Threads: 128}, "sm_90a", "smaller tile covers the 100 keys", true},
		{"stages beyond the tiles", small, kernels.AttnConfig{M: 64, N: 64, Stages: 3, Threads: 128}, "sm_90a", "fewer tiles", true},
		{"ping-pong without a producer", d128, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, PingPong: true}, "sm_90a", "pingpong: the compiler does not have", true},
		{"ping-pong on one warpgroup", d128, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128, WS: true, PingPong: true}, "sm_90a", "pingpong", true},
		{"a producer on sm_80", d128, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true}, "sm_80", "ws: the compiler gives no program a producer warpgroup on sm_80", true},
		{"f32 C 256×256", g, kernels.GemmConfig{BM: 256, BN: 256, BK: 32, Stages: 2, Threads: 256, Policy: ir.Square}, "sm_90a", "registers", false},
		{"4 stages of 128×256×64 on an A100", g, kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 4, Threads: 256, Policy: ir.Square}, "sm_80", srcline.Find("kernels/gemm.go", "f.Kernel(tl.Grid(") + ": kernel: shared memory after pipelining is 196608 bytes, over sm_80's", true},
		{"128×256 over 4 warps", g, kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 128, Policy: ir.Square}, "sm_90a", "registers", true},
		{"BM beyond M", gsmall, kernels.GemmConfig{BM: 128, BN: 64, BK: 32, Stages: 1, Threads: 128, Policy: ir.Square}, "sm_90a", "smaller tile covers the 64 rows", true},
		{"BK off the field's domain", g, kernels.GemmConfig{BM: 64, BN: 64, BK: 24, Stages: 2, Threads: 128, Policy: ir.Square}, "sm_90a", "bk = 24: must be a positive multiple of 16", false},
		{"f8", f8, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 128, Policy: ir.Square}, "sm_90a", srcline.Find("kernels/gemm.go", "k.Gemm(as, bs, acc, g.opts...)") + ": gemm: mma.sync multiplies f16 or bf16, not f8e4m3", false},
		{"wrong config type", g, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}, "sm_90a", "want kernels.GemmConfig", false},
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

// compileFor builds c's program with the verifier's limits (not arch's
// shared memory) and compiles it for arch.
func compileFor(p kernels.Problem, c kernels.Config, arch string) error {
	fn, err := kernels.Build(p, c, ir.DefaultLimits)
	if err != nil {
		return err
	}
	_, err = cudagen.Compile(fn, cudagen.Options{Arch: arch})
	return err
}

// A sample of every space builds with the architecture's limits and
// compiles, in the shared memory and threads its estimate says.
func TestSpaceCompiles(t *testing.T) {
	problems := []kernels.Problem{
		sweepPoint(t, 128, 4096, true),
		attnP(t, map[string]string{"heads": "8", "heads-kv": "2", "seq-q": "100", "seq-kv": "300", "dim": "64", "dim-v": "128", "dtype": "f16"}),
		gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192", "out-dtype": "bf16"}),
		gemmP(t, map[string]string{"m": "1000", "n": "700", "k": "300", "trans-a": "true", "trans-b": "true"}),
	}
	every := 50
	if testing.Short() {
		every = 200
	}
	for _, p := range problems {
		for _, arch := range []string{"sm_90a", "sm_80"} {
			sp := Space(p, arch)
			if len(sp) == 0 {
				t.Errorf("%s %s: empty space", p.Shape(), arch)
			}
			var sample []kernels.Config
			for i := 0; i < len(sp); i += every {
				sample = append(sample, sp[i])
			}
			sample = append(sample, sp[len(sp)-1])
			errs := make([]error, len(sample))
			parallel(len(sample), func(i int) {
				fn, err := kernels.Build(p, sample[i], cudagen.Limits(arch))
				if err != nil {
					errs[i] = err
					return
				}
				prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
				if err != nil {
					errs[i] = err
					return
				}
				if e := EstimateConfig(p, sample[i], arch); prog.Shared != e.Cost.Shared || prog.Threads != e.Cost.Threads {
					errs[i] = fmt.Errorf("%d bytes of shared memory and %d threads; estimated %d and %d", prog.Shared, prog.Threads, e.Cost.Shared, e.Cost.Threads)
				}
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s %s %s: %v", p.Kernel(), arch, kernels.ConfigFields(sample[i]), err)
				}
			}
		}
	}
}

// The space starts at the GPU config and, on sm_90a, puts the configs
// that miss wgmma last.
func TestSpaceOrder(t *testing.T) {
	for _, p := range []kernels.Problem{sweepPoint(t, 64, 4096, false), gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192"})} {
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
}

// On Hopper the spaces offer warp-specialized configs (a producer
// warpgroup needs TMA loads); elsewhere none.
func TestSpaceWS(t *testing.T) {
	for _, p := range []kernels.Problem{sweepPoint(t, 128, 4096, false), gemmP(t, map[string]string{"m": "8192", "n": "8192", "k": "8192"})} {
		count := func(arch string) int {
			n := 0
			for _, c := range Space(p, arch) {
				if v := reflect.ValueOf(c); v.FieldByName("WS").Bool() {
					n++
					if e := EstimateConfig(p, c, arch); !e.Cost.Producer {
						t.Errorf("%s %s %s: no producer planned", p.Kernel(), arch, kernels.ConfigFields(c))
					}
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

// Estimates are remembered for the last memoProblems problems, each
// estimated once.
func TestEstimateMemo(t *testing.T) {
	g := gemmP(t, map[string]string{"m": "512", "n": "512", "k": "512"})
	c := kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square}
	want := estimate(g, c, "sm_90a")
	if got := EstimateConfig(g, c, "sm_90a"); got != want {
		t.Fatalf("EstimateConfig = %+v; estimate = %+v", got, want)
	}
	table := estimatesFor(g, "sm_90a")
	table.mu.Lock()
	table.byConfig[configKey(c)] = Estimate{Reject: "remembered"}
	table.mu.Unlock()
	if got := Reject(g, c, "sm_90a"); got != "remembered" {
		t.Errorf("Reject = %q: not the remembered estimate", got)
	}
	if got := Reject(g, c, "sm_80"); got != "" {
		t.Errorf("sm_80: Reject = %q: another architecture's estimate", got)
	}
	for k := range memoProblems {
		EstimateConfig(gemmP(t, map[string]string{"m": fmt.Sprint(1000 + k)}), c, "sm_90a")
	}
	if got := Reject(g, c, "sm_90a"); got != "" {
		t.Errorf("Reject = %q after %d other problems: remembered too long", got, memoProblems)
	}
	memo.Lock()
	n := len(memo.tables)
	memo.Unlock()
	if n != memoProblems {
		t.Errorf("%d problems remembered; want %d", n, memoProblems)
	}
}

// BenchmarkSpace estimates a space afresh: FlashAttention at head dim 128
// and 4k tokens, and a 4096³ GEMM, on sm_90a and sm_80.
func BenchmarkSpace(b *testing.B) {
	for _, p := range []kernels.Problem{sweepPoint(b, 128, 4096, false), gemmP(b, map[string]string{"m": "4096", "n": "4096", "k": "4096"})} {
		for _, arch := range []string{"sm_90a", "sm_80"} {
			b.Run(p.Kernel()+"/"+arch, func(b *testing.B) {
				for b.Loop() {
					memo.Lock()
					memo.tables = nil
					memo.Unlock()
					Space(p, arch)
				}
			})
		}
	}
}
