package cudagen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// FlashAttention's walk over equal tiles is a Spread loop. Where the
// program asks (Draw) and a producer loads the walk's query tiles it is
// drawn: the producer writes each
// tile into its slot's ticket before the loads that complete the slot,
// draws the next from the counter, publishes a value past the end with a
// plain arrival and leaves, and the block that draws the launch's last
// value zeroes the counter; the consumers read their tile after the slot's
// wait (once), leave past the end, and there take warpgroup 1's last turn.
// Not asked, without a producer, or with TILEGO_DRAW=0, it is dealt by
// block index (TILEGO_DRAW=1 draws unasked). A causal walk asked to draw
// draws single tiles (longest first); not asked, it walks pairs of tiles in
// a serial loop.
func TestSpread(t *testing.T) {
	s := kernels.AttnShape{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16} // 4·8·8 = 256 tiles
	causal := s
	causal.Causal, causal.Sq, causal.Skv = true, 1024, 1024
	pp := kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true}
	draw := pp
	draw.Draw = true
	for _, tc := range []struct {
		name string
		s    kernels.AttnShape
		c    kernels.AttnConfig
		env  string // SwitchDraw forced: "1" on, "0" off
		want string // drawn, dealt or serial
	}{
		{"drawn", s, draw, "", "drawn"},
		{"not asked", s, pp, "", "dealt"},
		{"turned on", s, pp, "1", "drawn"},
		{"turned off", s, draw, "0", "dealt"},
		{"no producer", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true, Draw: true}, "", "dealt"},
		{"causal drawn", causal, draw, "", "drawn"},
		{"causal pairs", causal, pp, "", "serial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compileAttn(t, tc.s, tc.c, "sm_90a", forced(SwitchDraw, tc.env))
			src := p.Source
			drawn := tc.want == "drawn"
			if p.Counter != drawn || strings.Contains(src, counterParam) != drawn {
				t.Fatalf("Counter %v, counter in the source %v; want %v:\n%s", p.Counter, strings.Contains(src, counterParam), drawn, src)
			}
			dealt := "const int k0 = 0 + " + blockLinear + " + k0_n * " + blockCount + ";"
			if got := strings.Count(src, dealt); tc.want == "dealt" && got == 0 || tc.want != "dealt" && got != 0 {
				t.Errorf("%d loops dealt by block index, want them %s:\n%s", got, tc.want, src)
			}
			if tc.want == "serial" && strings.Contains(src, "k0_n") {
				t.Errorf("the causal walk counts its tiles as a spread loop:\n%s", src)
			}
			if !drawn {
				return
			}
			w := p.smem.walk
			if !strings.Contains(src, "int* __restrict__ "+counterParam+") {\n  extern __shared__") {
				t.Errorf("the counter is not the kernel's last parameter")
			}
			producer := src[strings.Index(src, "if (tid == 256)"):strings.Index(src, "setmaxnreg_inc")]
			consumers := src[strings.Index(src, "setmaxnreg_inc"):]
			ticket := "((volatile int*)(smem + " + strconv.Itoa(w.tickets) + "))[(k0_n % 2)]"
			inOrder(t, "producer", producer,
				"int ticket = 0 + "+blockLinear+";",
				"const int k0 = ticket;",
				"tl::mbar_wait(tl::smem_addr(smem + "+strconv.Itoa(w.empty)+") + 8 * (k0_n % 2), ((k0_n / 2) & 1) ^ 1);",
				ticket+" = k0;",
				"if (k0 >= 256) {",
				"if (k0 == 256 + "+blockCount+" - 1) atomicExch(walk_counter, 0);",
				"tl::mbar_arrive(tl::smem_addr(smem + "+strconv.Itoa(w.full)+") + 8 * (k0_n % 2));",
				"break;",
				"ticket = 0 + "+blockCount+" + atomicAdd(walk_counter, 1);",
				"tl::mbar_arrive_expect_tx(tl::smem_addr(smem + "+strconv.Itoa(w.full)+") + 8 * ((k0_n % 2)), 32768);",
			)
			wait := "tl::mbar_wait(tl::smem_addr(smem + " + strconv.Itoa(w.full) + ") + 8 * (k0_n % 2), (k0_n / 2) & 1);"
			if n := strings.Count(consumers, wait); n != 1 {
				t.Errorf("the consumers wait for the walk's slot %d times, want once", n)
			}
			inOrder(t, "consumers", consumers,
				"int k0_n = 0;",
				"for (;; ++k0_n) {",
				wait,
				"const int k0 = tl::lane0_read((volatile int*)(smem + "+strconv.Itoa(w.tickets)+") + (k0_n % 2));",
				"if (k0 >= 256) break;",
				"if (tid >= 128 && k0_n == 0) tl::bar_arrive(2, 256);",
				"if (tid < 128 && k0_n > 0) tl::bar_sync(2, 256);",
			)
			if strings.Contains(consumers, "atomicAdd") {
				t.Errorf("the consumers draw tiles")
			}
		})
	}
}

// inOrder checks that src holds each of want, in order.
func inOrder(t *testing.T, what, src string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(src[at:], w)
		if i < 0 {
			t.Errorf("%s: no %q after offset %d in\n%s", what, w, at, src)
			return
		}
		at += i + len(w)
	}
}

// TestLateStart: a dealt walk with Kernel.LateStart (FlashAttention's persistent
// walk asks for it, kernels.lateCycles) delays the blocks past the partial
// last round's, once, before anything else; a drawn walk, a causal walk
// over pairs (a serial loop) and TILEGO_LATE=0 have no delay.
func TestLateStart(t *testing.T) {
	s := kernels.AttnShape{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16} // 256 tiles
	causal := s
	causal.Causal, causal.Sq, causal.Skv = true, 1024, 1024
	pp := kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true}
	draw := pp
	draw.Draw = true
	spin := "if (((256 - 0) % " + blockCount + ") != 0 && " + blockLinear + " >= ((256 - 0) % " + blockCount + ")) tl::spin_cycles(" // 2·128·1000·256 FLOPs / 8640
	for _, tc := range []struct {
		name string
		s    kernels.AttnShape
		c    kernels.AttnConfig
		env  string // SwitchLate forced: "0" off
		want string // the delay's cycles, or "" for none
	}{
		{"dealt", s, pp, "", "7585"},
		{"turned off", s, pp, "0", ""},
		{"drawn", s, draw, "", ""},
		{"no producer", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true}, "", "7585"},
		{"causal pairs", causal, pp, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := compileAttn(t, tc.s, tc.c, "sm_90a", forced(SwitchLate, tc.env)).Source
			n := strings.Count(src, "tl::spin_cycles(")
			if tc.want == "" {
				if n != 0 {
					t.Errorf("%d delays, want none:\n%s", n, src)
				}
				return
			}
			if n != 1 || !strings.Contains(src, spin+tc.want+");") {
				t.Fatalf("%d delays, want one of %s cycles (%q…):\n%s", n, tc.want, spin, src)
			}
			if i, j := strings.Index(src, "tl::spin_cycles("), strings.Index(src, "tl::mbar_init"); j >= 0 && i > j {
				t.Errorf("the delay comes after the barriers' set-up")
			}
		})
	}
}
