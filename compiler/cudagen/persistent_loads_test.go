package cudagen

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// A persistent walk with a producer has the producer load each tile's
// query tile by TMA, two buffers where they fit: the consumers wait for it
// where the copy stood and free it after the main loop, and the output's
// staging tile gets bytes of its own. Where two buffers do not fit, one;
// where one does not either, or there is no producer or no walk, the
// consumers load it with cp.async as before. With the softmax overlapped
// (Deferred P·V, whose waits are placed lazily) the consumers free it in
// the main loop's last iteration, once its Q·Kᵀ is waited for, so the next
// query tile loads under the last P·V; a loop with no iteration frees it
// after.
func TestWalkLoads(t *testing.T) {
	s := kernels.AttnShape{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16}
	d256 := s
	d256.Dqk, d256.Dv = 256, 256
	for _, tc := range []struct {
		name   string
		s      kernels.AttnShape
		c      kernels.AttnConfig
		stages int // the query tile's buffers loaded by the producer; 0: the consumers load it
	}{
		{"ws persistent", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true}, 2},
		{"ws persistent n128", s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Persistent: true}, 2},
		{"ws overlap persistent", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, 2},
		{"ws overlap persistent n128", s, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, 2}, // K and V rings of 2 (split_rings.go)
		{"one buffer fits", s, kernels.AttnConfig{M: 128, N: 160, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, 1},
		{"none fits", s, kernels.AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true}, 0},
		{"d256 direct", d256, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true, Direct: true}, 1},
		{"d256 none fits", d256, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true}, 0},
		{"no producer", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true}, 0},
		{"no walk", s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compileAttn(t, tc.s, tc.c, "sm_90a")
			src := p.Source
			if tc.stages == 0 {
				if p.smem.walk != nil || strings.Contains(src, "(k0_n % ") || !strings.Contains(src, "tl::cp_async16(") {
					t.Errorf("the query tile is not the consumers' cp.async:\n%s", src)
				}
				return
			}
			w := p.smem.walk
			if w == nil || w.stages != tc.stages || len(w.copies) != 1 || w.copies[0].Dst.Buf.Name != "qs" {
				t.Fatalf("walk plan %+v, want the query tile in %d buffer(s)", w, tc.stages)
			}
			// FlashAttention's non-causal walk is a Spread loop: its slots
			// go by the count of its tiles (grid_loop.go).
			slot, use := fmt.Sprintf("(k0_n %% %d)", tc.stages), fmt.Sprintf("(k0_n / %d)", tc.stages)
			for _, want := range []string{
				"+ 8 * " + slot + ", (" + use + " & 1) ^ 1);", // the producer waits for the buffer
				"tl::mbar_arrive_expect_tx(tl::smem_addr(smem + " + strconv.Itoa(w.full) + ") + 8 * (" + slot + "), " + strconv.Itoa(128*tc.s.Dqk*2) + ");",
				"tl::mbar_wait(tl::smem_addr(smem + " + strconv.Itoa(w.full) + ") + 8 * " + slot + ", " + use + " & 1);", // the consumers, for it
				"if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + " + strconv.Itoa(w.empty) + ") + 8 * " + slot + ");",
			} {
				if !strings.Contains(src, want) {
					t.Errorf("no %q in\n%s", want, src)
				}
			}
			release := "__syncwarp();\n" + strings.Repeat(" ", 10) + "if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + " + strconv.Itoa(w.empty) + ")"
			early, late := strings.Index(src, "if (k1 == hi - 1) {\n"+strings.Repeat(" ", 10)+release), strings.Index(src, "if (hi <= lo) {")
			switch {
			case !tc.c.Overlap && (early >= 0 || late >= 0):
				t.Errorf("without Deferred statements the query tile is freed in the loop (%d) or under a guard (%d)", early, late)
			case tc.c.Overlap && (early < 0 || late < early):
				t.Errorf("the query tile is not freed in the last iteration (%d), then after a loop with none (%d):\n%s", early, late, src)
			case tc.c.Overlap && (early < strings.LastIndex(src, "_ss_bf16") || early > strings.LastIndex(src, "_rs_bf16")):
				t.Errorf("the query tile is freed at %d: not between the last Q·Kᵀ and the last P·V", early)
			}
			if strings.Contains(src, "cp_async16(") {
				t.Errorf("the consumers still load something by cp.async")
			}
			var qs, os *smemBuf
			for b, sb := range p.smem.bufs {
				switch b.Name {
				case "qs":
					qs = sb
				case "os":
					os = sb
				}
			}
			switch {
			case qs.stages != tc.stages:
				t.Errorf("qs has %d buffer(s), want %d", qs.stages, tc.stages)
			case (os == nil) != tc.c.Direct: // Direct stores the output from registers
				t.Errorf("staging tile %+v with Direct %v", os, tc.c.Direct)
			case os != nil && os.off < qs.off+qs.stages*qs.stageBytes && qs.off < os.off+os.stageBytes:
				t.Errorf("qs at %d, %d buffer(s) of %d; os at %d: they share bytes", qs.off, qs.stages, qs.stageBytes, os.off)
			}
			// The release comes before the epilogue.
			if r, e := strings.Index(src, "mbar_arrive(tl::smem_addr(smem + "+strconv.Itoa(w.empty)), strings.Index(src, "tma_store_"); r < 0 || e < r && !tc.c.Direct {
				t.Errorf("the query tile is freed at %d, the output stored at %d", r, e)
			}
		})
	}
}

// planWalkEarly picks the last of the loop's own statements that reads a
// walk's tile, and gives up when a Deferred statement reads one (it runs
// an iteration late, the last iteration's after the loop) or none does.
func TestPlanWalkEarly(t *testing.T) {
	buf := func(name string, scope ir.Scope) *ir.Buffer { return &ir.Buffer{Name: name, Scope: scope} }
	q, k, v, s, p, acc := buf("qs", ir.Shared), buf("ks", ir.Shared), buf("vs", ir.Shared), buf("S", ir.Fragment), buf("P", ir.Fragment), buf("acc", ir.Fragment)
	gemm := func(a, b, c *ir.Buffer) *ir.Gemm {
		return &ir.Gemm{A: ir.Region{Buf: a}, B: ir.Region{Buf: b}, C: ir.Region{Buf: c}}
	}
	fill := func(b *ir.Buffer) *ir.Fill { return &ir.Fill{Dst: ir.Region{Buf: b}, Value: &ir.Const{}} }
	qk, qk2, pv, qv := gemm(q, k, s), gemm(q, v, s), gemm(p, v, acc), gemm(q, v, acc)
	w := &walkLoad{bufs: map[*ir.Buffer]bool{q: true}}
	for _, tc := range []struct {
		name string
		body []ir.Stmt
		want ir.Stmt // nil: no early release
	}{
		{"Q·Kᵀ then a deferred P·V", []ir.Stmt{qk, fill(p), &ir.Deferred{Body: []ir.Stmt{pv}}}, qk},
		{"the later of two readers", []ir.Stmt{qk, qk2, &ir.Deferred{Body: []ir.Stmt{pv}}}, qk2},
		{"a deferred statement reads it", []ir.Stmt{qk, &ir.Deferred{Body: []ir.Stmt{qv}}}, nil},
		{"nothing reads it", []ir.Stmt{fill(s), &ir.Deferred{Body: []ir.Stmt{pv}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planWalkEarly(w, tc.body, "k1")
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("early release after %T, want none", got.last)
			case tc.want != nil && (got == nil || got.last != tc.want || got.v != "k1"):
				t.Errorf("got %+v, want the release after %p", got, tc.want)
			}
		})
	}
}

// With two wgmmas reading the walk's tile, retiring the first frees
// nothing: the tiles are freed once the last reader is emitted and no
// wgmma that reads them is in flight.
func TestWalkReleaseEarlyWaitsForLastReader(t *testing.T) {
	q, k, s := &ir.Buffer{Name: "qs", Scope: ir.Shared}, &ir.Buffer{Name: "ks", Scope: ir.Shared}, &ir.Buffer{Name: "S", Scope: ir.Fragment}
	first := &ir.Gemm{A: ir.Region{Buf: q}, B: ir.Region{Buf: k}, C: ir.Region{Buf: s}}
	second := &ir.Gemm{A: ir.Region{Buf: q}, B: ir.Region{Buf: k}, C: ir.Region{Buf: s}}
	w := &walkLoad{loop: &ir.For{Var: &ir.Var{Name: "k0"}, Start: &ir.Const{T: ir.I32}}, bufs: map[*ir.Buffer]bool{q: true}, stages: 1, empty: 64}
	e := &emitter{c: &compilation{}, stage: map[*ir.Buffer]string{}}
	e.waits = &wgmmaWaits{early: &walkEarly{w: w, last: second, v: "k1"}}
	released := func() bool { return strings.Contains(e.b.String(), "if (k1 == hi - 1)") }
	for _, step := range []struct {
		name string
		do   func()
		want bool
	}{
		{"first issued", func() { e.lazyNote(first); e.walkReadDone(first) }, false},
		{"first retired", func() { e.waitUpTo(0) }, false},
		{"second issued", func() { e.lazyNote(second); e.walkReadDone(second) }, false},
		{"second retired", func() { e.waitUpTo(0) }, true},
	} {
		step.do()
		if released() != step.want {
			t.Fatalf("after %s: released %v, want %v:\n%s", step.name, released(), step.want, e.b.String())
		}
	}
	if n := strings.Count(e.b.String(), "tl::mbar_arrive(tl::smem_addr(smem + 64)"); n != 1 {
		t.Errorf("%d arrivals on the empty barrier, want 1:\n%s", n, e.b.String())
	}
}

// The first tiles first is a hint: MLA's split kernel asks for it (its
// emit test, kernels/mla_emit_test.go), FlashAttention's walks, which have
// the same producer shape without Overlap, do not, and get no such wait;
// the IR printer names the hint.
func TestFirstTilesFirstAsked(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 16, HKV: 16, Sq: 1024, Skv: 1024, Dqk: 128, Dv: 128, DType: ir.BF16}
	c := kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Persistent: true}
	if src := compileAttn(t, s, c, "sm_90a").Source; strings.Contains(src, "the first tiles first") {
		t.Error("a FlashAttention walk that did not ask has the first fill's wait")
	}
	mla := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}
	f, err := kernels.MLADecodeSplit(kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}, mla).Build()
	if err != nil {
		t.Fatal(err)
	}
	if !f.Kernel.FirstTilesFirst || !strings.Contains(f.String(), "first tiles first") {
		t.Errorf("MLA's split kernel: FirstTilesFirst %v, or its IR does not print it", f.Kernel.FirstTilesFirst)
	}
}
