package cudagen

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Where a loop body of two warpgroup blocks waits and hands over: at the
// first statement that needs the other's tiles, and after the last one the
// other needs; the ring's buffers count within an iteration only. B, when
// its last statement is the last that uses A's tiles, hands them back at
// its next wait (lateBack) rather than arriving (-1).
func TestPlanHandoff(t *testing.T) {
	buf, cp, wg := planBuf, planCopy, planBlock
	ring, p, f, g, x := buf("ring", ir.Shared), buf("p", ir.Shared), buf("f", ir.Fragment), buf("g", ir.Fragment), buf("x", ir.Shared)
	rings := map[*ir.Buffer]bool{ring: true}
	for _, tc := range []struct {
		name         string
		rest         []ir.Stmt
		nil          bool
		wait, arrive [2]int
		late         bool
	}{
		// A reads the ring, writes p; B reads p: A hands over after its
		// write, B waits before its read, and A waits for p back only
		// before it writes p again (after its read of the ring).
		{"mla", []ir.Stmt{wg(0, cp(ring, f), cp(f, p), cp(ring, f)), wg(1, cp(g, g), cp(p, g))}, false, [2]int{1, 1}, [2]int{1, -1}, true},
		// A writes the ring (its slot) that B reads: handed over in the
		// iteration, and back no earlier than that (the barriers alternate).
		{"ring only", []ir.Stmt{wg(0, cp(f, ring), cp(f, f)), wg(1, cp(g, g), cp(ring, g))}, false, [2]int{0, 1}, [2]int{0, -1}, true},
		// A zeroes its slot of the ring first, then writes p: within the
		// iteration B waits from its first statement, but A waits for p
		// back only before its write of p (the ring's next slot is another).
		{"zeroed ring", []ir.Stmt{wg(0, cp(f, ring), cp(f, f), cp(f, p)), wg(1, cp(ring, g), cp(p, g))}, false, [2]int{2, 0}, [2]int{2, -1}, true},
		// B works on after its read of p: it hands p back by arriving.
		{"work after", []ir.Stmt{wg(0, cp(ring, f), cp(f, p)), wg(1, cp(p, g), cp(g, g))}, false, [2]int{1, 0}, [2]int{1, 0}, false},
		{"nothing shared", []ir.Stmt{wg(0, cp(f, p)), wg(1, cp(g, x))}, true, [2]int{}, [2]int{}, false},
		{"same warpgroup", []ir.Stmt{wg(1, cp(f, p)), wg(1, cp(p, g))}, true, [2]int{}, [2]int{}, false},
		{"three statements", []ir.Stmt{wg(0, cp(f, p)), wg(1, cp(p, g)), cp(f, f)}, true, [2]int{}, [2]int{}, false},
		{"not a block", []ir.Stmt{wg(0, cp(f, p)), cp(p, g)}, true, [2]int{}, [2]int{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := planHandoff(tc.rest, rings)
			switch {
			case tc.nil && h != nil:
				t.Fatalf("a plan (%+v) where there is nothing to hand over", h)
			case tc.nil:
				return
			case h == nil:
				t.Fatal("no plan")
			}
			if !slices.Equal(h.wait, tc.wait[:]) || !slices.Equal(h.arrive, tc.arrive[:]) || h.lateBack != tc.late {
				t.Errorf("waits %v, arrivals %v, late %v; want %v, %v, %v", h.wait, h.arrive, h.lateBack, tc.wait, tc.arrive, tc.late)
			}
		})
	}
}

// planBuf, planCopy and planBlock make the tiles, copies and warpgroup
// blocks of the hand-off plans' tests.
func planBuf(name string, scope ir.Scope) *ir.Buffer {
	return &ir.Buffer{Name: name, DType: ir.F32, Scope: scope, Shape: []ir.Expr{ir.IntConst(64)}}
}

func planCopy(src, dst *ir.Buffer) ir.Stmt { return &ir.Copy{Src: ir.Whole(src), Dst: ir.Whole(dst)} }

func planBlock(i int, body ...ir.Stmt) *ir.Warpgroup { return &ir.Warpgroup{Index: i, Body: body} }

// MLA under Handoff: the page loop has no barrier of all consumers;
// warpgroup 0 issues its own P·V from registers, then waits for P back,
// writes P and hands it over (an mbarrier) while the tensor cores run
// that multiply, and only then waits for it; warpgroup 1 takes P first
// thing and hands it back by meeting warpgroup 0 before it takes the next
// page's (a non-aligned barrier.sync on both sides); the halves of O
// share registers. Warpgroup 0's own barrier is an mbarrier too.
func TestEmitHandoff(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}
	src := compileMLA(t, s, c, "sm_90a").Source
	// The hand-offs' mbarriers and the warpgroups' own, 128 arrivals each.
	bars := regexp.MustCompile(`for \(int s = 0; s < 4; \+\+s\) tl::mbar_init\(tl::smem_addr\(smem \+ (\d+)\) \+ 8 \* s, 128\);`).FindStringSubmatch(src)
	if bars == nil {
		t.Fatalf("no hand-off and warpgroup barriers of 128 arrivals:\n%s", src)
	}
	hand, _ := strconv.Atoi(bars[1])
	own := fmt.Sprintf("tl::mbar_arrive_wait(tl::smem_addr(smem + %d)); // warpgroup 0's own", hand+16)
	order := []string{
		"float acc0[128];",
		"float (&acc1)[128] = acc0;",
		"for (int k0 = lo; k0 < hi; ++k0) {",
		"if (tid / 128 == 0) {",
		"for (int idx = tid % 128; idx < 32768; idx += 128) {",                      // warpgroup 0 zeroes an edge page's V columns
		"wgmma_m64n64k16_ss_bf16",                                                   // its scores
		"wgmma_m64n256k16_rs_bf16<1>(&acc0[0], P[0], P[1], P[2], P[3]",              // its own P from registers
		"tl::bar_sync_apart(9, 256);",                                               // P back from warpgroup 1, the multiply in flight
		fmt.Sprintf("tl::mbar_arrive(tl::smem_addr(smem + %d)); // hand-off", hand), // P to warpgroup 1
		"tl::wgmma_wait<0>();",                                                      // its multiply
		"if (tid / 128 == 1) {",
		"tl::bar_sync_apart(9, 256);",                                                // the last page's P back to warpgroup 0
		fmt.Sprintf("tl::mbar_wait(tl::smem_addr(smem + %d), (k0 - lo) & 1);", hand), // the page's P, one phase a page
		"tl::desc(db_base + (256) * 2 / 128 * 8192 + 0, 8192, 1024, 1)",              // its half of V
		"tl::wgmma_wait<0>();",
		"tl::bar_sync(9, 256); // the last hand-back", // after the loop, both warpgroups
	}
	at := 0
	for _, want := range order {
		i := strings.Index(src[at:], want)
		if i < 0 {
			t.Fatalf("no %q after offset %d in\n%s", want, at, src)
		}
		at += i + len(want)
	}
	if strings.Contains(src, "bar_arrive(9,") {
		t.Errorf("warpgroup 1 hands P back by bar.arrive:\n%s", src)
	}
	if strings.Contains(src, "bar_arrive(8,") || strings.Contains(src, "bar_sync(8,") || strings.Contains(src, "bar_sync(4, 128)") {
		t.Errorf("a named barrier where the hand-off or warpgroup 0's own barrier is an mbarrier:\n%s", src)
	}
	pv := src[strings.Index(src, "wgmma_m64n256k16_rs_bf16<1>(&acc0[0]"):]
	if pv = pv[:strings.Index(pv, "// hand-off to the other warpgroup")]; strings.Contains(pv, "wgmma_wait") {
		t.Errorf("warpgroup 0 waits for its P·V before handing P over:\n%s", pv)
	}
	loop := src[strings.Index(src, "for (int k0 = lo; k0 < hi; ++k0) {\n      tl::mbar_wait(tl::smem_addr(smem + 229632)"):]
	loop = loop[:strings.Index(loop, "tl::bar_sync(9, 256); // the last hand-back")]
	if strings.Contains(loop, "bar_sync(1, 256)") {
		t.Errorf("a barrier of all consumers in the page loop:\n%s", loop)
	}
	// Warpgroup 0's own barrier only on an edge page (around its zeroing).
	edge := loop[strings.Index(loop, "if ((((k0 * 64) + 64) > L[(0)])) {"):]
	edge = edge[:strings.Index(edge, "const int wg = 0;")]
	if n, m := strings.Count(loop, own), strings.Count(edge, own); n != m || m == 0 {
		t.Errorf("%d of warpgroup 0's %d barriers outside the edge page's branch:\n%s", n-m, n, loop)
	}
}

// With V0 the warpgroups hold unequal shares of O: warpgroup 0 multiplies
// V's first 192 columns from registers in one instruction, warpgroup 1 the
// other 320 in two (256 and 64 wide, the second into its registers from
// 128 on and V's columns from 448), and the two share one array of the
// longer share's 160 registers, not S's.
func TestEmitHandoffUnequal(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true, V0: 192}
	src := compileMLA(t, s, c, "sm_90a").Source
	for _, want := range []string{
		"float acc0[160];",
		"float (&acc1)[160] = acc0;",
		"wgmma_m64n192k16_rs_bf16<1>(&acc0[0], P[0], P[1], P[2], P[3], tl::desc(db_base + 0, 8192, 1024, 1), 1);",
		"wgmma_m64n256k16_ss_bf16<0, 1>(&acc1[0], tl::desc(da_base + (wg * 64 + 0) * 128 + 0, 16, 1024, 1), tl::desc(db_base + (192) * 2 / 128 * 8192 + 0, 8192, 1024, 1), 1);",
		"wgmma_m64n64k16_ss_bf16<0, 1>(&acc1[128], tl::desc(da_base + (wg * 64 + 0) * 128 + 96, 16, 1024, 1), tl::desc(db_base + (192 + 256) * 2 / 128 * 8192 + 6144, 8192, 1024, 1), 1);",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	if strings.Contains(src, "= S;") {
		t.Errorf("an accumulator in S's registers:\n%s", src)
	}
}

// The warpgroup blocks' mbarriers go after everything else in shared
// memory, two for hand-offs and one a consumer warpgroup, only where a
// kernel has warpgroup blocks and the bytes fit; else (or for B's
// hand-back) the hand-offs stay on named barriers.
func TestPlanHandBars(t *testing.T) {
	limit := ir.DefaultLimits.MaxSharedBytes
	block := []ir.Stmt{planBlock(0, planCopy(planBuf("f", ir.Fragment), planBuf("p", ir.Shared)))}
	for _, tc := range []struct {
		name      string
		body      []ir.Stmt
		total     int
		consumers int
		hand      int // want: the offset, or -1
		newTotal  int
	}{
		{"two warpgroups", block, 1000, 256, 1000, 1032},
		{"aligned to 8", block, 1001, 256, 1008, 1040},
		{"three warpgroups", block, 1000, 384, 1000, 1040},
		{"no warpgroup blocks", []ir.Stmt{planCopy(planBuf("f", ir.Fragment), planBuf("p", ir.Shared))}, 1000, 256, -1, 1000},
		{"fits exactly", block, limit - 32, 256, limit - 32, limit},
		{"no room", block, limit - 24, 256, -1, limit - 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &compilation{
				f:    &ir.Func{Kernel: &ir.Kernel{Body: tc.body}},
				opts: Options{Arch: "sm_90a"},
				ws:   &wsPlan{consumers: tc.consumers},
				smem: &smemPlan{total: tc.total},
			}
			planHandBars(c)
			if c.ws.hand != tc.hand || c.smem.total != tc.newTotal {
				t.Fatalf("hand %d, total %d; want %d, %d", c.ws.hand, c.smem.total, tc.hand, tc.newTotal)
			}
			e := &emitter{c: c}
			two := &handoff{blocks: make([]*ir.Warpgroup, 2)}
			want := func(at int) int {
				if tc.hand < 0 {
					return -1
				}
				return tc.hand + at
			}
			for _, x := range []struct {
				h    *handoff
				bar  int
				want int
			}{{two, handBar, want(0)}, {two, handBar + 1, -1}} {
				if got := e.handMbar(x.h, x.bar); got != x.want {
					t.Errorf("%d blocks, barrier %d: mbarrier at %d, want %d", len(x.h.blocks), x.bar, got, x.want)
				}
			}
		})
	}
}

// Without a producer, a kernel with warpgroup blocks gets one mbarrier a
// warpgroup for their own barriers where the arch has mbarriers and its
// shared memory has room (sm_86: 99 KiB); else they stay named barriers.
func TestPlanRoleBars(t *testing.T) {
	block := []ir.Stmt{planBlock(0, planCopy(planBuf("f", ir.Fragment), planBuf("p", ir.Shared)))}
	for _, tc := range []struct {
		name     string
		arch     string
		body     []ir.Stmt
		threads  int
		total    int
		at       int // want: the offset, or -1
		newTotal int
		mbar1    int // want: warpgroup 1's mbarrier
	}{
		{"sm_80", "sm_80", block, 256, 1001, 1008, 1024, 1016},
		{"sm_90a, three warpgroups", "sm_90a", block, 384, 1000, 1000, 1024, 1008},
		{"no warpgroup blocks", "sm_80", []ir.Stmt{planCopy(planBuf("f", ir.Fragment), planBuf("p", ir.Shared))}, 256, 1000, -1, 1000, -1},
		{"fits sm_86 exactly", "sm_86", block, 256, 99*1024 - 16, 99*1024 - 16, 99 * 1024, 99*1024 - 8},
		{"no room on sm_86", "sm_86", block, 256, 99*1024 - 8, -1, 99*1024 - 8, -1},
		{"no mbarriers before sm_80", "sm_75", block, 256, 1000, -1, 1000, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &compilation{
				f:    &ir.Func{Kernel: &ir.Kernel{Body: tc.body, Threads: tc.threads}},
				opts: Options{Arch: tc.arch},
				smem: &smemPlan{total: tc.total},
			}
			planHandBars(c)
			if c.roleBars != tc.at || c.smem.total != tc.newTotal {
				t.Fatalf("at %d, total %d; want %d, %d", c.roleBars, c.smem.total, tc.at, tc.newTotal)
			}
			if got := c.roleMbar(1); got != tc.mbar1 {
				t.Errorf("warpgroup 1's mbarrier at %d, want %d", got, tc.mbar1)
			}
		})
	}
}
