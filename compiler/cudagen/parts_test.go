package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// MLA's hand-off loop frees its page slots in two parts: the panels only
// warpgroup 0 uses (V's first half, the rope columns) on barriers of its 4
// warps, the rest on barriers of all 8; the producer issues the first part
// once it is free, with the whole page's bytes expected, then waits for
// the second. Without warpgroup blocks, in clusters, or with TILEGO_PARTS=0,
// a slot is freed whole.
func TestEmitParts(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	handoff := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}
	p := compileMLA(t, s, handoff, "sm_90a")
	src := p.Source
	for _, want := range []string{
		"if ((1 >> (tid / 128)) & 1) tl::mbar_arrive(", // warpgroup 0's part
		", 4);", // its barriers: 4 warps
	} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	// The producer: panels 0-3 and 8 (V's first 256 columns, the rope's 64),
	// then a wait, then panels 4-7.
	i := strings.Index(src, "&tm0, 0 + 512,")
	j := strings.Index(src, "&tm0, 0 + 256,")
	if i < 0 || j < 0 || i > j || !strings.Contains(src[i:j], "tl::mbar_wait(") {
		t.Errorf("the rope panel (at %d) is not issued before a wait and V's second half (at %d)", i, j)
	}
	if n := strings.Count(src, "tl::mbar_arrive_expect_tx("); n != 1 { // the page's, once (Q is the consumers' copy here)
		t.Errorf("%d expect_tx, want the page's once", n)
	}

	for name, c := range map[string]kernels.MLAConfig{
		"roles":   {M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true},
		"cluster": {M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true, Cluster: 2},
	} {
		if src := compileMLA(t, s, c, "sm_90a").Source; strings.Contains(src, "(tid / 128)) & 1) tl::mbar_arrive(") {
			t.Errorf("%s: a slot freed in parts", name)
		}
	}
	if src := compileMLA(t, s, handoff, "sm_90a", Switches{SwitchParts: false}).Source; strings.Contains(src, "(tid / 128)) & 1) tl::mbar_arrive(") {
		t.Error("SwitchParts off: a slot freed in parts")
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

func TestColsUsed(t *testing.T) {
	kv := &ir.Buffer{Name: "kv", DType: ir.BF16, Scope: ir.Shared, Shape: []ir.Expr{ir.IntConst(64), ir.IntConst(576)}}
	other := &ir.Buffer{Name: "q", DType: ir.BF16, Scope: ir.Shared, Shape: []ir.Expr{ir.IntConst(64), ir.IntConst(576)}}
	acc := &ir.Buffer{Name: "acc", DType: ir.F32, Scope: ir.Fragment, Shape: []ir.Expr{ir.IntConst(64), ir.IntConst(256)}}
	cols := func(b *ir.Buffer, start ir.Expr, n int) ir.Region {
		return ir.Region{Buf: b, Start: []ir.Expr{ir.IntConst(0), start}, Extent: []int{64, n}, Keep: []bool{true, true}}
	}
	v := &ir.Var{Name: "j"}
	for _, tt := range []struct {
		name   string
		body   []ir.Stmt
		lo, hi int
	}{
		{"none", []ir.Stmt{&ir.Gemm{A: ir.Whole(other), B: ir.Whole(other), C: ir.Whole(acc)}}, 576, 0},
		{"whole", []ir.Stmt{&ir.Gemm{A: ir.Whole(other), B: ir.Whole(kv), C: ir.Whole(acc), TransB: true}}, 0, 576},
		{"second half of V", []ir.Stmt{&ir.Gemm{A: ir.Whole(other), B: cols(kv, ir.IntConst(256), 256), C: ir.Whole(acc)}}, 256, 512},
		{"two regions", []ir.Stmt{
			&ir.Gemm{A: ir.Whole(other), B: cols(kv, ir.IntConst(0), 64), C: ir.Whole(acc)},
			&ir.Gemm{A: ir.Whole(other), B: cols(kv, ir.IntConst(512), 64), C: ir.Whole(acc)},
		}, 0, 576},
		{"a start not constant", []ir.Stmt{&ir.Gemm{A: ir.Whole(other), B: cols(kv, v, 64), C: ir.Whole(acc)}}, 0, 576},
		{"an element store", []ir.Stmt{&ir.Store{Buf: kv, Idx: []ir.Expr{ir.IntConst(0), ir.IntConst(5)}, Value: ir.IntConst(0)}}, 0, 576},
		{"inside an if", []ir.Stmt{&ir.If{Cond: ir.IntConst(1), Then: []ir.Stmt{&ir.Gemm{A: ir.Whole(other), B: cols(kv, ir.IntConst(128), 128), C: ir.Whole(acc)}}}}, 128, 256},
	} {
		lo, hi := colsUsed(tt.body, kv, 576)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("%s: columns [%d, %d), want [%d, %d)", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
}
