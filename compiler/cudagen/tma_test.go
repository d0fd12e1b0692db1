package cudagen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// On sm_90a, FlashAttention's K and V prefetches become TMA loads (one per
// 64-column panel) completing on the ring's mbarriers; with NoTMA, or on
// sm_80, they stay cp.async.
func TestEmitTMA(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	// K and V, and O for the epilogue's store (128 rows of 64 columns).
	if len(p.TMA) != 3 || p.TMA[0].Param != 1 || p.TMA[1].Param != 2 || p.TMA[2].Param != 3 ||
		!slices.Equal(p.TMA[0].Box, []uint32{64, 64, 1, 1}) || !slices.Equal(p.TMA[2].Box, []uint32{64, 128, 1, 1}) {
		t.Errorf("tensor maps %+v", p.TMA)
	}
	src := p.Source
	for _, want := range []string{"const __grid_constant__ tl::TensorMap tm1, const __grid_constant__ tl::TensorMap tm2)",
		"tl::mbar_init(", "tl::mbar_arrive_expect_tx(", "tl::mbar_wait(", "&tm0, 0 + 64, (k0 * 64)"} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %q", want)
		}
	}
	// Two panels each of K and V, in the prologue and in the loop.
	if n := strings.Count(src, "tl::tma_load_4d("); n != 8 {
		t.Errorf("%d TMA loads, want 8", n)
	}
	// 16 KB per K or V tile, expected on the slot's barrier per iteration.
	if !strings.Contains(src, ", 32768);") {
		t.Error("expect_tx is not K's and V's bytes")
	}
	plain, err := Compile(f, Options{Arch: "sm_90a", NoTMA: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.TMA) != 0 || strings.Contains(plain.Source, "tma_load") {
		t.Error("TMA with NoTMA")
	}
	if plain.Shared+8*2 != p.Shared {
		t.Errorf("shared %d with TMA, %d without: want the barriers' 16 bytes more", p.Shared, plain.Shared)
	}
	old, err := Compile(f, Options{Arch: "sm_80"})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.TMA) != 0 || strings.Contains(old.Source, "tma_load") {
		t.Error("TMA on sm_80")
	}
}

// Warp specialization on top of TMA: a producer warpgroup after the
// program's threads issues the loads; the consumers wait on full barriers,
// free slots on empty ones, and meet on a named barrier only.
func TestEmitWarpSpecialized(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	for _, tc := range []struct {
		c       kernels.AttnConfig
		threads int
		blocks  int    // the launch bounds' blocks an SM
		regs    [2]int // setmaxnreg dec, inc (0: none)
	}{
		{kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}, 384, 1, [2]int{40, 232}},
		{kernels.AttnConfig{M: 64, N: 64, Stages: 3, Threads: 128}, 256, 1, [2]int{}}, // one block an SM even where two would fit
	} {
		f, err := kernels.FlashAttention(s, tc.c).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90a", WarpSpecialize: true})
		if err != nil {
			t.Fatal(err)
		}
		src := p.Source
		T := tc.c.Threads
		if p.Threads != tc.threads || !strings.Contains(src, fmt.Sprintf("__launch_bounds__(%d, %d)", tc.threads, tc.blocks)) {
			t.Errorf("%+v: %d threads, want %d in %d blocks an SM", tc.c, p.Threads, tc.threads, tc.blocks)
		}
		for _, want := range []string{fmt.Sprintf("if (tid >= %d)", T), fmt.Sprintf("if (tid == %d)", T), "return;",
			"tl::mbar_arrive(", fmt.Sprintf("tl::bar_sync(1, %d);", T), fmt.Sprintf("+ 8 * s, %d);", T/32), "if (lane == 0) tl::mbar_arrive("} {
			if !strings.Contains(src, want) {
				t.Errorf("%+v: source lacks %q", tc.c, want)
			}
		}
		if n := strings.Count(src, "__syncthreads();"); n != 1 { // the barriers' initialization, before the split
			t.Errorf("%+v: %d __syncthreads, want 1", tc.c, n)
		}
		dec, inc := strings.Contains(src, fmt.Sprintf("setmaxnreg_dec<%d>", tc.regs[0])), strings.Contains(src, fmt.Sprintf("setmaxnreg_inc<%d>", tc.regs[1]))
		if any := strings.Contains(src, "setmaxnreg"); any != (tc.regs[0] > 0) || (any && !(dec && inc)) {
			t.Errorf("%+v: setmaxnreg (dec %v, inc %v), want %v", tc.c, dec, inc, tc.regs)
		}
		// The loop body writes no shared memory: the consumers meet before
		// the loop, not in it, so their warpgroups drift apart.
		at := strings.LastIndex(src, "for (int k0 = lo; k0 < hi; ++k0)") // the consumers' loop, after the producer's
		loop := src[at:]
		loop = loop[:strings.Index(loop, "tl::mbar_arrive(")]
		if !strings.Contains(src[:at], "tl::bar_sync(1,") || strings.Contains(loop, "bar_sync") {
			t.Errorf("%+v: consumers meet in the loop, or not before it", tc.c)
		}
		// The producer issues each iteration once; the consumers none.
		if n := strings.Count(src, "tl::mbar_arrive_expect_tx("); n != 1 {
			t.Errorf("%+v: %d expect_tx, want 1", tc.c, n)
		}
	}
	// MLA's loop bound reads the cache length from its input, so a producer
	// can walk the pages too (by the block table, also an input).
	m := kernels.MLAShape{Hq: 32, Sq: 2, DType: ir.BF16}
	f, err := kernels.MLADecode(m, kernels.MLAConfig{M: 32, Stages: 2, Threads: 128}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a", WarpSpecialize: true})
	if err != nil {
		t.Fatal(err)
	}
	producer := "if (tid == 128) {\n      const int lo = 0, hi = (((cache_seqlens[(long long)(bz)] + 64) - 1) / 64);"
	if p.Threads != 256 || len(p.TMA) != 1 || !strings.Contains(p.Source, producer) {
		t.Errorf("MLA: %d threads, %d tensor maps; want a producer issuing TMA:\n%s", p.Threads, len(p.TMA), p.Source)
	}
	// The slots a block's zeroing wrote (past the cache length) are fenced
	// for the wgmma that reads them.
	if !strings.Contains(p.Source, "}\n        }\n        tl::fence_proxy_async();\n        tl::bar_sync(1, 128);\n      }") {
		t.Errorf("MLA: no fence after zeroing slots:\n%s", p.Source)
	}
}

// TMA steps between rows in multiples of 16 bytes: a GEMM whose A is
// stored transposed with 77 columns (154-byte rows) cannot load A by TMA,
// so its loop stays on cp.async (a loop's loads go one way or the other);
// with 80 columns both A and B go by TMA.
func TestTMARowPitch(t *testing.T) {
	for _, tc := range []struct {
		s    kernels.GemmShape
		maps int
	}{
		{kernels.GemmShape{M: 77, N: 130, K: 40, TransA: true, DType: ir.BF16, OutDType: ir.F32}, 0},
		{kernels.GemmShape{M: 77, N: 128, K: 40, TransA: true, DType: ir.BF16, OutDType: ir.F32}, 0},
		{kernels.GemmShape{M: 80, N: 128, K: 40, TransA: true, DType: ir.BF16, OutDType: ir.F32}, 2},
	} {
		f, err := kernels.Gemm(tc.s, kernels.GemmConfig{BM: 64, BN: 64, BK: 64, Stages: 2, Threads: 128}).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(f, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.TMA) != tc.maps {
			t.Errorf("%+v: %d tensor maps, want %d", tc.s, len(p.TMA), tc.maps)
		}
	}
}

// The epilogue's shared tile goes to O by TMA stores, one per 64-column
// panel, after the barrier that completes the tile and its proxy fence;
// the issuing thread waits only for the reads. A GEMM with f32 output (32-bit
// elements) stores as before, and so does a kernel that reads its output
// back.
func TestEmitTMAStore(t *testing.T) {
	s := kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 300, Skv: 500, Dqk: 128, Dv: 128, BSHD: true, DType: ir.BF16}
	f, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(f, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	src := p.Source
	at := strings.Index(src, "tl::tma_store_4d(&tm2, 0 + 0, (bx * 128), by, bz, ")
	if at < 0 || strings.Count(src, "tl::tma_store_4d(") != 2 {
		t.Fatalf("no TMA stores of O's two panels:\n%s", src[max(0, len(src)-1500):])
	}
	before := src[:at]
	if !strings.HasSuffix(strings.TrimSpace(before[:strings.LastIndex(before, "if (tid == 0)")]), "tl::fence_proxy_async();\n  __syncthreads();") {
		t.Error("no fence and barrier before the stores")
	}
	if !strings.Contains(src[at:], "tl::bulk_commit();") || !strings.Contains(src[at:], "tl::bulk_wait_read<0>();") {
		t.Error("the stores are not committed and waited for")
	}
	g, err := kernels.Gemm(kernels.GemmShape{M: 256, N: 256, K: 128, DType: ir.BF16, OutDType: ir.F32},
		kernels.GemmConfig{BM: 128, BN: 128, BK: 64, Stages: 2, Threads: 256}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if gp, err := Compile(g, Options{Arch: "sm_90a"}); err != nil || strings.Contains(gp.Source, "tma_store") {
		t.Errorf("f32 GEMM output stored by TMA (%v)", err)
	}
}

// A kernel that reads its output back stores it as before: the bulk
// writes are not waited for.
func TestTMAStoreReadBack(t *testing.T) {
	for _, back := range []bool{false, true} {
		f := tl.NewFunc("readback")
		A := f.In("A", tl.BF16, 64, 64)
		O := f.Out("O", tl.BF16, 64, 64)
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			s := k.Shared(tl.BF16, 64, 64)
			k.Copy(A, s)
			k.Copy(s, O)
			if back {
				k.Copy(O, s)
				k.Copy(s, O.Sub(tl.All, tl.All))
			}
		})
		fn, err := f.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := readsBuffer(fn.Kernel.Body, fn.Params[1]); got != back {
			t.Errorf("back %v: readsBuffer %v", back, got)
		}
		p, err := Compile(fn, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(p.Source, "tl::tma_store_2d("); got != map[bool]int{false: 1, true: 0}[back] {
			t.Errorf("back %v: %d TMA stores", back, got)
		}
	}
}

// packedRows compiles for sm_90a a program that, a block per head of a
// packed [300, 3, 64] tensor X, multiplies a tile of Y by X's rows in
// 64-row tiles (three, in a pipelined loop); offset: from a row read from
// an input Off (bound before the loop) and with a producer warpgroup,
// else from row 0.
func packedRows(t *testing.T, offset bool) *Program {
	t.Helper()
	const T, H, D = 300, 3, 64
	f := tl.NewFunc("packed_rows")
	X := f.In("X", tl.BF16, T, H, D)
	Y := f.In("Y", tl.BF16, 64, D)
	var Off *tl.Tensor
	if offset {
		Off = f.In("Off", tl.I32, H)
	}
	Out := f.Out("Out", tl.F32, H, 64, 64)
	f.Kernel(tl.Grid(H), 128, func(k *tl.Block) {
		h, _, _ := k.Idx()
		start := tl.Int(0)
		if offset {
			k.WarpSpecialize()
			start = k.Let(Off.At(h))
		}
		ys, xs := k.Shared(tl.BF16, 64, D), k.Shared(tl.BF16, 64, D)
		s := k.Fragment(tl.F32, 64, 64)
		k.Copy(Y, ys)
		k.Clear(s)
		k.Pipelined(3, 2, func(j tl.Expr) {
			k.Copy(X.Sub(tl.Range(start.Add(j.Mul(64)), 64), h, tl.All), xs)
			k.Gemm(ys, xs, s, tl.TransB)
		})
		k.Copy(s, Out.Sub(h, tl.All, tl.All))
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(fn, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A tile of rows from a packed [tokens, heads, dim] tensor (one head's
// rows, the heads between them) loads by TMA as a rank-3 box of 64
// columns, one head and the tile's rows: the box's middle dim is 1 and its
// coordinates put the row in the outer dim.
func TestTMAPackedRows(t *testing.T) {
	p := packedRows(t, false)
	if len(p.TMA) != 1 || !slices.Equal(p.TMA[0].Box, []uint32{64, 1, 64}) {
		t.Fatalf("tensor maps %+v, want one with box [64 1 64]:\n%s", p.TMA, p.Source)
	}
	if !strings.Contains(p.Source, "tl::tma_load_3d(") || !strings.Contains(p.Source, ", 0 + 0, bx, (k0 * 64), ") {
		t.Errorf("no rank-3 TMA load with the row outermost:\n%s", p.Source)
	}
}

// A variable set before a warp-specialized loop from the inputs (a packed
// sequence's first row) is set by the producer too, before its loop, so
// its TMA loads can start from it; the copies keep the consumers' set.
func TestWarpSpecializedKernelVars(t *testing.T) {
	p := packedRows(t, true)
	if len(p.TMA) != 1 || p.Threads != 256 {
		t.Fatalf("%d tensor maps, %d threads; want 1 and a producer warpgroup:\n%s", len(p.TMA), p.Threads, p.Source)
	}
	producer := p.Source[strings.Index(p.Source, "if (tid == 128)"):]
	set := strings.Index(producer, "v0[(0)] = (int)(Off[bx]);")
	if set < 0 || set > strings.Index(producer, "const int lo") {
		t.Errorf("the producer does not set the offset before its loop:\n%s", p.Source)
	}
}

// A pipelined loop that loads an f32 row beside a bf16 tile loads both by
// TMA, the row as one unswizzled box; with a producer warpgroup, the
// consumers whose body writes a shared row meet where that write needs
// it (after the reads before it, and at the iteration's end, before the
// next reads it) and not at each iteration's top.
func TestRowLoadsByTMA(t *testing.T) {
	for _, ws := range []bool{false, true} {
		fn, err := testprog.RowBesideTile(ws).Build(Limits("sm_90a"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(fn, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		want := []TMASpec{{Param: 0, Box: []uint32{64, 64, 1}}, {Param: 1, Box: []uint32{64, 1}, Line: true}}
		if len(p.TMA) != 2 || !slices.Equal(p.TMA[0].Box, want[0].Box) || p.TMA[0].Line ||
			!slices.Equal(p.TMA[1].Box, want[1].Box) || !p.TMA[1].Line {
			t.Errorf("ws %v: tensor maps %+v, want %+v", ws, p.TMA, want)
		}
		if !strings.Contains(p.Source, "tl::tma_load_2d(") || !strings.Contains(p.Source, ", 8448);") {
			t.Errorf("ws %v: no TMA load of the row, or the slot does not expect both copies' 8448 bytes:\n%s", ws, p.Source)
		}
		if !ws {
			continue
		}
		// From an offset the compiler cannot prove a multiple of 16 bytes,
		// the row (and with it the loop) stays on cp.async.
		odd := tl.NewFunc("row_from_odd_offset")
		L, O := odd.In("L", tl.F32, 200), odd.Out("O", tl.F32, 64)
		off := odd.In("Off", tl.I32, 1)
		odd.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			start := k.Let(off.At(0))
			ls, acc := k.Shared(tl.F32, 64), k.Fragment(tl.F32, 64)
			k.Clear(acc)
			k.Pipelined(2, 2, func(i tl.Expr) {
				k.Copy(L.Sub(tl.Range(start.Add(i.Mul(64)), 64)), ls)
				k.Parallel(func(r tl.Expr) { acc.Set(acc.At(r).Add(ls.At(r)), r) }, 64)
			})
			k.Copy(acc, O)
		})
		ofn, err := odd.Build(Limits("sm_90a"))
		if err != nil {
			t.Fatal(err)
		}
		q, err := Compile(ofn, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(q.TMA) != 0 {
			t.Errorf("a row from an unproven offset loads by TMA: %+v", q.TMA)
		}
		src := p.Source
		wait, free := strings.LastIndex(src, "tl::mbar_wait("), strings.LastIndex(src, "tl::mbar_arrive(tl::smem_addr")
		body := src[wait:free]
		acc, write := strings.Index(body, "for (int r = 0; r < 32; ++r) {"), strings.Index(body, "idx < 64")
		first, last := strings.Index(body, "tl::bar_sync(1, 128);"), strings.LastIndex(body, "tl::bar_sync(1, 128);")
		if acc < 0 || write < acc || first < acc || first > write || last < write {
			t.Errorf("consumers' iteration: want the accumulation, a barrier, the row's write, a barrier:\n%s", body)
		}
	}
}

// An atomic add of a whole shared f32 tile into global memory is one TMA
// reduce-add per 128-byte panel (32 columns), from one thread, on sm_90a;
// the threads' own atomics on sm_80, or where the kernel also stores to
// the tensor.
func TestAtomicAddByTMA(t *testing.T) {
	fn, err := testprog.SharedTileAdds().Build(Limits("sm_90a"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(fn, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.TMA) != 1 || p.TMA[0].Param != 1 || !slices.Equal(p.TMA[0].Box, []uint32{32, 64}) || p.TMA[0].Line {
		t.Errorf("tensor maps %+v, want Y's 32×64 boxes", p.TMA)
	}
	if n := strings.Count(p.Source, "tl::tma_reduce_add_2d("); n != 2 || strings.Contains(p.Source, "atomicAdd(") ||
		!strings.Contains(p.Source, "tl::bulk_wait_read<0>();") {
		t.Errorf("want two reduce-adds, waited for their reads, and no thread's atomics:\n%s", p.Source)
	}
	old, err := Compile(fn, Options{Arch: "sm_80"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(old.Source, "tma_reduce") || !strings.Contains(old.Source, "atomicAdd(") {
		t.Errorf("sm_80: want the threads' atomics:\n%s", old.Source)
	}
	// The same kernel also clearing a row of Y first: the threads add.
	f := tl.NewFunc("stores_and_adds")
	X, Y := f.In("X", tl.F32, 64, 64), f.Out("Y", tl.F32, 64, 64)
	f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		x, s, z := k.Fragment(tl.F32, 64, 64), k.Shared(tl.F32, 64, 64), k.Fragment(tl.F32, 64)
		k.Clear(z)
		k.Copy(z, Y.Sub(0, tl.All))
		k.Copy(X, x)
		k.Copy(x, s)
		k.AtomicAdd(s, Y)
	})
	both, err := f.Build(Limits("sm_90a"))
	if err != nil {
		t.Fatal(err)
	}
	q, err := Compile(both, Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(q.Source, "tma_reduce") {
		t.Errorf("a kernel that also stores to Y reduces by TMA:\n%s", q.Source)
	}
}
