package cuda

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

// Where a seesaw body's blocks A1, B, A2 wait and hand over: B waits for
// A1 before it first touches what A1 writes (or what A2 of the iteration
// before still reads, the ring's slots aside), A1 hands over after its last
// write of what B uses; A2 waits for B likewise, and B hands over after its
// last statement that A2 or the next A1 conflicts with.
func TestPlanSeesaw(t *testing.T) {
	buf, cp, wg := planBuf, planCopy, planBlock
	ringA, ringB := buf("ring_a", ir.Shared), buf("ring_b", ir.Shared)
	pa, pb, m, x := buf("pa", ir.Shared), buf("pb", ir.Shared), buf("m", ir.Shared), buf("x", ir.Shared)
	f, g := buf("f", ir.Fragment), buf("g", ir.Fragment)
	rings := map[*ir.Buffer]bool{ringA: true, ringB: true}
	for _, tc := range []struct {
		name         string
		rest         []ir.Stmt
		nil          bool
		wait, arrive []int
	}{
		// MLA's: A1 scores ring_a, reads the maximum m and writes it and
		// pa; B scores ring_b, takes pa, writes m and pb; A2 takes pb.
		{"mla", []ir.Stmt{
			wg(0, cp(ringA, f), cp(m, f), cp(f, m), cp(f, pa), cp(ringA, f)),
			wg(1, cp(ringB, g), cp(pa, g), cp(m, g), cp(g, m), cp(g, pb), cp(ringA, g)),
			wg(0, cp(pb, f), cp(ringB, f)),
		}, false, []int{-1, 1, 0}, []int{3, 4, -1}},
		// A2 reads nothing of B's: it still takes the hand-over, at its end,
		// for the next A1 (which reads m).
		{"late", []ir.Stmt{
			wg(0, cp(m, f), cp(f, pa)),
			wg(1, cp(pa, g), cp(g, m)),
			wg(0, cp(f, f)),
		}, false, []int{-1, 0, 1}, []int{1, 1, -1}},
		// B zeroes its own slot before A1's hand-over; A2 of the iteration
		// before reads that ring too, but its slot is another's fill.
		{"ring before wait", []ir.Stmt{
			wg(0, cp(f, pa)),
			wg(1, cp(g, ringB), cp(pa, g)),
			wg(0, cp(ringB, f)),
		}, false, []int{-1, 1, 0}, []int{0, 1, -1}},
		{"nothing handed over", []ir.Stmt{wg(0, cp(f, pa)), wg(1, cp(g, x)), wg(0, cp(f, f))}, true, nil, nil},
		{"same warpgroup", []ir.Stmt{wg(0, cp(f, pa)), wg(0, cp(pa, g)), wg(0, cp(f, f))}, true, nil, nil},
		{"last of another", []ir.Stmt{wg(0, cp(f, pa)), wg(1, cp(pa, g)), wg(1, cp(f, f))}, true, nil, nil},
		{"not a block", []ir.Stmt{wg(0, cp(f, pa)), wg(1, cp(pa, g)), cp(f, f)}, true, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := planHandoff(tc.rest, rings)
			switch {
			case tc.nil && h != nil:
				t.Fatalf("a plan (%+v) where there is none", h)
			case tc.nil:
				return
			case h == nil:
				t.Fatal("no plan")
			}
			if !slices.Equal(h.wait, tc.wait) || !slices.Equal(h.arrive, tc.arrive) {
				t.Errorf("waits %v, arrivals %v; want %v, %v", h.wait, h.arrive, tc.wait, tc.arrive)
			}
			if !slices.Equal(h.waitBar, []int{0, handBar, handBar + 1}) || !slices.Equal(h.arriveBar, []int{handBar, handBar + 1, 0}) {
				t.Errorf("barriers: waits %v, arrivals %v", h.waitBar, h.arriveBar)
			}
		})
	}
}

// MLA's seesaw on sm_90a: a producer fills a one-slot ring for each page of
// a pair; each warpgroup waits for a page's slot before it first touches it
// and frees it after its multiplies by it are done; the blocks hand over
// on two mbarriers (A1 to B, then B to A2), a phase an iteration each,
// and meet no barrier of all consumers in the loop.
func TestEmitSeesaw(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 1, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true, Seesaw: true}
	src := compileMLA(t, s, c, "sm_90a").Source
	at := strings.Index(src, "tl::setmaxnreg_inc") // the consumers
	if at < 0 {
		t.Fatalf("no producer warpgroup:\n%s", src)
	}
	bars := regexp.MustCompile(`for \(int s = 0; s < 4; \+\+s\) tl::mbar_init\(tl::smem_addr\(smem \+ (\d+)\) \+ 8 \* s, 128\);`).FindStringSubmatch(src)
	if bars == nil {
		t.Fatalf("no hand-off and warpgroup mbarriers of 128 arrivals:\n%s", src)
	}
	ab, _ := strconv.Atoi(bars[1]) // A1 to B; B to A2 is the next
	arrive := func(at int) string { return fmt.Sprintf("tl::mbar_arrive(tl::smem_addr(smem + %d));", at) }
	wait := func(at int) string { return fmt.Sprintf("tl::mbar_wait(tl::smem_addr(smem + %d), (k0 - lo) & 1);", at) }
	order := []string{
		"for (int k0 = lo; k0 < hi; ++k0) {",
		"if (tid / 128 == 0) {", // A1
		"// [kvs]",              // its page's slot
		"wgmma_m64n64k16_ss_bf16",
		arrive(ab),
		"wgmma_m64n256k16_rs_bf16<1>(&acc0[0]",
		"tl::wgmma_wait<0>();",
		"// done with [kvs]",
		"if (tid / 128 == 1) {", // B
		"// [kvs_b]",
		"wgmma_m64n64k16_ss_bf16",
		wait(ab),
		"// [kvs]",
		"wgmma_m64n256k16_ss_bf16<0, 1>(&acc1[0]", // A's P from shared memory
		arrive(ab + 8),
		"// done with [kvs]", // once A's multiply is waited for
		"wgmma_m64n256k16_rs_bf16<1>(&acc1[0]",
		"// done with [kvs_b]",
		"if (tid / 128 == 0) {", // A2
		wait(ab + 8),
		"// [kvs_b]",
		"wgmma_m64n256k16_ss_bf16<0, 1>(&acc0[0]",
		"// done with [kvs_b]",
	}
	rest := src[at:]
	for _, want := range order {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("no %q in order in\n%s", want, src[at:])
		}
		rest = rest[i+len(want):]
	}
	loop := src[at:]
	loop = loop[strings.Index(loop, "for (int k0 = lo; k0 < hi; ++k0) {"):]
	loop = loop[:strings.LastIndex(loop, "// done with [kvs_b]")]
	if strings.Contains(loop, "bar_sync(1, 256)") {
		t.Errorf("a barrier of all consumers in the page loop:\n%s", loop)
	}
	if strings.Contains(src, "nothing to hand back yet") {
		t.Error("a seesaw hands nothing back before its loop: every arrival is taken in the iteration")
	}
	// The producer: page A's slot, then B's, each on its own barriers.
	prod := src[:at]
	a, b := strings.Index(prod, "(smem + 73728)"), strings.Index(prod, "(smem + 148480)")
	if a < 0 || b < a {
		t.Errorf("the producer does not fill A's slot and then B's:\n%s", prod)
	}
}
