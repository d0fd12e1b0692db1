package cudagen

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// planGemm multiplies 256×k by k×256 in bm×bn tiles of C, bk columns of A
// a step, through a pipelined loop of the stages given; ws asks for a
// producer warpgroup, and pp for its consumers to take turns. line is the
// line of its Gemm.
func planGemm(k, bm, bn, bk, stages, threads int, ws, pp bool) (f *tl.Func, line int) {
	f = tl.NewFunc("plan_gemm")
	A, B, C := f.In("A", tl.BF16, 256, k), f.In("B", tl.BF16, k, 256), f.Out("C", tl.F32, 256, 256)
	f.Kernel(tl.Grid(256/bn, 256/bm), threads, func(b *tl.Block) {
		bx, by, _ := b.Idx()
		if ws {
			b.WarpSpecialize()
		}
		if pp {
			b.PingPong()
		}
		as, bs, acc := b.Shared(tl.BF16, bm, bk), b.Shared(tl.BF16, bk, bn), b.Fragment(tl.F32, bm, bn)
		b.Clear(acc)
		b.Pipelined(tl.CeilDiv(k, bk), stages, func(kk tl.Expr) {
			b.Copy(A.Sub(tl.Tile(by, bm), tl.Tile(kk, bk)), as)
			b.Copy(B.Sub(tl.Tile(kk, bk), tl.Tile(bx, bn)), bs)
			b.Gemm(as, bs, acc)
			_, _, line, _ = runtime.Caller(0)
			line--
		})
		b.Copy(acc, C.Sub(tl.Tile(by, bm), tl.Tile(bx, bn)))
	})
	return f, line
}

// Plan reports what the compiler decided, as Compile's program shows it,
// and refuses what Build with the target's Limits refuses, at the same
// file:line.
func TestPlanCost(t *testing.T) {
	type prog func() (*tl.Func, int)
	gemm := func(k, bm, bn, bk, stages, threads int, ws bool) prog {
		return func() (*tl.Func, int) { return planGemm(k, bm, bn, bk, stages, threads, ws, false) }
	}
	cases := []struct {
		name, arch string
		prog       prog
		want       Cost   // Shared is checked against Compile's program
		refusal    string // "" plans
	}{
		{"mma.sync", "sm_80", gemm(256, 64, 64, 32, 2, 128, false), Cost{Threads: 128, MMA: 1}, ""},
		{"wgmma", "sm_90a", gemm(256, 64, 64, 32, 2, 128, false), Cost{Threads: 128, WGMMA: 1}, ""},
		{"wgmma by TMA", "sm_90a", gemm(256, 64, 64, 64, 2, 128, false), Cost{Threads: 128, WGMMA: 1, TMA: 1}, ""},
		{"producer", "sm_90a", gemm(256, 128, 128, 64, 3, 256, true), Cost{Threads: 384, WGMMA: 1, TMA: 1, Producer: true, ConsumerRegs: 232}, ""},
		{"ping-pong", "sm_90a", func() (*tl.Func, int) { return planGemm(256, 128, 128, 64, 3, 256, true, true) },
			Cost{Threads: 384, WGMMA: 1, TMA: 1, Producer: true, ConsumerRegs: 232, PingPong: true}, ""},
		{"producer of one warpgroup", "sm_90a", gemm(256, 64, 128, 64, 3, 128, true), Cost{Threads: 256, WGMMA: 1, TMA: 1, Producer: true}, ""},
		{"no producer without TMA", "sm_80", gemm(256, 128, 128, 64, 3, 256, true), Cost{Threads: 256, MMA: 1}, ""},
		{"wgmma needs whole warpgroups", "sm_90a", gemm(256, 64, 64, 64, 2, 64, false), Cost{Threads: 64, MMA: 1, TMA: 1}, ""},
		// 4 stages of 256×64 + 64×256 bf16 tiles, 256 KiB: over what the
		// compiler places; 3 stages, 192 KiB: over an A100's 163.
		{"shared over the compiler's", "sm_90a", gemm(1024, 256, 256, 64, 4, 256, false), Cost{}, "shared memory after pipelining is 262144 bytes, over the target's"},
		{"shared over sm_80's", "sm_80", gemm(1024, 256, 256, 64, 3, 256, false), Cost{}, "shared memory after pipelining is 196608 bytes, over sm_80's 166912 per block"},
		{"k8", "sm_80", gemm(8, 64, 64, 8, 1, 128, false), Cost{}, "K = 8 must be a multiple of 16"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tf, line := tc.prog()
			fn, err := tf.Build()
			if err != nil {
				t.Fatal(err)
			}
			cost, err := Plan(fn, Options{Arch: tc.arch})
			_, buildErr := tf.Build(Limits(tc.arch))
			if tc.refusal != "" {
				var list ir.ErrorList
				if !errors.As(err, &list) || len(list) == 0 || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("Plan: %v; want an ir.ErrorList saying %q", err, tc.refusal)
				}
				if pos := list[0].Pos; filepath.Base(pos.File) != "plan_test.go" || (list[0].Op == "gemm" && pos.Line != line) {
					t.Errorf("refused at %s:%d (%s); want plan_test.go (line %d for the gemm)", pos.File, pos.Line, list[0].Op, line)
				}
				if buildErr == nil || buildErr.Error() != err.Error() {
					t.Errorf("Build with Limits(%s): %v; want Plan's refusal", tc.arch, buildErr)
				}
				if strings.Contains(tc.refusal, "per block") && cost.Shared <= Limits(tc.arch).MaxSharedBytes {
					t.Errorf("refused for shared memory, with a cost of %d bytes", cost.Shared)
				}
				return
			}
			if err != nil || buildErr != nil {
				t.Fatalf("Plan: %v; Build: %v", err, buildErr)
			}
			p, err := Compile(fn, Options{Arch: tc.arch})
			if err != nil {
				t.Fatal(err)
			}
			if cost.Producer && !Producers(Options{Arch: tc.arch}) || cost.TMA > 0 && tc.arch != "sm_90a" {
				t.Errorf("Plan = %+v; Producers(%s) = %v", cost, tc.arch, Producers(Options{Arch: tc.arch}))
			}
			if cost.Shared != p.Shared || cost.Threads != p.Threads {
				t.Errorf("Plan: %d bytes, %d threads; Compile: %d, %d", cost.Shared, cost.Threads, p.Shared, p.Threads)
			}
			if got := strings.Count(p.Source, "wgmma.mma_async") > 0; got != (cost.WGMMA > 0) {
				t.Errorf("the source has wgmma %v; Plan counts %d", got, cost.WGMMA)
			}
			tc.want.Shared = p.Shared
			if cost != tc.want {
				t.Errorf("Plan = %+v; want %+v", cost, tc.want)
			}
		})
	}
}

// Producers is false where no program gets a producer warpgroup: without
// TMA loads.
func TestProducers(t *testing.T) {
	f, _ := planGemm(256, 128, 128, 64, 3, 256, true, false)
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Arch: "sm_80"}, {Arch: "sm_90a"}, {Arch: "sm_90a", NoTMA: true}, {Arch: "sm_90"}, {Arch: "sm_86"},
		{Arch: "sm_90a", NoTMA: true, Switches: Switches{SwitchTMA: true}}, {Arch: "sm_90a", Switches: Switches{SwitchTMA: false}}} {
		cost, err := Plan(fn, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := Producers(opts); got != cost.Producer {
			t.Errorf("%+v: Producers = %v; the warp-specialized GEMM planned a producer: %v", opts, got, cost.Producer)
		}
	}
}
