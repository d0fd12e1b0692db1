package cudagen

import (
	"os"
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// The library's kernels must compile to CUDA for every variant the
// interpreter tests cover; what the source says is checked on the GPU.
func TestEmitLibrary(t *testing.T) {
	progs := map[string]func() (*ir.Func, error){
		"flash": func() (*ir.Func, error) {
			return kernels.FlashAttention(kernels.AttnShape{B: 1, H: 2, HKV: 1, Sq: 100, Skv: 130, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16}, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}).Build()
		},
		"gemm": func() (*ir.Func, error) {
			return kernels.Gemm(kernels.GemmShape{M: 200, N: 300, K: 96, TransB: true, DType: ir.F16, OutDType: ir.F32}, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 3, Threads: 128}).Build()
		},
	}
	for name, build := range progs {
		f, err := build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range []string{"__global__", "mma_", "ldmatrix", "cp_async16"} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: generated code lacks %s", name, want)
			}
		}
		if os.Getenv("TILEGO_SHOW") != "" {
			t.Logf("%s:\n%s", name, p.Source)
		}
	}
}

// On sm_90a the library's gemms become wgmma with descriptors; P·V takes
// P from registers.
func TestEmitWGMMA(t *testing.T) {
	f, err := kernels.FlashAttention(kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 256, Skv: 256, Dqk: 128, Dv: 128, DType: ir.BF16},
		kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wgmma_m64n128k16_ss_bf16<0, 0>", "wgmma_m64n128k16_rs_bf16<1>", "tl::desc(", "fence_proxy_async", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"} {
		if !strings.Contains(p.Source, want) {
			t.Errorf("no %s in the sm_90a code", want)
		}
	}
	if os.Getenv("TILEGO_SHOW") != "" {
		t.Logf("%s", p.Source)
	}
}

// Programs outside the library (symbolic sizes, default layouts, reductions
// across warps, atomics) compile on both paths.
func TestEmitRowScale(t *testing.T) {
	f, err := testprog.RowScale().Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		p, err := Compile(f, Options{Arch: arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		for _, want := range []string{"const int M", "atomicAdd", "tl::shfl_xor", "smem + "} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: no %q in the code", arch, want)
			}
		}
		if os.Getenv("TILEGO_SHOW") != "" {
			t.Logf("%s", p.Source)
		}
	}
}

// A fragment whose users need different register layouts is a clear error
// naming both ops: here P comes from a Gemm whose warps split rows and
// columns, but feeding a Gemm from registers needs whole rows per warp.
func TestLayoutConflict(t *testing.T) {
	f := tl.NewFunc("conflict")
	A := f.In("A", tl.BF16, 64, 32)
	B := f.In("B", tl.BF16, 32, 64)
	C := f.Out("C", tl.F32, 64, 32)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		as := k.Shared(tl.BF16, 64, 32)
		bs := k.Shared(tl.BF16, 32, 64)
		ws := k.Shared(tl.BF16, 64, 32)
		s := k.Fragment(tl.F32, 64, 64)
		p := k.Fragment(tl.BF16, 64, 64)
		o := k.Fragment(tl.F32, 64, 32)
		k.Copy(A, as)
		k.Copy(B, bs)
		k.Copy(A, ws)
		k.Clear(o)
		k.Gemm(as, bs, s, tl.ClearAccum, tl.WithPolicy(tl.Square)) // warps split rows and columns
		k.Copy(s, p)
		k.Gemm(p, ws, o) // needs P in the A-operand layout: whole rows per warp
		k.Copy(o, C)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(fn, Options{Arch: "sm_80"})
	if err == nil || !strings.Contains(err.Error(), "fragment") || !strings.Contains(err.Error(), "emit_test.go:") {
		t.Fatalf("got %v, want a layout conflict naming the fragment and the kernel's lines", err)
	}
	t.Log(err)
}

// A copy whose rows do not split evenly over the threads (128 rows of 16
// chunks over 384 threads: 24 rows a pass, the sixth pass partial) must
// not issue cp.async for the rows past the tile: a zero-filling cp.async
// still writes shared memory. compute-sanitizer caught exactly that.
func TestEmitPartialPassCopy(t *testing.T) {
	s := kernels.AttnShape{B: 1, H: 1, HKV: 1, Sq: 512, Skv: 512, Dqk: 128, Dv: 128, DType: ir.BF16}
	f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 192, N: 128, Stages: 2, Threads: 384}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a", NoTMA: true}) // cp.async, not TMA, for K and V
	if err != nil {
		t.Fatal(err)
	}
	// K and V: passes at rows 0, 24, ..., 120; only the last is guarded.
	if n := strings.Count(p.Source, "_r + 120 < 128)"); n != 4 { // K and V, prologue and loop
		t.Errorf("%d guarded partial passes, want 4", n)
	}
	if strings.Contains(p.Source, "_r + 96 < 128") {
		t.Error("a whole pass is guarded")
	}
}

// On Hopper the launch bounds ask for as many blocks per SM as shared
// memory allows, while each thread keeps at least 128 registers and room
// for its wgmma accumulators and register operands.
func TestLaunchBounds(t *testing.T) {
	for _, tc := range []struct {
		d    int
		c    kernels.AttnConfig
		arch string
		want string
	}{
		{128, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, "sm_90a", "__launch_bounds__(256, 2)"}, // 97 KB: two blocks
		{128, kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}, "sm_90a", "__launch_bounds__(256)"},   // 161 KB: one
		{64, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}, "sm_90a", "__launch_bounds__(128, 4)"},   // 41 KB: five, but 128 registers
		{128, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, "sm_80", "__launch_bounds__(256)"},
		{128, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true}, "sm_90a", "__launch_bounds__(384, 1)"},
		{256, kernels.AttnConfig{M: 128, N: 48, Stages: 1, Threads: 256}, "sm_90a", "__launch_bounds__(256)"},  // 113 KB: two, but acc 128 + S 24 + P 12 registers
		{128, kernels.AttnConfig{M: 128, N: 128, Stages: 1, Threads: 256}, "sm_90a", "__launch_bounds__(256)"}, // 97 KB: two, but 64 + 64 + 32
		{64, kernels.AttnConfig{M: 128, N: 208, Stages: 1, Threads: 256}, "sm_90a", "__launch_bounds__(256)"},  // 32 + 104 + 52
	} {
		s := kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 1024, Skv: 1024, Dqk: tc.d, Dv: tc.d, DType: ir.BF16}
		p := compileAttn(t, s, tc.c, tc.arch)
		if !strings.Contains(p.Source, tc.want+" flash_attention(") {
			t.Errorf("d%d %+v %s: want %s (shared %d)", tc.d, tc.c, tc.arch, tc.want, p.Shared)
		}
	}
}

// Prefetch spreads a tile's 128-byte lines over the threads, each line
// guarded by the tensor's bounds; NumSMs reads the SM count.
func TestPrefetch(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 300, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16}
	for _, tc := range []struct {
		arch string
		c    kernels.AttnConfig
	}{
		{"sm_80", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Prefetch: true}},
		{"sm_90a", kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Prefetch: true}},
	} {
		p := compileAttn(t, s, tc.c, tc.arch)
		// Q: 128 rows of 2 lines (128 bf16 = 256 bytes) over 256 threads;
		// K and V: 64 rows of 2 lines each.
		for _, want := range []string{"num_sms) < 24)", "pf2 < 256; pf2 += 256)", "pf3 < 128; pf3 += 256)",
			"< 300 && (pf2 % 2 * 64) < 128) tl::prefetch_l2(&Q[", "tl::prefetch_l2(&K[", "tl::prefetch_l2(&V["} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: no %q in\n%s", tc.arch, want, p.Source)
			}
		}
		tc.c.Prefetch = false
		if strings.Contains(compileAttn(t, s, tc.c, tc.arch).Source, "prefetch_l2") {
			t.Errorf("%s without Prefetch: it prefetches", tc.arch)
		}
	}
}

// On a persistent grid the producer walks the tiles too, and both sides
// count the ring on across them; with the P·V deferred, the consumers free
// a tile's last slot after its tail, since the producer goes on into the
// next tile. Without a tile loop, none of it is emitted.
func TestPersistentRing(t *testing.T) {
	s := kernels.AttnShape{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 128, Dv: 128, Causal: true, DType: ir.BF16}
	common := []string{
		"int ring = 0;\n      for (int k0 = 0; k0 < ", // the producer's walk (after its own ring)
		"const int rb = lo - ring;",
		"tl::mbar_wait(tl::smem_addr(smem + ", "((k1 - rb) % ",
		"ring += max(0, hi - lo);",
		"int ring = 0; // the ring positions used so far (ringPos)",
		"const int num_sms",
	}
	for _, tc := range []struct {
		c    kernels.AttnConfig
		want []string
		not  []string
	}{
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true},
			append(common, ") + 8 * ((k1 - rb) % 2));\n      }\n      __syncwarp();"), []string{"hi - 1 - rb"}},
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true},
			append(common, "if (hi > lo) {\n        __syncwarp();\n        if (lane == 0) tl::mbar_arrive(tl::smem_addr(smem + ", "+ 8 * ((hi - 1 - rb) % 2));"), nil},
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true},
			[]string{"((k0 - lo) % 2)"}, []string{"ring", "rb", "hi - 1 - lo", "num_sms"}},
		// Without a producer: the barriers set up once, before the walk.
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true},
			[]string{"tl::fence_mbar_init();\n  }\n  __syncthreads();\n  int ring = 0; // the ring positions used so far (ringPos)\n  for (int k0 = 0;",
				"const int rb = lo - ring;", "((k1 - rb) / 2) & 1);", "ring += max(0, hi - lo);"}, nil},
	} {
		p := compileAttn(t, s, tc.c, "sm_90a")
		for _, w := range tc.want {
			if !strings.Contains(p.Source, w) {
				t.Errorf("%+v: no %q", tc.c, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(p.Source, w) {
				t.Errorf("%+v: has %q", tc.c, w)
			}
		}
		if n := strings.Count(p.Source, "tl::fence_mbar_init();"); n != 1 {
			t.Errorf("%+v: barriers set up %d times", tc.c, n)
		}
		if t.Failed() {
			t.Log(p.Source)
			return
		}
	}
}

// loopNesting: Pipelined loops in no loop stand alone; one that is a
// statement of a top-level serial loop runs on from its iterations; any
// other (deeper, under a while, two in one kernel) is neither.
func TestLoopNesting(t *testing.T) {
	pipe := func() *ir.For { return &ir.For{Var: &ir.Var{Name: "k"}, Kind: ir.Pipelined, Stages: 2} }
	serial := func(body ...ir.Stmt) *ir.For { return &ir.For{Var: &ir.Var{Name: "i"}, Body: body} }
	top, inner, deep, underIf, underWhile := pipe(), pipe(), pipe(), pipe(), pipe()
	outer := serial(inner, serial(deep))
	body := []ir.Stmt{top, outer, &ir.If{Then: []ir.Stmt{underIf}}, &ir.While{Body: []ir.Stmt{underWhile}}}
	o, alone := loopNesting(body)
	if !alone[top] || !alone[underIf] || len(alone) != 2 {
		t.Errorf("alone: %v", alone)
	}
	if o[inner] != outer || len(o) != 1 {
		t.Errorf("outer: %v", o)
	}
	o, _ = loopNesting([]ir.Stmt{serial(pipe()), serial(pipe())})
	if len(o) != 0 {
		t.Errorf("two tile loops: %v", o)
	}
}

// With SplitN, two warpgroups on a 64-row wgmma output split its columns:
// each issues half-width instructions at its own column block of B (panels
// apart when B is N-major, rows apart when it is K-major), and a region of
// B's first whole panels is addressed as the tile is. Without it, or under
// FullRow, such a Gemm keeps mma.sync.
func TestWGSplitN(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 1, Threads: 256}
	if f, err := kernels.MLADecode(s, c).Build(); err != nil {
		t.Fatal(err)
	} else if p, err := Compile(f, Options{Arch: "sm_90a"}); err != nil || strings.Contains(p.Source, "wgmma.mma_async") {
		t.Errorf("MLA without SplitN took wgmma (%v)", err)
	}
	c.SplitN = true
	p := compileMLA(t, s, c, "sm_90a")
	for _, want := range []string{
		"float S[16];", "float acc[128];",
		// Q·Kᵀ: 32 keys a warpgroup, K-major B rows 32 apart.
		"wgmma_m64n32k16_ss_bf16<0, 0>(&S[0], tl::desc(da_base + (wg % 1 * 64 + 0) * 128 + 0, 16, 1024, 1), tl::desc(db_base + (wg / 1 * 32) * 128 + 0, 16, 1024, 1), 0);",
		// P·V: 256 of V's 512 columns (the cache row's first 8 of 9 panels) a warpgroup.
		"wgmma_m64n256k16_ss_bf16<0, 1>(&acc[0], tl::desc(da_base + (wg % 1 * 64 + 0) * 128 + 0, 16, 1024, 1), tl::desc(db_base + (wg / 1 * 256) * 2 / 128 * 8192 + 0, 8192, 1024, 1), 1);",
	} {
		if !strings.Contains(p.Source, want) {
			t.Errorf("no %q in\n%s", want, p.Source)
		}
	}
	if strings.Contains(p.Source, "mma_m16n8k16") {
		t.Error("MLA still on mma.sync")
	}
	wgSplit := Switches{SwitchWGSplit: true} // the hint forced on: the GEMM splits N, unless FullRow
	for _, pol := range []ir.Policy{ir.Square, ir.FullRow} {
		g, err := kernels.Gemm(kernels.GemmShape{M: 64, N: 128, K: 64, DType: ir.BF16, OutDType: ir.F32},
			kernels.GemmConfig{BM: 64, BN: 128, BK: 64, Stages: 2, Threads: 256, Policy: pol}).Build()
		if err != nil {
			t.Fatal(err)
		}
		gp, err := Compile(g, Options{Arch: "sm_90a", Switches: wgSplit})
		switch {
		case pol == ir.Square && (err != nil || !strings.Contains(gp.Source, "wgmma_m64n64k16_ss")):
			t.Errorf("Square GEMM of 64 rows over two warpgroups: no half-width wgmma (%v)", err)
		case pol == ir.FullRow && (err == nil || !strings.Contains(err.Error(), "policy fullrow")):
			// mma.sync cannot give 8 warps whole rows of 64 either: an error, not wgmma.
			t.Errorf("FullRow with more warpgroups than 64-row tiles: %v", err)
		}
	}
}

// compileMLA builds MLA decoding for s and c and compiles it for arch.
func compileMLA(t *testing.T, s kernels.MLAShape, c kernels.MLAConfig, arch string, sw ...Switches) *Program {
	t.Helper()
	return compileFunc(t, kernels.MLADecode(s, c), arch, sw...)
}

// compileAttn builds FlashAttention for s and c and compiles it for arch.
func compileAttn(t *testing.T, s kernels.AttnShape, c kernels.AttnConfig, arch string, sw ...Switches) *Program {
	t.Helper()
	return compileFunc(t, kernels.FlashAttention(s, c), arch, sw...)
}

// forced is the switches that force sw as a TILEGO_ variable would: on
// for "1", off for "0", neither for "".
func forced(sw Switch, env string) Switches {
	switch env {
	case "1":
		return Switches{sw: true}
	case "0":
		return Switches{sw: false}
	}
	return nil
}

// compileFunc builds f and compiles it for arch, failing the test on an
// error.
func compileFunc(t *testing.T, f *tl.Func, arch string, sw ...Switches) *Program {
	t.Helper()
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Arch: arch}
	if len(sw) > 0 {
		opts.Switches = sw[0]
	}
	p, err := Compile(fn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every persistent and prefetching schedule compiles on both paths, for
// the shapes the GPU test runs (its source stays close to this list).
func TestPersistentCompiles(t *testing.T) {
	shapes := []kernels.AttnShape{
		{B: 4, H: 8, HKV: 8, Sq: 1000, Skv: 1000, Dqk: 64, Dv: 64, DType: ir.BF16},
		{B: 2, H: 16, HKV: 4, Sq: 900, Skv: 1300, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16},
		{B: 4, H: 8, HKV: 8, Sq: 700, Skv: 700, Dqk: 256, Dv: 256, Causal: true, DType: ir.BF16},
		{B: 2, H: 16, HKV: 16, Sq: 1200, Skv: 1000, Dqk: 64, Dv: 64, Causal: true, DType: ir.F16},
	}
	cfgs := []kernels.AttnConfig{
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Persistent: true, Prefetch: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, Persistent: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Overlap: true, PingPong: true, Persistent: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Persistent: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, Persistent: true},
		{M: 64, N: 64, Stages: 2, Threads: 128, Persistent: true, Prefetch: true},
		{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, Prefetch: true},
	}
	for _, s := range shapes {
		for _, c := range cfgs {
			if s.Dqk >= 256 && c.Overlap {
				c.N = 32
			}
			for _, arch := range []string{"sm_90a", "sm_80"} {
				if c.WS && arch != "sm_90a" {
					continue
				}
				p := compileAttn(t, s, c, arch)
				ws := arch == "sm_90a" && c.WS
				if got := strings.Contains(p.Source, "if (tid >= "); got != ws {
					t.Errorf("%+v %+v %s: producer %v, want %v", s, c, arch, got, ws)
				}
			}
		}
	}
}

// A Parallel loop with no fragment to drive it spreads its points over the
// threads; its statements run per point in one thread, so the second
// store, which reads the first one's tile, takes no barrier inside the
// loop (one there hangs the block: threads past the points never arrive).
// The MLA combine's mergeSplit is this loop, with 8 points over 128 threads.
func TestParallelBodyNoBarrier(t *testing.T) {
	f := tl.NewFunc("par_body")
	X := f.In("X", tl.F32, 8)
	Y := f.Out("Y", tl.F32, 8)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		w := k.Shared(tl.F32, 8).Named("w")
		sum := k.Shared(tl.F32, 8).Named("sum")
		k.Clear(sum)
		k.Parallel(func(r tl.Expr) {
			w.Set(tl.Exp2(X.At(r)), r)
			sum.Set(sum.At(r).Add(w.At(r)), r)
		}, 8)
		k.Copy(sum, Y)
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		p, err := Compile(fn, Options{Arch: arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		loops := strings.Split(p.Source, "for (int idx = tid; idx < 8; idx += 128)")[1:]
		if len(loops) != 2 { // the Clear, then the Parallel
			t.Fatalf("%s: %d loops over the points, want 2:\n%s", arch, len(loops), p.Source)
		}
		for _, loop := range loops {
			if body, _, _ := strings.Cut(loop, "}"); strings.Contains(body, "__syncthreads") {
				t.Errorf("%s: a barrier inside the per-thread loop:\n%s", arch, body)
			}
		}
	}
}

// A copy's cache hint reaches its TMA loads: MLA's pages, which one block
// alone reads where a request's rows fit its block, stream evict-first;
// where two blocks read them (h_q 128), they load plainly.
func TestCacheHintTMA(t *testing.T) {
	for _, tc := range []struct {
		hq   int
		hint bool
	}{{16, true}, {64, true}, {128, false}} {
		s := kernels.MLAShape{Hq: tc.hq, Sq: 1, DType: ir.BF16}
		f, err := kernels.MLADecodeSplit(s, kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true}).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		hinted := strings.Count(p.Source, "tl::tma_load_3d_hint(")
		plain := strings.Count(p.Source, "tl::tma_load_3d(")
		if (hinted > 0) != tc.hint || (plain > 0) == tc.hint || tc.hint && !strings.Contains(p.Source, "tl::l2_evict_first()") {
			t.Errorf("h_q %d: %d hinted and %d plain page loads; want hinted %v", tc.hq, hinted, plain, tc.hint)
		}
	}
}

// The split kernel stores its partial O (bf16)
// evict-last, as a hinted pair store from the accumulator on sm_90a; sm_80
// stores them plainly; the single program's O has no hint.
func TestCacheHintStore(t *testing.T) {
	s := kernels.MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}
	wg, mma := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true}, kernels.MLAConfig{M: 32, Stages: 1, Threads: 128}
	for _, tc := range []struct {
		split  bool
		arch   string
		c      kernels.MLAConfig
		hinted bool
	}{{true, "sm_90a", wg, true}, {true, "sm_90a", mma, true}, {true, "sm_80", mma, false}, {false, "sm_90a", wg, false}} {
		c := tc.c
		f, err := kernels.MLADecode(s, c).Build()
		if tc.split {
			f, err = kernels.MLADecodeSplit(s, c).Build()
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: tc.arch})
		if err != nil {
			t.Fatal(err)
		}
		hinted := strings.Count(p.Source, "tl::st_global_f32x2_hint(") + strings.Count(p.Source, "tl::st_global_b32_hint(") + // f32 or (h_q 64's) bf16 partials,
			strings.Count(p.Source, "tl::st_global_v4_hint(") // 16 bytes a lane (storeQuadsFrom)
		if (hinted > 0) != tc.hinted || tc.hinted && !strings.Contains(p.Source, "const uint64_t pol = tl::l2_evict_last();") {
			t.Errorf("split %v on %s (%+v): %d hinted pair stores; want them %v", tc.split, tc.arch, c, hinted, tc.hinted)
		}
	}
	// An f32 accumulator stored with a hint takes the f32 pair form.
	f := tl.NewFunc("hinted_f32")
	A := f.In("A", tl.BF16, 64, 64)
	C := f.Out("C", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		as := k.Shared(tl.BF16, 64, 64)
		acc := k.Fragment(tl.F32, 64, 64)
		k.Copy(A, as)
		k.Gemm(as, as, acc, tl.ClearAccum, tl.TransB)
		k.Copy(acc, C, tl.EvictLast)
	})
	p := compileFunc(t, f, "sm_90a")
	// ... from one pointer a thread (storePairsFrom), with no bounds test:
	// the 64×64 tile fills C.
	if !strings.Contains(p.Source, "tl::st_global_f32x2_hint(gp") || strings.Contains(p.Source, "< 64) tl::st_global") {
		t.Errorf("hinted f32 accumulator: no hinted f32 pair stores through a thread's pointer, or bounds tested:\n%s", p.Source)
	}
}

// An accumulator stored to 16-bit global memory goes 16 bytes a lane after
// a quad exchange, where every group of 8 columns is whole and aligned
// (sm_90a's wgmma and sm_80's mma.sync layouts alike); a tile starting
// at column 4, or rows 8 elements apart no more, keep the pair stores.
func TestQuadStore(t *testing.T) {
	for _, tc := range []struct {
		name         string
		arch         string
		width, start int // C's columns, the tile's first
		quads        bool
	}{
		{"wgmma", "sm_90a", 64, 0, true},
		{"mma.sync", "sm_80", 64, 0, true},
		{"from column 64", "sm_90a", 128, 64, true},
		{"from column 4", "sm_90a", 68, 4, false},
		{"odd rows", "sm_90a", 66, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("quads")
			A := f.In("A", tl.BF16, 64, 64)
			C := f.Out("C", tl.BF16, 64, tc.width)
			f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
				as := k.Shared(tl.BF16, 64, 64)
				acc := k.Fragment(tl.F32, 64, 64)
				k.Copy(A, as)
				k.Gemm(as, as, acc, tl.ClearAccum, tl.TransB)
				k.Copy(acc, C.Sub(tl.All, tl.Range(tc.start, 64)))
			})
			src := compileFunc(t, f, tc.arch).Source
			quads := strings.Count(src, "tl::quad_transpose(") == 1 && strings.Contains(src, "*(uint4*)(gp")
			if quads != tc.quads || quads && (strings.Contains(src, "pack_bf16(acc[r], acc[r + 1])") || strings.Contains(src, "< 64) *(uint4")) {
				t.Errorf("quad stores %v, want %v (and no pair stores or bounds beside them):\n%s", quads, tc.quads, src)
			}
		})
	}
}

// A tile whose rows the threads do not divide (576 columns: 72 chunks,
// 256 threads) is copied in bands of 64 columns, each step a constant
// offset; a tile from column 0 needs no byte counts, one from further in
// a count a band (what is left of the row).
func TestCopyBands(t *testing.T) {
	for _, tc := range []struct {
		name         string
		width, start int // the global tensor's columns, the tile's first
		bytes        bool
	}{{"whole rows", 576, 0, false}, {"from column 512", 1152, 512, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := tl.NewFunc("bands")
			A := f.In("A", tl.BF16, 64, tc.width)
			C := f.Out("C", tl.BF16, 64, 576)
			f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
				as := k.Shared(tl.BF16, 64, 576)
				k.Copy(A.Sub(tl.All, tl.Range(tc.start, 576)), as)
				k.Copy(as, C)
			})
			src := compileFunc(t, f, "sm_80").Source
			generic := false // a step whose chunk is divided by 72 (the copy back to C is one)
			for _, line := range strings.Split(src, "\n") {
				generic = generic || strings.Contains(line, "cp_async16") && strings.Contains(line, "/ 72")
			}
			if n := strings.Count(src, "tl::cp_async16(cp"); n != 18 || !strings.Contains(src, "tid / 8, cp1_c = tid % 8 * 8") || generic {
				t.Errorf("%d banded cp.async steps, want 18 (8 threads a row, no division by 72):\n%s", n, src)
			}
			if got := strings.Contains(src, "cp1_bytes8"); got != tc.bytes {
				t.Errorf("per-band byte counts %v, want %v:\n%s", got, tc.bytes, src)
			}
		})
	}
}

// The output accumulator's rescale skips warps whose factors are all one
// where the kernel asks (tl's ScaleRows: FlashAttention from head dim 256,
// MLA), on both paths, and nowhere else; SwitchSkipOnes off turns it off.
func TestEmitSkipOnes(t *testing.T) {
	const vote = "if (!__all_sync(__activemask(), ones))"
	flash := func(d int) func() (*ir.Func, error) {
		return func() (*ir.Func, error) {
			return kernels.FlashAttention(kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 256, Skv: 256, Dqk: d, Dv: d, DType: ir.BF16},
				kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build()
		}
	}
	mla := func() (*ir.Func, error) {
		e, err := kernels.Lookup("mla-decode")
		if err != nil {
			return nil, err
		}
		p, err := e.Problem(map[string]string{"heads": "128"})
		if err != nil {
			return nil, err
		}
		prog, err := p.Program(kernels.GPUConfigFor(p, "sm_90a"))
		if err != nil {
			return nil, err
		}
		return prog.Build()
	}
	tests := []struct {
		name  string
		build func() (*ir.Func, error)
		arch  string
		env   string // SwitchSkipOnes forced: "0" off
		want  int    // votes in the source
	}{
		{"d256", flash(256), "sm_90a", "", 1},
		{"d256_sm80", flash(256), "sm_80", "", 1},
		{"d256_off", flash(256), "sm_90a", "0", 0},
		{"d128", flash(128), "sm_90a", "", 0},
		{"d64", flash(64), "sm_90a", "", 0},
		{"mla_h128", mla, "sm_90a", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(f, Options{Arch: tc.arch, Switches: forced(SwitchSkipOnes, tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(p.Source, vote); got != tc.want {
				t.Errorf("%d votes before a rescale; want %d", got, tc.want)
			}
		})
	}
}
