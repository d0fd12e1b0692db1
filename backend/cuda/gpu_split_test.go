//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// compileSteps builds and compiles steps for arch: the programs and their
// tensors' indices, as PrepareChain and BindChain take them.
func compileSteps(t *testing.T, b *Backend, arch string, steps []kernels.Step) (progs []*cudagen.Program, idx [][]int) {
	t.Helper()
	for _, st := range steps {
		fn, err := st.Func.Build(b.Limits())
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		progs, idx = append(progs, p), append(idx, st.Args)
	}
	return progs, idx
}

// runChainPoisoned compiles steps for arch and runs them twice, in order,
// on one device copy of args, everything a step writes poisoned first; the
// written tensors come back into args, and so do the scratch tensors (which
// a chain does not download), so that a test can see they end zeroed.
func runChainPoisoned(t *testing.T, b *Backend, arch string, steps []kernels.Step, args []*tensor.Tensor) {
	t.Helper()
	progs, idx := compileSteps(t, b, arch, steps)
	c, err := PrepareChain(b, progs, idx, args)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	for range 2 { // twice: what a run leaves behind (the counters of Merge and Early) must serve the next
		if err := c.Poison(); err != nil {
			t.Fatal(err)
		}
		if err := c.Once(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Download(args); err != nil {
		t.Fatal(err)
	}
	for i, p := range progs {
		for j, prm := range p.Func.Params {
			if a := idx[i][j]; prm.Scratch {
				if err := download(b, c.bufs[a], args[a]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// mlaRows is every query row of a batch.
func mlaRows(s kernels.MLAShape, batch int) []kernels.MLARow {
	var rows []kernels.MLARow
	for b := range batch {
		for tok := range s.Sq {
			for h := range s.Hq {
				rows = append(rows, kernels.MLARow{B: b, T: tok, H: h})
			}
		}
	}
	return rows
}

func checkMLAGPU(t *testing.T, s kernels.MLAShape, args []*tensor.Tensor, rows []kernels.MLARow) {
	t.Helper()
	var do, dl ref.Diff
	kernels.CheckMLARows(s, args, rows, &do, &dl)
	if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
}

// MLA decoding over shuffled pages, lengths around the 64-key pages (one
// key, a page but one, a page and one, none), s_q 1 and 2, h_q 16-128,
// bf16 and f16: the single program and the split path (scheduler, uniform
// cuts with empty splits), on both code paths.
func TestGPUMLADecode(t *testing.T) {
	b := openGPU(t)
	type tc struct {
		name  string
		s     kernels.MLAShape
		c     kernels.MLAConfig
		lens  []int32
		split int // 0: single program; -1: the scheduler for 132 SMs; -n: the scheduler for n parts (pieces of several requests a part); n: n uniform cuts
		// hopper: only sm_90a's path builds it (SplitN's row factors need
		// wgmma's layout; two 576-wide pages and Q fit shared memory only
		// by TMA): elsewhere it must fail to compile, saying why.
		hopper bool
	}
	sq1 := kernels.MLAShape{Hq: 16, Sq: 1, DType: ir.BF16}
	sq2 := kernels.MLAShape{Hq: 16, Sq: 2, DType: ir.BF16}
	h128 := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	h128sq2 := kernels.MLAShape{Hq: 128, Sq: 2, DType: ir.F16}
	h64f16 := kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.F16}
	m16 := kernels.MLAConfig{M: 16, Stages: 1, Threads: 128}
	m32 := kernels.MLAConfig{M: 32, Stages: 1, Threads: 128}
	m64 := kernels.MLAConfig{M: 64, Stages: 1, Threads: 256}
	splitN1 := kernels.MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true}
	splitN2 := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true}
	splitNWS := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true}
	roles := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true}
	handoff := roles
	handoff.Handoff = true
	merge := handoff // a request's first piece merges the others: no combine program
	merge.Merge = true
	handoffCl, splitNWSCl := handoff, splitNWS // the two head blocks of a request in a cluster (cluster.go)
	v0, v0Wide := handoff, handoff             // unequal shares of O: warpgroup 1 takes 320 or 384 columns
	v0.V0, v0Wide.V0 = 192, 128
	handoffCl.Cluster, splitNWSCl.Cluster = 2, 2
	// The combine started early, waiting for each request's pieces.
	handoffEarly, splitNWSEarly, m32Early := handoff, splitNWS, m32
	handoffEarly.Early, splitNWSEarly.Early, m32Early.Early = true, true, true
	cases := []tc{
		{"sq1_m16", sq1, m16, []int32{1, 63, 65, 200}, 0, false},
		{"sq2_m32_causal", sq2, m32, []int32{1, 64 + 1, 130, 2}, 0, false},
		{"hq64_f16_m32_empty", h64f16, m32, []int32{0, 70, 129}, 0, false},
		{"hq128_m64", h128, m64, []int32{1, 191, 1000}, 0, false},
		{"hq128_m64_16warps", h128, kernels.MLAConfig{M: 64, Stages: 1, Threads: 512}, []int32{2, 64, 1500}, 0, false},
		{"hq128_sq2_m32_2stages", kernels.MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, kernels.MLAConfig{M: 32, Stages: 2, Threads: 128}, []int32{1, 64, 65, 700}, 0, false},
		{"hq128_sq2_f16_m64", h128sq2, m64, []int32{3, 190, 577}, 0, false},
		{"split_sched_sq2", sq2, m32, []int32{1, 65, 200, 130, 900}, -1, false},
		{"split_uniform5_empty", sq1, m16, []int32{1, 65, 200}, 5, false},
		{"split_sched_hq128", h128, m64, []int32{2000, 3, 700}, -1, false},
		{"split_sched_hq128_16warps", h128, kernels.MLAConfig{M: 64, Stages: 1, Threads: 512}, []int32{2000, 3, 700}, -1, false},
		{"split_uniform3_m32_2stages", h128, kernels.MLAConfig{M: 32, Stages: 2, Threads: 128}, []int32{2000, 3, 700, 129}, 3, false},
		{"split_sched_hq128_sq2_f16", h128sq2, m64, []int32{1500, 64 + 3}, -1, false},
		// 64 rows over two warpgroups splitting N (wgmma on sm_90a): one
		// stage, two by TMA, and a producer warpgroup, on the split path
		// (splits start past block 0) and at bench-like lengths.
		{"split_sched_hq128_splitn", h128, splitN1, []int32{2000, 3, 700}, -1, true},
		{"split_sched_hq128_splitn_2stages", h128, splitN2, []int32{2000, 3, 700, 129}, -1, true},
		{"split_sched_hq128_splitn_ws", h128, splitNWS, []int32{2000, 3, 700, 129}, -1, true},
		{"split_uniform3_sq2_f16_splitn_ws", h128sq2, splitNWS, []int32{1500, 64 + 3}, 3, true},
		{"hq128_splitn_ws_long", h128, splitNWS, []int32{3058, 2048 + 5, 1034}, 0, true},
		// One token's 16 or 32 heads padded to the 64-row block: on
		// mma.sync, and on the wgmma/TMA/producer path, single and split.
		{"hq16_padded_m64", sq1, m64, []int32{1, 200, 1000}, 0, false},
		{"hq16_padded_splitn_ws", sq1, splitNWS, []int32{1, 63, 65, 2000}, 0, true},
		{"split_sched_hq32_padded_splitn_ws", kernels.MLAShape{Hq: 32, Sq: 1, DType: ir.F16}, splitNWS, []int32{2000, 3, 700}, -1, true},
		// Warpgroup roles (warpgroup 0 scores each page alone): single
		// and split, two tokens (a block per token), two tokens of 32 heads
		// in one block (their LSE through shared memory), padded heads.
		{"hq128_roles_ws_long", h128, roles, []int32{3058, 2048 + 5, 1034, 1}, 0, true},
		{"split_sched_hq128_roles_ws", h128, roles, []int32{2000, 3, 700, 129}, -1, true},
		{"split_uniform3_sq2_f16_roles_ws", h128sq2, roles, []int32{1500, 64 + 3}, 3, true},
		{"hq32_sq2_roles_1stage", kernels.MLAShape{Hq: 32, Sq: 2, DType: ir.F16}, kernels.MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true, Roles: true}, []int32{2, 64, 129, 700}, 0, true},
		{"split_sched_hq16_padded_roles_ws", sq1, roles, []int32{2000, 3, 700, 65}, -1, true},
		// Hand-offs (warpgroup 0 scores page j+1 while 1 multiplies page
		// j): the same five.
		{"hq128_handoff_long", h128, handoff, []int32{3058, 2048 + 5, 1034, 1}, 0, true},
		{"split_sched_hq128_handoff", h128, handoff, []int32{2000, 3, 700, 129}, -1, true},
		// Three parts over six requests: a part runs several pieces, each
		// loading the next piece's Q ahead.
		{"split_3parts_hq128_handoff", h128, handoff, []int32{2000, 3, 700, 129, 1, 640}, -3, true},
		{"split_3parts_hq64_splitn_ws", kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}, splitNWS, []int32{2000, 3, 700, 129, 1, 640}, -3, true},
		{"split_3parts_hq32_padded_splitn_ws", kernels.MLAShape{Hq: 32, Sq: 1, DType: ir.F16}, splitNWS, []int32{900, 65, 1, 700}, -3, true},
		{"split_uniform3_sq2_f16_handoff", h128sq2, handoff, []int32{1500, 64 + 3}, 3, true},
		{"split_sched_hq128_handoff_merge", h128, merge, []int32{2000, 3, 700, 129}, -1, true},
		{"split_uniform3_sq2_f16_handoff_merge", h128sq2, merge, []int32{1500, 64 + 3}, 3, true},
		{"split_sched_hq64_handoff_merge", kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}, merge, []int32{3000, 0, 1, 700, 65}, -1, true},
		{"split_uniform5_hq64_f16_handoff_merge", h64f16, merge, []int32{1200, 64, 1}, 5, true},
		{"split_3parts_hq128_handoff_merge", h128, merge, []int32{2000, 3, 700, 129, 1, 640}, -3, true},
		{"split_sched_hq128_handoff_early", h128, handoffEarly, []int32{2000, 3, 700, 129}, -1, true},
		{"split_3parts_hq128_handoff_early", h128, handoffEarly, []int32{2000, 3, 700, 129, 1, 640}, -3, true},
		{"split_uniform3_sq2_f16_handoff_early", h128sq2, handoffEarly, []int32{1500, 64 + 3}, 3, true},
		{"split_sched_hq64_splitn_ws_early", kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}, splitNWSEarly, []int32{3000, 0, 1, 700, 65}, -1, true},
		{"split_sched_sq2_m32_early", sq2, m32Early, []int32{1, 65, 200, 130, 900}, -1, false},
		{"hq32_sq2_handoff_1stage", kernels.MLAShape{Hq: 32, Sq: 2, DType: ir.F16}, kernels.MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true, Roles: true, Handoff: true}, []int32{2, 64, 129, 700}, 0, true},
		{"split_sched_hq16_padded_handoff", sq1, handoff, []int32{2000, 3, 700, 65}, -1, true},
		{"hq128_handoff_v0_long", h128, v0, []int32{3058, 2048 + 5, 1034, 1}, 0, true},
		{"split_sched_hq128_handoff_v0", h128, v0, []int32{2000, 3, 700, 129}, -1, true},
		{"split_3parts_hq128_handoff_v0_wide", h128, v0Wide, []int32{2000, 3, 700, 129, 1, 640}, -3, true},
		{"split_uniform3_sq2_f16_handoff_v0", h128sq2, v0, []int32{1500, 64 + 3}, 3, true},
		// The pages multicast to both head blocks of a request: single and
		// split, hand-offs and the plain producer.
		{"hq128_handoff_cluster_long", h128, handoffCl, []int32{3058, 2048 + 5, 1034, 1}, 0, true},
		{"split_sched_hq128_handoff_cluster", h128, handoffCl, []int32{2000, 3, 700, 129}, -1, true},
		{"split_sched_hq128_splitn_ws_cluster", h128, splitNWSCl, []int32{2000, 3, 700, 129}, -1, true},
	}
	for _, c := range cases {
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, c.name), func(t *testing.T) {
				if err := c.s.Check(c.c); err != nil {
					t.Fatal(err)
				}
				if c.hopper && arch != "sm_90a" {
					build := kernels.MLADecodeSplit
					if c.split == 0 {
						build = kernels.MLADecode
					}
					fn, err := build(c.s, c.c).Build(b.Limits())
					if err == nil {
						_, err = cudagen.Compile(fn, cudagen.Options{Arch: arch})
					}
					if err == nil || !strings.Contains(err.Error(), "needs layout") && !strings.Contains(err.Error(), "shared memory") && !strings.Contains(err.Error(), "needs wgmma") {
						t.Fatalf("got %v, want a layout, shared-memory or wgmma error", err)
					}
					return
				}
				args := kernels.MLAInputs(c.s, c.lens, 9)
				rows := mlaRows(c.s, len(c.lens))
				if c.split == 0 {
					fn, err := kernels.MLADecode(c.s, c.c).Build(b.Limits())
					if err != nil {
						t.Fatal(err)
					}
					runPoisoned(t, b, arch, fn, args)
					checkMLAGPU(t, c.s, args, rows)
					return
				}
				md := kernels.ScheduleMLA(c.lens, c.s.Sq, c.s.Hq, 132)
				if c.split < -1 {
					md = kernels.ScheduleMLAParts(c.lens, kernels.MLAPage, -c.split, kernels.MLAPieceCost(c.s.Sq, c.s.Hq))
				}
				if c.split > 0 {
					md = kernels.UniformMLASplits(c.lens, kernels.MLAPage, c.split)
				}
				if err := md.Validate(c.lens, kernels.MLAPage); err != nil {
					t.Fatal(err)
				}
				all := append(args, kernels.MLAPartials(c.s, md)...)
				runChainPoisoned(t, b, arch, kernels.MLASplitSteps(c.s, c.c), all)
				checkMLAGPU(t, c.s, all, rows)
				if c.c.Merge || c.c.Early {
					for i, v := range all[11].Data {
						if v != 0 {
							t.Fatalf("counter %d left at %g after two runs", i, v)
						}
					}
				}
				// Splits past a request's pieces are not written (poisoned
				// NaN stays): the combine reads only num_splits of them.
				for r := range c.lens {
					for k := md.NumSplits[r]; k < md.Splits; k++ {
						if v := all[10].At(r, k, 0, 0); !math.IsNaN(v) {
							t.Errorf("request %d has %d splits, but split %d's LSE was written: %g", r, md.NumSplits[r], k, v)
						}
					}
				}
				t.Logf("%d splits, per request %v", md.Splits, md.NumSplits)
			})
		}
	}
}

// FlashAttention's split-KV path (split kernel, then combine) at GPU tile
// sizes, against float64 on every row.
func TestGPUFlashAttentionSplit(t *testing.T) {
	b := openGPU(t)
	base := kernels.AttnShape{B: 1, H: 4, HKV: 4, Sq: 130, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16}
	cases := []struct {
		name   string
		splits int
		mod    func(*kernels.AttnShape)
	}{
		{"split2", 2, func(*kernels.AttnShape) {}},
		{"split3_causal", 3, func(s *kernels.AttnShape) { s.Causal = true }},
		{"split4_gqa_bshd", 4, func(s *kernels.AttnShape) { s.H, s.HKV, s.BSHD = 8, 2, true }},
		{"split5_causal_sq>skv", 5, func(s *kernels.AttnShape) { s.Causal, s.Sq, s.Skv = true, 300, 200 }},
		{"split2_d64_f16", 2, func(s *kernels.AttnShape) { s.Dqk, s.Dv, s.DType = 64, 64, ir.F16 }},
		{"split9_short", 9, func(s *kernels.AttnShape) { s.Skv = 300 }}, // more splits than KV tiles
	}
	c := kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
	for _, tc := range cases {
		s := base
		tc.mod(&s)
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, tc.name), func(t *testing.T) {
				steps, err := kernels.FlashAttentionSplitSteps(s, c, tc.splits)
				if err != nil {
					t.Fatal(err)
				}
				args := kernels.FlashAttentionSplitInputs(s, tc.splits, 13)
				runChainPoisoned(t, b, arch, steps, args)
				var do, dl ref.Diff
				kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
				if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
					t.Errorf("O: %s; LSE: %s", &do, &dl)
				}
			})
		}
	}
}

// The tail split of grids of several waves (the SM count given to the
// split is the device's or a small one, so small grids have several
// waves): whole tiles from the kernel, the tail's pieces through the
// combine, every row against float64.
func TestGPUFlashAttentionTail(t *testing.T) {
	b := openGPU(t)
	c := kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
	cases := []struct {
		name        string
		s           kernels.AttnShape
		sms, splits int
	}{
		{"b1h3_sq600_sms4_split2", kernels.AttnShape{B: 1, H: 3, HKV: 3, Sq: 600, Skv: 1000, Dqk: 128, Dv: 128, DType: ir.BF16}, 4, 2},
		{"causal_gqa_bshd_sms5_split5", kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 700, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}, 5, 5},
		{"d64_f16_h67_sms132", kernels.AttnShape{B: 1, H: 67, HKV: 67, Sq: 512, Skv: 2048, Dqk: 64, Dv: 64, DType: ir.F16}, 132, 8}, // 268 tiles, two an SM: a wave of 264 and a tail of 4
	}
	for _, tc := range cases {
		for _, arch := range archs(b) {
			t.Run(fmt.Sprintf("%s/%s", arch, tc.name), func(t *testing.T) {
				steps, err := kernels.FlashAttentionTailSteps(tc.s, c, tc.sms, tc.splits)
				if err != nil {
					t.Fatal(err)
				}
				args := kernels.FlashAttentionTailInputs(tc.s, c, tc.sms, tc.splits, 17)
				runChainPoisoned(t, b, arch, steps, args)
				var do, dl ref.Diff
				kernels.CheckAttentionRows(tc.s, args, kernels.AllRows(tc.s), &do, &dl)
				if do.Bad > 0 || dl.Bad > 0 || do.Rel() > kernels.Tolerance(tc.s.DType) || dl.Rel() > kernels.LSETolerance {
					t.Errorf("O: %s; LSE: %s", &do, &dl)
				}
			})
		}
	}
}

// A chain times as one unit: its median covers both steps (so it is no
// shorter than the split kernel alone), and after many timed runs the
// answer is still right.
func TestGPUChainTime(t *testing.T) {
	b := openGPU(t)
	s := kernels.AttnShape{B: 1, H: 8, HKV: 8, Sq: 256, Skv: 4096, Dqk: 128, Dv: 128, DType: ir.BF16}
	steps, err := kernels.FlashAttentionSplitSteps(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, 4)
	if err != nil {
		t.Fatal(err)
	}
	var progs []*cudagen.Program
	for _, st := range steps {
		fn, err := st.Func.Build(b.Limits())
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(fn, cudagen.Options{Arch: b.arch})
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	args := kernels.FlashAttentionSplitInputs(s, 4, 3)
	c, err := PrepareChain(b, progs, [][]int{steps[0].Args, steps[1].Args}, args)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	if err := c.Poison(); err != nil {
		t.Fatal(err)
	}
	whole, err := c.Time(backend.RunOptions{Warmup: 3, Repeats: 21})
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.TimeEach([]Runnable{c.Steps()[0]}, 3, 21, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(first)
	t.Logf("chain %v (spread %v); split kernel alone %v", whole.Time, whole.Spread, first[10])
	if whole.Repeats != 21 || whole.Time <= 0 || whole.Time < first[10]*9/10 {
		t.Errorf("chain %+v; split kernel alone %v", whole, first[10])
	}
	if err := c.Download(args); err != nil {
		t.Fatal(err)
	}
	var do, dl ref.Diff
	kernels.CheckAttentionRows(s, args, kernels.SampleRows(s, 64, 1), &do, &dl)
	if do.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
		t.Errorf("after timing: O: %s; LSE: %s", &do, &dl)
	}
}

// Three consumer warpgroups (M 192, 384 threads). The config at N 128
// faulted (illegal address) inside the tuner on an H100 on 2026-11-22; it
// runs only when TILEGO_WIDE is set, alone, under compute-sanitizer, since
// a fault loses the context for every later test.
func TestGPUFlashAttentionWide(t *testing.T) {
	if os.Getenv("TILEGO_WIDE") == "" {
		t.Skip("set TILEGO_WIDE=1 (and run it alone)")
	}
	b := openGPU(t)
	s := kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 512, Skv: 512, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	for _, n := range []int{64, 128} {
		t.Run(fmt.Sprintf("n%d", n), func(t *testing.T) {
			f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 192, N: n, Stages: 2, Threads: 384}).Build(b.Limits())
			if err != nil {
				t.Fatal(err)
			}
			args := kernels.AttentionInputs(s, 3)
			runPoisoned(t, b, b.arch, f, args)
			var do, dl ref.Diff
			kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
			if do.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
				t.Errorf("O: %s; LSE: %s", &do, &dl)
			}
		})
	}
}
