package kernels

// Config spaces for the autotuner: every tiling worth considering for a
// problem, with the constraints that prune the ones that cannot work
// before anything is compiled. The rules mirror what target/cuda decides
// (infer.go chooseWarps, emit_wgmma.go wgmmaFits, smem.go planShared); a
// config that slips through anyway fails to compile, which the tuner
// survives.

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/tilego/tilego/ir"
)

// Limits the pruning applies (sm_90: 227 KiB of shared memory per block
// with the opt-in; 255 registers per thread, beyond which the compiler
// spills to local memory).
const (
	MaxSharedBytes = 227 * 1024
	MaxRegs        = 255
	RegMargin      = 16   // the estimate is rough: keep this far below MaxRegs
	sharedAlign    = 1024 // every shared tile is rounded up to this (the 128B swizzle's period)
)

// Register estimate overheads: addresses, loop counters, row statistics
// and operand fragments, beyond the accumulator-sized fragments. Fitted to
// the H200 run of 2026-11-22 (FA: 98 registers at M128 N64 T256 d64; GEMM:
// 174 at 128×256 over 256 threads).
const (
	attnRegOverhead = 40
	gemmRegOverhead = 48
)

// The axes of the spaces.
var (
	attnMs      = []int{64, 128, 192}
	attnNs      = stepRange(32, 256, 16)
	attnStages  = []int{1, 2, 3}
	attnThreads = []int{128, 256, 384}

	gemmBMs     = []int{64, 128, 256}
	gemmBNs     = []int{64, 128, 256}
	gemmBKs     = []int{32, 64}
	gemmStages  = []int{2, 3, 4}
	gemmThreads = []int{128, 256}
	gemmRasters = []int{0, 8}
)

func stepRange(lo, hi, step int) []int {
	var out []int
	for x := lo; x <= hi; x += step {
		out = append(out, x)
	}
	return out
}

// Estimate is what a config costs by the CUDA backend's rules.
type Estimate struct {
	// SharedBytes is the shared memory the backend plans: tiles rounded up
	// to 1024 bytes, pipelined tiles once per stage, the epilogue's tile
	// reusing the main loop's bytes.
	SharedBytes int
	// DeclaredShared is what the verifier counts: the bytes of the tiles
	// live at once (ir.Kernel.PeakSharedBytes), each once, unrounded.
	DeclaredShared int
	// Regs estimates registers per thread: the f32 fragments' elements per
	// thread plus a fixed overhead.
	Regs int
	// WGMMA: on sm_90a the GEMMs lower to warpgroup MMA (else mma.sync).
	WGMMA bool
	// Reject says why the config cannot work ("" when it can).
	Reject string
}

// Candidates lists the whole space of p's kernel, before pruning: the
// cross product of every axis. It is nil for a kernel with no space.
func Candidates(p Problem) []Config {
	var cs []Config
	switch p.(type) {
	case *attnProblem:
		for _, m := range attnMs {
			for _, n := range attnNs {
				for _, st := range attnStages {
					for _, t := range attnThreads {
						for _, ws := range []bool{false, true} {
							cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: ws})
						}
						if t == 256 { // two consumer warpgroups to take turns
							cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, PingPong: true},
								AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, PingPong: true, Overlap: true})
						}
						cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, Overlap: true})
					}
				}
			}
		}
		// Persistent walks of the producer configs (the short sequences'
		// winners, bench's shortAttnConfigs), with the output staged or
		// stored from registers.
		for _, c := range slices.Clone(cs) {
			if a := c.(AttnConfig); a.WS {
				a.Persistent = true
				cs = append(cs, a)
				a.Direct = true
				cs = append(cs, a)
			}
		}
	case *gemmProblem:
		for _, bm := range gemmBMs {
			for _, bn := range gemmBNs {
				for _, bk := range gemmBKs {
					for _, st := range gemmStages {
						for _, t := range gemmThreads {
							for _, r := range gemmRasters {
								for _, ws := range []bool{false, true} {
									cs = append(cs, GemmConfig{BM: bm, BN: bn, BK: bk, Stages: st, Threads: t, Policy: ir.Square, Raster: r, WS: ws})
								}
							}
						}
					}
				}
			}
		}
	}
	return cs
}

// Space is the configs of Candidates(p) that pass Reject on arch
// ("sm_80", "sm_90a"), most promising first: on sm_90a the configs whose
// GEMMs lower to wgmma, then the rest; within each, ping-pong and
// persistent configs after the others, and the nearest to p.GPUConfig()
// first (distance in log2 of every numeric field).
func Space(p Problem, arch string) []Config {
	type ranked struct {
		c     Config
		slow  bool
		late  bool // ping-pong or a persistent walk
		dist  float64
		index int
	}
	ref := p.GPUConfig()
	var rs []ranked
	for i, c := range Candidates(p) {
		e := EstimateConfig(p, c, arch)
		if e.Reject != "" {
			continue
		}
		// Ping-pong lost to the same tiles without it at 35 of the 36
		// sweep points on an H100, and with the deferred P·V it only tied
		// (docs/perf.md): it comes after the rest, as do the persistent
		// walks, which win only up to 2k tokens (where the benchmark's
		// seeds hold the ones that won).
		late := false
		if a, ok := c.(AttnConfig); ok {
			late = a.PingPong || a.Persistent
		}
		rs = append(rs, ranked{c, arch == "sm_90a" && !e.WGMMA, late, ConfigDistance(c, ref), i})
	}
	later := func(a, b bool) int {
		if a {
			return 1
		}
		return -1
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.slow != b.slow:
			return later(a.slow, b.slow)
		case a.late != b.late:
			return later(a.late, b.late)
		case a.dist != b.dist:
			if a.dist < b.dist {
				return -1
			}
			return 1
		}
		return a.index - b.index
	})
	out := make([]Config, len(rs))
	for i, r := range rs {
		out[i] = r.c
	}
	return out
}

// Reject says why c cannot work for p on arch, "" when it can.
func Reject(p Problem, c Config, arch string) string { return EstimateConfig(p, c, arch).Reject }

// ConfigDistance is the distance between two configs of one type: the
// Euclidean distance of the log2 of their numeric fields (a zero counts
// as 1). Configs of different types are infinitely far apart.
func ConfigDistance(a, b Config) float64 {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || va.Kind() != reflect.Struct {
		return math.Inf(1)
	}
	var d float64
	for i := range va.NumField() {
		x, y := va.Field(i), vb.Field(i)
		if !x.CanInt() && !x.CanUint() {
			continue
		}
		lx, ly := log2Field(x), log2Field(y)
		d += (lx - ly) * (lx - ly)
	}
	return math.Sqrt(d)
}

func log2Field(v reflect.Value) float64 {
	var f float64
	if v.CanInt() {
		f = float64(v.Int())
	} else {
		f = float64(v.Uint())
	}
	return math.Log2(max(f, 1))
}

// EstimateConfig estimates c's resources for p on arch and says whether
// it can work.
func EstimateConfig(p Problem, c Config, arch string) Estimate {
	switch p := p.(type) {
	case *attnProblem:
		cfg, ok := c.(AttnConfig)
		if !ok {
			return Estimate{Reject: fmt.Sprintf("config is %T, want kernels.AttnConfig", c)}
		}
		return attnEstimate(p.s, cfg, arch)
	case *gemmProblem:
		cfg, ok := c.(GemmConfig)
		if !ok {
			return Estimate{Reject: fmt.Sprintf("config is %T, want kernels.GemmConfig", c)}
		}
		return gemmEstimate(p.s, cfg, arch)
	}
	return Estimate{Reject: fmt.Sprintf("%s has no config space", p.Kernel())}
}

func attnEstimate(s AttnShape, c AttnConfig, arch string) Estimate {
	var e Estimate
	eb := s.DType.Bytes()
	st := 1
	// With a producer, K and V take rings of their own (compiler/cudagen/split_rings.go).
	split := c.Overlap && c.WS && arch == "sm_90a"
	if c.Stages >= 2 { // a pipelined loop gives its K and V tiles one buffer per stage
		st = c.Stages
		if c.Overlap && !split { // and one more while the deferred P·V reads the last V
			st++
		}
	}
	qs, os := tileBytes(c.M, s.Dqk, eb), tileBytes(c.M, s.Dv, eb)
	ks, vs := tileBytes(c.N, s.Dqk, eb), tileBytes(c.N, s.Dv, eb)
	tma := tmaBarriers(arch, eb, st, [][2]int{{c.N, s.Dqk}, {c.N, s.Dv}}, []int{s.Dqk, s.Dv})
	if split {
		tma *= 2
	}
	if c.Direct { // no staging tile: the output goes from registers to O
		os = 0
	}
	ring := st * (ks + vs)
	e.SharedBytes = max(qs+ring, os) + tma
	ws := checkWS(c.WS, tma, c.Threads)
	e.SharedBytes += ws.shared
	if c.Persistent && c.WS && tma > 0 && ws.reject == "" {
		ticket := 0 // tiles drawn from a counter, their tickets in shared memory (FlashAttention)
		if c.Draw {
			ticket = 4
		}
		e.SharedBytes = walkShared(qs, ring, os, st, tma+ws.shared, ticket)
	}
	e.DeclaredShared = max(c.M*s.Dqk+c.N*s.Dqk+c.N*s.Dv, c.M*s.Dv) * eb
	switch { // a walk's loop keeps the K and V tiles live through the epilogue
	case c.Direct:
		e.DeclaredShared = (c.M*s.Dqk + c.N*s.Dqk + c.N*s.Dv) * eb
	case c.Persistent:
		e.DeclaredShared = (max(c.M*s.Dqk, c.M*s.Dv) + c.N*s.Dqk + c.N*s.Dv) * eb
	}
	if c.Threads > 0 {
		e.Regs = (c.M*c.N+c.M*s.Dv)/c.Threads + attnRegOverhead // S and acc (P takes S's registers)
		if c.Overlap {                                          // P of tile j-1 lives beside S of tile j (two 16-bit values a register)
			e.Regs += c.M * c.N / 2 / c.Threads
		}
	}
	// S = Q·Kᵀ (A = qs, B = ks transposed) and acc += P·V (A = P in
	// registers, B = vs) must take the same path: P gets S's layout.
	w1 := wgmmaOK(arch, s.DType, c.Threads, c.M, c.N, s.Dqk, [2]int{c.N, s.Dqk}, [2]int{c.M, s.Dqk})
	w2 := wgmmaOK(arch, s.DType, c.Threads, c.M, s.Dv, c.N, [2]int{c.N, s.Dv})
	e.WGMMA = w1 && w2
	warps := c.Threads / 32
	mma := c.Threads%32 == 0 && c.M%(16*max(warps, 1)) == 0 && c.N%16 == 0 && s.Dv%8 == 0 && s.Dqk%16 == 0
	e.Reject = firstReason(
		bad(c.M < 16 || c.N < 16 || c.Stages < 1 || c.Threads < 32, "tiles below 16 rows, no stages or under a warp"),
		bad(c.Threads%32 != 0, "threads = %d is not a multiple of 32", c.Threads),
		bad(s.DType != ir.BF16 && s.DType != ir.F16, "%s attention has no CUDA lowering", s.DType),
		bad(c.M > 64 && c.M-64 >= s.Sq, "M = %d: a smaller tile covers the %d query rows", c.M, s.Sq),
		bad(c.N > 32 && c.N-16 >= s.Skv, "N = %d: a smaller tile covers the %d keys", c.N, s.Skv),
		bad(c.Stages > 1 && c.N*(c.Stages-1) >= roundUp(s.Skv, 16), "%d stages: the %d keys take fewer tiles", c.Stages, s.Skv),
		bad(w1 != w2, "the two GEMMs would lower differently (wgmma %v, %v), so P cannot keep S's layout", w1, w2),
		bad(!e.WGMMA && !mma, "%d threads cannot split %d×%d tiles: wgmma needs M %% (64·threads/128) == 0, mma.sync M %% (16·warps) == 0", c.Threads, c.M, c.N),
		bad(e.SharedBytes > MaxSharedBytes, "shared memory %d bytes (tiles × stages) is over %d", e.SharedBytes, MaxSharedBytes),
		bad(e.DeclaredShared > MaxSharedBytes, "the tiles declare %d bytes of shared memory, over %d", e.DeclaredShared, MaxSharedBytes),
		ws.reject,
		bad(c.PingPong && (!c.WS || c.Threads != 256), "pingpong: the consumers taking turns need a producer (ws) and two warpgroups (256 threads)"),
		regsOverBudget(e.Regs, c.Threads, ws.regs),
	)
	return e
}

// walkShared mirrors target/cuda's placeWalk for a persistent walk whose
// producer loads the query tile (persistent_loads.go): two query buffers (qs bytes
// each) where they fit beside the rest with room for the barriers
// (walkLoad.barrierBytes bounds them by the ring's slots, st), else one;
// the staging tile (os, 0 when Direct) lives across the walk's loop as
// the ring does, so they share no bytes; then the rings' barriers (bars),
// the walk's full and empty ones and, where it draws its tiles, a ticket
// of ticket bytes a buffer. Where not even one fits, the consumers load
// the query tile and the plan is the usual one.
func walkShared(qs, ring, os, st, bars, ticket int) int {
	for _, n := range []int{2, 1} {
		tiles := n*qs + ring + os
		if tiles+8+32*st+(16+ticket)*n <= MaxSharedBytes {
			return tiles + bars + (16+ticket)*n
		}
	}
	return max(qs+ring, os) + bars
}

// wsCost is what warp specialization (a config's WS) adds: the empty
// barriers' shared memory and the consumers' register budget (setmaxnreg
// gives two consumer warpgroups 232 registers each; otherwise the 128
// producer threads count against the block's 64K).
type wsCost struct {
	shared, regs int
	reject       string
}

// checkWS mirrors target/cuda's planWS: a producer needs the loop loaded
// by TMA (tma: that loop's barrier bytes) and whole warpgroups.
func checkWS(ws bool, tma, threads int) wsCost {
	switch {
	case !ws:
		return wsCost{}
	case tma == 0 || threads%128 != 0 || threads+128 > 1024:
		return wsCost{reject: "ws: a producer warpgroup needs a loop loaded by TMA (sm_90a) and whole consumer warpgroups"}
	case threads == 256:
		return wsCost{shared: tma, regs: 232}
	}
	return wsCost{shared: tma, regs: regBudget(threads + 128)}
}

// regBudget is the registers a thread may hold without spilling: 255, or
// fewer where the block's threads would outgrow the SM's 64K registers
// (384 threads get 168).
func regBudget(threads int) int {
	if threads <= 0 {
		return MaxRegs
	}
	return min(MaxRegs, 65536/threads/8*8)
}

// regsOverBudget rejects an estimate within RegMargin of the budget (0:
// the thread count's): such configs spill (the wgmma accumulators among
// them), and on an H100 a FlashAttention config at M 192, N 128, 384
// threads (168 registers) even faulted.
func regsOverBudget(regs, threads, budget int) string {
	if budget == 0 {
		budget = regBudget(threads)
	}
	lim := budget - RegMargin
	return bad(regs > lim, "about %d registers per thread, over %d (%d threads)", regs, lim, threads)
}

func gemmEstimate(s GemmShape, c GemmConfig, arch string) Estimate {
	var e Estimate
	eb, ob := s.DType.Bytes(), s.OutDType.Bytes()
	st := 1
	if c.Stages >= 2 {
		st = c.Stages
	}
	as, bs, cs := tileBytes(c.BM, c.BK, eb), tileBytes(c.BK, c.BN, eb), tileBytes(c.BM, c.BN, ob)
	ar, ac, br, bc := c.BM, c.BK, c.BK, c.BN
	if s.TransA {
		ar, ac = ac, ar
	}
	if s.TransB {
		br, bc = bc, br
	}
	aRow, bRow := s.K, s.N // the stored rows' lengths
	if s.TransA {
		aRow = s.M
	}
	if s.TransB {
		bRow = s.K
	}
	tma := tmaBarriers(arch, eb, c.Stages, [][2]int{{ar, ac}, {br, bc}}, []int{aRow, bRow})
	e.SharedBytes = max(st*(as+bs), cs) + tma
	ws := checkWS(c.WS, tma, c.Threads)
	e.SharedBytes += ws.shared
	e.DeclaredShared = max((c.BM*c.BK+c.BK*c.BN)*eb, c.BM*c.BN*ob)
	if c.Threads > 0 {
		e.Regs = c.BM*c.BN/c.Threads + gemmRegOverhead
	}
	aTile, bTile := [2]int{c.BM, c.BK}, [2]int{c.BK, c.BN}
	if s.TransA {
		aTile = [2]int{c.BK, c.BM}
	}
	if s.TransB {
		bTile = [2]int{c.BN, c.BK}
	}
	e.WGMMA = wgmmaOK(arch, s.DType, c.Threads, c.BM, c.BN, c.BK, aTile, bTile)
	e.Reject = firstReason(
		bad(c.BM < 16 || c.BN < 8 || c.BK < 16 || c.Stages < 1 || c.Threads < 32, "tiles too small, no stages or under a warp"),
		bad(c.Threads%32 != 0, "threads = %d is not a multiple of 32", c.Threads),
		bad(s.DType != ir.BF16 && s.DType != ir.F16, "the CUDA backend multiplies f16 or bf16, not %s", s.DType),
		bad(c.BK%16 != 0, "BK = %d is not a multiple of 16 (mma k16)", c.BK),
		bad(c.BM > 64 && c.BM/2 >= s.M, "BM = %d: a smaller tile covers the %d rows", c.BM, s.M),
		bad(c.BN > 64 && c.BN/2 >= s.N, "BN = %d: a smaller tile covers the %d columns", c.BN, s.N),
		bad(c.BK > 32 && c.BK/2 >= s.K, "BK = %d: a smaller tile covers K = %d", c.BK, s.K),
		bad(c.Stages > 1 && c.BK*(c.Stages-1) >= roundUp(s.K, 16), "%d stages: K = %d takes fewer tiles", c.Stages, s.K),
		bad(!e.WGMMA && !squareWarpsOK(c.BM, c.BN, c.Threads/32), "%d warps cannot tile a %d×%d output in 16×8 pieces", c.Threads/32, c.BM, c.BN),
		bad(e.SharedBytes > MaxSharedBytes, "shared memory %d bytes (tiles × stages) is over %d", e.SharedBytes, MaxSharedBytes),
		bad(e.DeclaredShared > MaxSharedBytes, "the tiles declare %d bytes of shared memory, over %d", e.DeclaredShared, MaxSharedBytes),
		ws.reject,
		regsOverBudget(e.Regs, c.Threads, ws.regs),
	)
	return e
}

// tmaBarriers is the shared memory of the mbarriers (8 bytes a stage, after
// the tiles; the tiles' rounding keeps them aligned) that sm_90a gives a
// pipelined loop whose ring tiles ([rows, cols]) it loads by TMA: 16-bit
// tiles of at most 256 rows in whole 128-byte panels, from tensors whose
// stored rows (rowLens elements) are multiples of 16 bytes (target/cuda's
// tmaCopy).
func tmaBarriers(arch string, eb, stages int, tiles [][2]int, rowLens []int) int {
	if arch != "sm_90a" || stages < 2 || eb != 2 {
		return 0
	}
	for _, t := range tiles {
		if t[0] > 256 || t[1]*eb%128 != 0 {
			return 0
		}
	}
	for _, n := range rowLens {
		if n*eb%16 != 0 {
			return 0
		}
	}
	return 8 * stages
}

// tileBytes is a rows×cols shared tile's bytes as the backend places it.
func tileBytes(rows, cols, eb int) int { return roundUp(rows*cols*eb, sharedAlign) }

// wgmmaOK mirrors target/cuda's wgmmaFits for a Gemm with an m×n
// accumulator and reduction k whose shared operands are rows×cols tiles:
// sm_90a, 16-bit inputs, whole warpgroups splitting M in 64-row tiles,
// n ≤ 256, and tiles in a canonical swizzled layout.
func wgmmaOK(arch string, dt ir.DType, threads, m, n, k int, tiles ...[2]int) bool {
	if arch != "sm_90a" || (dt != ir.BF16 && dt != ir.F16) || threads <= 0 {
		return false
	}
	if threads%128 != 0 || m%(64*(threads/128)) != 0 || n%8 != 0 || n > 256 || k%16 != 0 {
		return false
	}
	for _, t := range tiles {
		rb := t[1] * dt.Bytes()
		if t[0]%8 != 0 || !(rb%128 == 0 || rb == 64 || rb == 32) {
			return false
		}
	}
	return true
}

// squareWarpsOK mirrors chooseWarps for the Square policy: some split of
// the warps gives each a multiple of 16×8.
func squareWarpsOK(m, n, warps int) bool {
	for wm := 1; wm <= warps; wm++ {
		if warps%wm == 0 && m%(16*wm) == 0 && n%(8*(warps/wm)) == 0 {
			return true
		}
	}
	return false
}

// bad returns the formatted reason when cond holds, else "".
func bad(cond bool, format string, args ...any) string {
	if !cond {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func firstReason(reasons ...string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}

// ---- bytes moved, for bench's GB/s ----

// Bytes is the traffic an ideal attention kernel has: Q, K and V read
// once, O and the LSE written once.
func (p *attnProblem) Bytes() float64 {
	s := p.s
	eb := float64(s.DType.Bytes())
	q := float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Dqk)
	kv := float64(s.B) * float64(s.HKV) * float64(s.Skv) * float64(s.Dqk+s.Dv)
	o := float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Dv)
	return (q+kv+o)*eb + float64(s.B)*float64(s.H)*float64(s.Sq)*4
}

// Bytes is the traffic an ideal GEMM has: A and B read once, C written
// once.
func (p *gemmProblem) Bytes() float64 {
	s := p.s
	m, n, k := float64(s.M), float64(s.N), float64(s.K)
	return (m*k+k*n)*float64(s.DType.Bytes()) + m*n*float64(s.OutDType.Bytes())
}
