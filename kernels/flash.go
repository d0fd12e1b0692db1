// Package kernels is tilego's library: GEMM and FlashAttention written in
// the tile language, each taking its shape and its config as parameters.
package kernels

import (
	"math"

	"github.com/tilego/tilego/tl"
)

// AttnShape is one attention problem. Tensors are indexed [B, H, S, D]
// whatever their memory layout.
type AttnShape struct {
	B, H, HKV, Sq, Skv, Dqk, Dv int
	Causal                      bool      // bottom-right aligned, as FlashAttention
	DType                       tl.DType  // f16 or bf16
	BSHD                        bool      // memory layout [B, S, H, D] instead of [B, H, S, D]
	Scale                       float64   // softmax scale, positive; 0 means 1/sqrt(Dqk)
	Mods                        *AttnMods // score and mask modifiers of the forward kernel (attn_mods.go), or nil
}

// AttnConfig is how the kernel tiles the problem.
type AttnConfig struct {
	M, N    int // query rows and key rows per tile
	Stages  int
	Threads int
	// WS asks for warp specialization: a producer warpgroup loads K and V
	// (Hopper, by TMA) while the Threads compute.
	WS bool
	// PingPong (with WS and 256 threads) has the two consumer warpgroups
	// take turns at the tensor cores, so one's softmax runs under the
	// other's GEMMs (tl's PingPong).
	PingPong bool
	// Overlap defers each tile's P·V to the next iteration, after that
	// tile's Q·Kᵀ (tl's Defer), so the softmax runs under it on the tensor
	// cores (FlashAttention-3's intra-warpgroup overlap). With a producer
	// on Hopper, K and V take rings of the stages each; otherwise their one
	// ring takes a buffer more than the stages (compiler/cudagen/split_rings.go).
	Overlap bool
	// Prefetch has each block, once its own loads are issued, fetch into
	// L2 the query tile and first K/V tiles of the block one wave later
	// (its linear index plus the SM count), so that block's prologue reads
	// L2 rather than HBM: short sequences, where blocks are short and the
	// prologue is a large part of each, are what it is for.
	Prefetch bool
	// Direct stores the output from registers (16 bytes a lane after the
	// quad's lanes exchange their pairs, compiler/cudagen/emit_store16.go) rather
	// than staging it in shared memory for TMA stores: the staging tile's
	// bytes go to other use, such as a persistent d256 walk's query tile.
	Direct bool
	// Persistent launches a block an SM that walks the query tiles in
	// turn (tile g, g + grid, ...), in the order the blocks would have
	// started; with WS its producer loads the next tile's query tile and
	// K/V while the consumers finish this one (compiler/cudagen/persistent_loads.go); with
	// Prefetch, a block prefetches its own next tile.
	Persistent bool
	// Cluster (2; with WS, not Persistent) runs the blocks in pairs of
	// query tiles of one head that fetch each K and V tile once, half by
	// each, multicast to both (tl's Cluster): half the K/V traffic from
	// L2. Non-causal only: a causal pair would need different tiles.
	Cluster int `config:"omitzero"`
	// Draw (with Persistent and WS, on Hopper) has a walk draw each next
	// tile from a counter rather than take every grid-th (tl's Draw,
	// compiler/cudagen/grid_loop.go); a causal walk then draws single tiles in
	// headsThenLongest's order rather than walk pairs (causalPair).
	// Non-causal, on an H100 at 512-2k tokens it was 0.96-1.15× the dealt
	// walk: ahead with ping-pong and no overlap, behind at d256 with the
	// overlap; with both at d128 1.010× at 512 tokens
	// timed back to back, but not the fastest in the sweep's flushed
	// timing, and 0.989-0.998× at 1k-2k. Causal
	// (back to back): at d128 512 tokens
	// 1.03-1.05× the pairs walk (the same DRAM bytes at 74% of the peak
	// bandwidth rather than 70%: the SMs' tile ends no longer coincide),
	// the sweep's pick there; at d256 1.00× at 512 (DRAM reads 215 MB
	// against 207) and 0.94× at 1k.
	Draw bool `config:"omitzero"`
	// SharedP (the backward) hands P and dS to dV's and dK's GEMMs through
	// shared memory rather than registers, so Sᵀ and dPᵀ may take any warp
	// layout: two warpgroups over 64 keys, each computing half of dK's and
	// dV's columns, where head dim 256's accumulators do not fit one
	// warpgroup's registers.
	SharedP bool `config:"omitzero"`
	// WholeTiles (the backward, causal or masked) computes P without the
	// element-wise mask on the tiles every query of which sees every key
	// (in bounds, below the diagonal, whole to the modifiers' mask), and
	// with it on the others. The backward's GPU config where keys are
	// hidden.
	WholeTiles bool `config:"omitzero"`
	// BulkDQ (the backward) adds each query tile's dQ into dQacc from a
	// shared tile, by one bulk reduction where the target has one (TMA on
	// Hopper), rather than by each thread's atomics from its registers.
	// Not the GPU config: the tile's write and the barriers around it cost
	// more than the atomics they replace (0.81× at d128 4k, 0.90× at d64
	// 4k causal on an H200, alternated).
	BulkDQ bool `config:"omitzero"`
}

// SoftmaxScale is the scale applied to Q·Kᵀ.
func (s AttnShape) SoftmaxScale() float64 {
	if s.Scale != 0 {
		return s.Scale
	}
	return 1 / math.Sqrt(float64(s.Dqk))
}

// strides returns the element strides of a [B, heads, S, D] tensor.
func (s AttnShape) strides(heads, seq, d int) []any {
	if s.BSHD {
		return []any{seq * heads * d, d, heads * d, 1}
	}
	return []any{heads * seq * d, seq * d, d, 1}
}

// qkv declares the inputs Q, K and V of f in s's type and layout.
func (s AttnShape) qkv(f *tl.Func) (Q, K, V *tl.Tensor) {
	return s.rows(f.In, "Q", s.H, s.Sq, s.Dqk), s.rows(f.In, "K", s.HKV, s.Skv, s.Dqk), s.rows(f.In, "V", s.HKV, s.Skv, s.Dv)
}

// rows declares (with f.In or f.Out) a [B, heads, seq, d] tensor of s's
// type and layout.
func (s AttnShape) rows(decl func(string, tl.DType, ...any) *tl.Tensor, name string, heads, seq, d int) *tl.Tensor {
	return decl(name, s.DType, s.B, heads, seq, d).WithStrides(s.strides(heads, seq, d)...)
}

// FlashAttention computes O = softmax(scale·Q·Kᵀ)·V and the log-sum-exp of
// each query row, one block per M query rows (or, Persistent, a block an
// SM walking those tiles), streaming K and V in tiles of N rows with the
// online softmax.
func FlashAttention(s AttnShape, c AttnConfig) *tl.Func {
	f := tl.NewFunc("flash_attention")
	Q, K, V := s.qkv(f)
	O := s.rows(f.Out, "O", s.H, s.Sq, s.Dv)
	LSE := f.Out("LSE", tl.F32, s.B, s.H, s.Sq)
	s.Mods = s.Mods.declared(f)
	nM := (s.Sq + c.M - 1) / c.M
	tiles := s.B * s.H * nM
	at := func(id tl.Expr) (b, h, bx tl.Expr) { // the tile of launch-order index id
		if s.Causal && c.Draw && c.Persistent {
			return headsThenLongest(id, s, c)
		}
		if s.Causal {
			return longestFirst(id, s, c)
		}
		return id.Div(s.H * nM), id.Div(nM).Mod(s.H), id.Mod(nM)
	}
	// tile runs query tile bx of head h in batch b; next, when
	// prefetching, gives the launch-order index of the tile that about the
	// same SM runs next.
	tile := func(k *tl.Block, b, h, bx tl.Expr, next func() tl.Expr) {
		var prefetch func()
		if c.Prefetch {
			prefetch = func() {
				next := next()
				k.If(next.Lt(tiles), func() {
					nb, nh, nbx := at(next)
					hk := nh.Div(s.H / s.HKV)
					k.Prefetch(Q.Sub(nb, nh, tl.Tile(nbx, c.M), tl.All))
					k.Prefetch(K.Sub(nb, hk, tl.Tile(0, c.N), tl.All))
					k.Prefetch(V.Sub(nb, hk, tl.Tile(0, c.N), tl.All))
				})
			}
		}
		r := attnLoop(k, Q, K, V, s, c, b, h, bx, prefetch, nil)
		finalRows(k, r, O, LSE, s, c, b, h, bx)
	}
	if c.Persistent { // a block an SM, each walking every grid-th tile (causal: pair of tiles, causalWalk)
		units, pairs := tiles, s.Causal && nM%2 == 0 && !c.Draw
		if pairs {
			units = tiles / 2
		}
		grid := tl.Min(units, f.NumSMs())
		f.Kernel(tl.Grid(grid), c.Threads, func(k *tl.Block) {
			if !pairs { // equal tiles: dealt out by block index, or (Draw) drawn from a counter
				if c.Draw {
					k.Draw()
				} else {
					k.LateStart(lateCycles(s, c))
				}
				k.Spread(units, func(id tl.Expr) {
					b, h, bx := tileVars(k)(at(id))
					tile(k, b, h, bx, func() tl.Expr { return id.Add(grid) })
				})
				return
			}
			g, _, _ := k.Idx()
			n, walk := causalWalk(s, c, g, grid)
			k.Serial(n, func(i tl.Expr) {
				second := i.Mod(2)
				id := g.Add(i.Div(2).Mul(grid)).Mul(2).Add(second) // a whole round's pair id / 2, its second tile if odd
				b, h, bx := tileVars(k)(walk(i))
				tile(k, b, h, bx, func() tl.Expr { return id.Add(1).Add(second.Mul(grid.Mul(2).Sub(2))) }) // past the rounds, a hint at most
			})
		})
		return f
	}
	f.Kernel(tl.Grid(nM, s.H, s.B), c.Threads, func(k *tl.Block) {
		bx, h, b := k.Idx()
		id := b.Mul(s.H).Add(h).Mul(nM).Add(bx) // launch order
		if s.Causal {
			b, h, bx = at(id)
		}
		tile(k, b, h, bx, func() tl.Expr { return id.Add(k.NumSMs()) })
	})
	return f
}

// lateCycles is how late the blocks of a dealt walk that run a tile fewer
// start (tl's LateStart): a quarter of a tile's time, counting 2160 FLOPs
// a cycle an SM (the 512-token walks' rate on an H100), and at most 8000
// cycles. On an H100: d256 512 with
// 8000 cycles 0.972× the time (4000: 0.988×, 11000: 0.977×), d128 512
// 0.969-0.970× at 2000-6000, d256 1k 0.984× at 8000 (12000-16000:
// 0.986×). On an H200, non-causal: d256 512 0.973×, d128 512 0.982×,
// d256 1k 0.989×, d128 1k 0.996× (a causal walk of pairs has no short
// blocks).
func lateCycles(s AttnShape, c AttnConfig) int {
	flops := 2 * c.M * s.Skv * (s.Dqk + s.Dv)
	return min(8000, flops/(4*2160))
}

// tileVars holds a walk iteration's tile in variables, set once an
// iteration, by the producer too (compiler/cudagen/persistent_vars.go): inlined at
// every use, the causal walk's packed tail (selects and divisions by the
// grid) spilled and ran at 0.35-0.92× (docs/perf.md).
func tileVars(k *tl.Block) func(b, h, bx tl.Expr) (tl.Expr, tl.Expr, tl.Expr) {
	return func(b, h, bx tl.Expr) (tl.Expr, tl.Expr, tl.Expr) {
		return k.Var(tl.I32, b).Named("tile_b").Val(), k.Var(tl.I32, h).Named("tile_h").Val(), k.Var(tl.I32, bx).Named("tile_m").Val()
	}
}

// causalPair maps a causal persistent walk's tile id to its tile: pair
// id / 2 is query tiles p and nM-1-p of one head (heads in turn, p = id/2
// mod nM/2). Each pair holds nM+1 KV tiles whatever p, so a walk that
// gives every block the same number of pairs gives it the same work: a
// block walking every grid-th tile instead kept about the same place in
// longestFirst's groups, and the same tile lengths, from one round to the
// next (1.2-1.5× the mean work for some blocks at 512-1k tokens,
// docs/perf.md).
//
// A head's pairs run side by side on neighbouring SMs. At head dim 256
// the shorter tile goes first: the later reads of a K/V tile then come a
// few iterations after an earlier one, while it is in L2, where longer
// first the short tiles re-read the head's first K/V tiles a whole long
// tile later, from HBM (H100, d256 causal 512: DRAM reads 259 → 213 MB,
// L2 hits 32 → 46%, 1.09× faster). At d128 the same order was 2-5% slower
// at 512-1k tokens and at d64 within 1%, so they keep the longer first.
func causalPair(id tl.Expr, s AttnShape, c AttnConfig) (b, h, bx tl.Expr) {
	half := (s.Sq + c.M - 1) / c.M / 2
	pair, second := id.Div(2), id.Mod(2)
	head, p := pair.Div(half), pair.Mod(half)
	first, other := tl.Int(2*half-1).Sub(p), p // the longer first
	if shortFirst(s) {
		first, other = other, first
	}
	bx = tl.Select(second.Eq(0), first, other)
	return head.Div(s.H), head.Mod(s.H), bx
}

// shortFirst says whether causalPair runs a pair's shorter tile first.
func shortFirst(s AttnShape) bool { return s.Dqk >= 256 }

// longestFirst maps a causal block, by its index id in launch order over
// the grid (query tiles, heads, batch), to the tile it runs so that blocks
// start longest first:
// heads are taken in groups, and a group launches all its last query tiles
// (the most keys), then the tiles before them, down to its first tiles.
// Ending each group on its shortest tiles keeps the last wave short (with
// one block per head in turn, a long tile could start last and run alone),
// and a group's K and V, read by all its tiles, stay in L2.
func longestFirst(id tl.Expr, s AttnShape, c AttnConfig) (b, h, bx tl.Expr) {
	nM, heads := (s.Sq+c.M-1)/c.M, s.B*s.H
	g := causalGroup(s, c, nM, heads)
	first := id.Div(g * nM).Mul(g) // the group's first head
	size := tl.Int(g)
	if heads%g != 0 { // the last group is smaller
		size = tl.Min(g, tl.Int(heads).Sub(first))
	}
	r := id.Mod(g * nM)
	p := first.Add(r.Mod(size)) // head of the batch, b·H + h
	return p.Div(s.H), p.Mod(s.H), tl.Int(nM - 1).Sub(r.Div(size))
}

// headsThenLongest orders a causal walk's tiles for blocks that draw them
// (Draw): heads in turn, each head's tiles longest first, and the last
// causalGroup heads as longestFirst orders them, so that the walk ends on
// short tiles. Drawn as blocks free up, a head's tiles start together
// (its K and V are read from L2 by all but the first), while the blocks'
// tile ends fall apart. On an H100 (back to back)
// against longestFirst's order for the whole walk: d256 causal 512 0.962×
// the time (DRAM reads 215 MB against 226), 1k 0.975×, d128 causal 512
// 0.990×. Of the tails tried, one group: half a group or none lost 2-6%
// at d256 512-1k (the end less balanced); two groups lost 3% at 512 and
// gained 2% at 1k; three to eight lost 9-60% (a head's tiles further
// apart: L2 misses).
func headsThenLongest(id tl.Expr, s AttnShape, c AttnConfig) (b, h, bx tl.Expr) {
	nM, heads := (s.Sq+c.M-1)/c.M, s.B*s.H
	g := causalGroup(s, c, nM, heads)
	lead := (heads - g) * nM // the tiles before the last group
	r := id.Sub(lead)
	inLead := id.Lt(lead)
	p := tl.Select(inLead, id.Div(nM), tl.Int(heads-g).Add(r.Mod(g)))
	bx = tl.Select(inLead, tl.Int(nM-1).Sub(id.Mod(nM)), tl.Int(nM-1).Sub(r.Div(g)))
	return p.Div(s.H), p.Mod(s.H), bx
}

// causalGroup is how many heads of nM query tiles longestFirst groups:
// about a wave of blocks (128), so that a group's shortest tiles fill the
// last wave, and no more heads than keep their K and V within 16 MiB of L2
// (a third of the H100's); at least one. Larger groups lost 3% at 512
// causal tokens with d64 and d128 on an H100 (docs/perf.md): each group
// starts with its heads' first tiles, all reading K and V from HBM at once.
// In BSHD layout, blocks of fewer than 128 rows, which run several an SM,
// take at least a batch entry's H heads, whose K and V rows lie side by
// side: d64 causal 512-4k at 64 rows (three blocks an SM) ran 0.974-0.999×
// the time with groups of 32 heads on an H200 and 0.980-0.999× on an H100
// (1k with 128-key tiles: within 0.1%), while 128-row blocks at 4k ran
// 1.011-1.016× (H200).
// BHSD was not measured.
func causalGroup(s AttnShape, c AttnConfig, nM, heads int) int {
	kv := s.Skv * (s.Dqk + s.Dv) * s.DType.Bytes()
	wave := (128 + nM - 1) / max(1, nM) // no query tiles (Sq = 0): no blocks either
	g := max(1, min(heads, wave, (16<<20)/max(1, kv)))
	if c.M < 128 && s.BSHD {
		g = max(g, min(heads, s.H))
	}
	return g
}
