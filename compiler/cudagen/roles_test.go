package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// Under Roles, MLA's warpgroup 0 computes a page's 64×64 scores alone (one
// full-width wgmma chain, Q read once) and its softmax inside a block only
// it enters, meeting its own warps at a named barrier of 128; the hand-off
// to both warpgroups is a barrier of all consumers after the block, and
// P·V stays split over the two.
func TestEmitRoles(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true}
	src := compileMLA(t, s, c, "sm_90a").Source
	for _, want := range []string{
		"float S[32];", "float acc[128];", "float m[2];",
		"if (tid / 128 == 0) {",
		"const int wg = 0;",
		"wgmma_m64n64k16_ss_bf16<0, 0>(&S[0], tl::desc(da_base + (wg * 64 + 0) * 128 + 0, 16, 1024, 1), tl::desc(db_base + 0, 16, 1024, 1), 0);",
		"wgmma_m64n256k16_ss_bf16<0, 1>(&acc[0]",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	if strings.Contains(src, "wgmma_m64n32k16") {
		t.Error("the scores are still split over both warpgroups")
	}
	// Warpgroup 0 writes P and the row factors, tiles it has not touched
	// since the page's barrier, and nobody reads them inside the block:
	// no barrier of its own (the consumers' barrier after it hands them on).
	if strings.Contains(src, "bar_sync(4,") {
		t.Error("a barrier of warpgroup 0 where it needs none")
	}
	// Inside the blocks only warpgroup 0's barrier: every consumers'
	// barrier sits outside them.
	depth, inRole := 0, -1
	for i, line := range strings.Split(src, "\n") {
		if strings.Contains(line, "if (tid / 128 == 0) {") {
			inRole = depth
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if inRole >= 0 && depth <= inRole {
			inRole = -1
		}
		if inRole >= 0 && (strings.Contains(line, "bar_sync(1,") || strings.Contains(line, "__syncthreads")) {
			t.Errorf("line %d: a barrier of all consumers inside warpgroup 0's block: %s", i+1, line)
		}
	}
	// Without wgmma a warpgroup's Gemm cannot run: an error naming why.
	c.Stages, c.WS = 1, false // two cp.async stages do not fit sm_90's shared memory
	f, err := kernels.MLADecode(s, c).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(f, Options{Arch: "sm_90"}); err == nil || !strings.Contains(err.Error(), "needs wgmma") {
		t.Errorf("Roles on sm_90: %v", err)
	}
}

// Inside a warpgroup block, a tile written and then read back (or written
// again) waits at the warpgroup's own barrier, and only there.
func TestRoleBarrier(t *testing.T) {
	f := tl.NewFunc("roles")
	A, B := f.In("A", tl.F32, 64, 64), f.Out("B", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
		x, y := k.Fragment(tl.F32, 64, 64).Named("x"), k.Fragment(tl.F32, 64, 64).Named("y")
		sh := k.Shared(tl.F32, 64, 64).Named("sh")
		k.Copy(A, sh)
		k.Warpgroup(1, func() {
			k.Copy(sh, x)
			k.Parallel(func(i, j tl.Expr) { x.Set(x.At(i, j).Mul(2), i, j) }, 64, 64)
			k.Copy(x, sh) // sh was read: wait first
			k.Copy(sh, y) // and written: wait again
			k.Copy(y, sh)
		})
		k.Copy(sh, B)
	})
	for _, arch := range []string{"sm_80", "sm_90a"} {
		p := compileFunc(t, f, arch)
		body := p.Source[strings.Index(p.Source, "if (tid / 128 == 1) {"):]
		body = body[:strings.Index(body, "\n  }\n")]
		if n := strings.Count(body, "tl::mbar_arrive_wait("); n != 3 {
			t.Errorf("%s: %d barriers of warpgroup 1, want 3 (before each write back and before the read of its write):\n%s", arch, n, p.Source)
		}
		if strings.Contains(body, "__syncthreads") || strings.Contains(body, "bar_sync") {
			t.Errorf("%s: a barrier of more than warpgroup 1 inside its block:\n%s", arch, p.Source)
		}
		if !strings.Contains(p.Source, "tl::mbar_init(") {
			t.Errorf("%s: the warpgroups' mbarriers are not initialized:\n%s", arch, p.Source)
		}
	}
}

// A fragment belongs to one warpgroup's blocks or to all; ops that spread
// a tile over every thread cannot run on one warpgroup.
func TestRoleErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(k *tl.Block, A *tl.Tensor, x, y *tl.Tensor, sh *tl.Tensor)
		want string
	}{
		{"fragment in and out", func(k *tl.Block, A, x, y, sh *tl.Tensor) {
			k.Warpgroup(0, func() { k.Clear(x) })
			k.Copy(x, sh)
		}, "fragment x is used by all warpgroups here and by warpgroup 0 alone"},
		{"two warpgroups", func(k *tl.Block, A, x, y, sh *tl.Tensor) {
			k.Warpgroup(0, func() { k.Clear(x) })
			k.Warpgroup(1, func() { k.Copy(x, sh) })
		}, "used by warpgroup 1 alone here and by warpgroup 0 alone"},
		{"tile copy", func(k *tl.Block, A, x, y, sh *tl.Tensor) {
			k.Warpgroup(1, func() { k.Copy(A, sh) })
		}, "must read or write a fragment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("roles")
			A := f.In("A", tl.F32, 64, 64)
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				x, y := k.Fragment(tl.F32, 64, 64).Named("x"), k.Fragment(tl.F32, 64, 64).Named("y")
				sh := k.Shared(tl.F32, 64, 64).Named("sh")
				tc.body(k, A, x, y, sh)
			})
			fn, err := f.Build()
			if err == nil {
				_, err = Compile(fn, Options{Arch: "sm_90a"})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// A Parallel loop no fragment drives runs over its warpgroup's 128
// threads alone inside a block.
func TestRoleSpreadLoop(t *testing.T) {
	f := tl.NewFunc("roles")
	A, B := f.In("A", tl.F32, 64, 64), f.Out("B", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
		sh := k.Shared(tl.F32, 64, 64).Named("sh")
		k.Copy(A, sh)
		k.Warpgroup(1, func() {
			k.Parallel(func(i, j tl.Expr) { sh.Set(sh.At(i, j).Mul(2), i, j) }, 64, 64)
		})
		k.Copy(sh, B)
	})
	p := compileFunc(t, f, "sm_90a")
	if !strings.Contains(p.Source, "for (int idx = tid % 128; idx < 4096; idx += 128) {") {
		t.Errorf("the loop is not spread over warpgroup 1's threads:\n%s", p.Source)
	}
}
