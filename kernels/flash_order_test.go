package kernels

import (
	"cmp"
	"strings"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// TestLongestFirst checks that the causal block order visits every
// (batch, head, query tile) once and that, within a group of heads, no
// query tile starts before a later (longer) one of its group.
func TestLongestFirst(t *testing.T) {
	cases := []struct {
		name    string
		s       AttnShape
		wantGrp int
		m       int // query rows a block; 0: 128
	}{
		{"d256_512_one_group", AttnShape{B: 4, H: 8, Sq: 512, Skv: 512, Dqk: 256, Dv: 256}, 32, 0},
		{"d256_512_groups", AttnShape{B: 32, H: 8, Sq: 512, Skv: 512, Dqk: 256, Dv: 256}, 32, 0},
		{"d64_512_a_wave", AttnShape{B: 32, H: 32, Sq: 512, Skv: 512, Dqk: 64, Dv: 64}, 32, 0}, // L2 would take 128
		{"uneven_last_group", AttnShape{B: 5, H: 7, Sq: 4096, Skv: 4096, Dqk: 128, Dv: 128}, 4, 0},
		{"sq_not_tile_multiple", AttnShape{B: 3, H: 3, Sq: 300, Skv: 700, Dqk: 64, Dv: 64}, 9, 0},
		{"long_one_head_a_group", AttnShape{B: 1, H: 3, Sq: 40000, Skv: 40000, Dqk: 128, Dv: 128}, 1, 0},
		{"rows64_a_batch_entry", AttnShape{B: 16, H: 32, Sq: 1024, Skv: 1024, Dqk: 64, Dv: 64, BSHD: true}, 32, 64}, // a wave would take 8
		{"rows64_bhsd_a_wave", AttnShape{B: 16, H: 32, Sq: 1024, Skv: 1024, Dqk: 64, Dv: 64}, 8, 64},
		{"rows64_uneven", AttnShape{B: 5, H: 7, Sq: 4096, Skv: 4096, Dqk: 64, Dv: 64, BSHD: true}, 7, 64},     // a wave would take 2
		{"rows64_wave_over_h", AttnShape{B: 8, H: 2, Sq: 512, Skv: 512, Dqk: 64, Dv: 64, BSHD: true}, 16, 64}, // the wave's 16 > H
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := AttnConfig{M: cmp.Or(tc.m, 128), N: 64, Stages: 2, Threads: 256}
			s := tc.s
			s.HKV, s.Causal, s.DType = s.H, true, ir.BF16
			heads, nM := s.B*s.H, (s.Sq+cfg.M-1)/cfg.M
			if g := causalGroup(s, cfg, nM, heads); g != tc.wantGrp {
				t.Fatalf("group %d heads, want %d", g, tc.wantGrp)
			}
			var vars [3]*ir.Var
			var out [3]ir.Expr
			f := tl.NewFunc("order")
			f.Kernel(tl.Grid(nM, s.H, s.B), 128, func(k *tl.Block) {
				x, y, z := k.Idx()
				for i, e := range []tl.Expr{x, y, z} {
					vars[i] = e.IR().(*ir.Var)
				}
				b, h, bx := longestFirst(z.Mul(s.H).Add(y).Mul(nM).Add(x), s, cfg)
				out = [3]ir.Expr{b.IR(), h.IR(), bx.IR()}
			})
			seen := map[[3]int]bool{}
			lastTile := map[int]int{} // group → tile of its latest block
			for id := range heads * nM {
				syms := map[*ir.Var]int{vars[0]: id % nM, vars[1]: id / nM % s.H, vars[2]: id / nM / s.H}
				var got [3]int
				for i, e := range out {
					v, err := interp.EvalInt(e, syms)
					if err != nil {
						t.Fatal(err)
					}
					got[i] = v
				}
				b, h, bx := got[0], got[1], got[2]
				if b < 0 || b >= s.B || h < 0 || h >= s.H || bx < 0 || bx >= nM {
					t.Fatalf("block %d runs (b %d, h %d, tile %d): out of range", id, b, h, bx)
				}
				if seen[got] {
					t.Fatalf("block %d runs (b %d, h %d, tile %d) again", id, b, h, bx)
				}
				seen[got] = true
				grp := (b*s.H + h) / causalGroup(s, cfg, nM, heads)
				if prev, ok := lastTile[grp]; ok && bx > prev {
					t.Fatalf("block %d starts tile %d of group %d after its tile %d", id, bx, grp, prev)
				}
				lastTile[grp] = bx
			}
		})
	}
}

// TestCausalPair checks that a causal persistent walk's tile ids visit
// every (batch, head, query tile) once, in pairs of one head whose KV
// tiles add up to the same count, the longer tile first (the shorter at
// head dim 256).
func TestCausalPair(t *testing.T) {
	cfg := AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	for _, s := range []AttnShape{
		{B: 32, H: 16, Sq: 512, Skv: 512},
		{B: 3, H: 5, Sq: 1000, Skv: 1300}, // 8 query tiles, the last one short
		{B: 1, H: 1, Sq: 256, Skv: 256},
		{B: 32, H: 8, Sq: 512, Skv: 512, Dqk: 256},
		{B: 3, H: 5, Sq: 1000, Skv: 1300, Dqk: 256},
	} {
		s.HKV, s.Causal, s.DType = s.H, true, ir.BF16
		if s.Dqk == 0 {
			s.Dqk = 128
		}
		s.Dv = s.Dqk
		nM := (s.Sq + cfg.M - 1) / cfg.M
		var id *ir.Var
		var out [3]ir.Expr
		f := tl.NewFunc("pairs")
		f.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
			x, _, _ := k.Idx()
			id = x.IR().(*ir.Var)
			b, h, bx := causalPair(x, s, cfg)
			out = [3]ir.Expr{b.IR(), h.IR(), bx.IR()}
		})
		seen := map[[3]int]bool{}
		var prev [3]int
		for i := range s.B * s.H * nM {
			var got [3]int
			for j, e := range out {
				v, err := interp.EvalInt(e, map[*ir.Var]int{id: i})
				if err != nil {
					t.Fatal(err)
				}
				got[j] = v
			}
			if got[0] >= s.B || got[1] >= s.H || got[2] < 0 || got[2] >= nM || seen[got] {
				t.Fatalf("%+v: id %d runs (b %d, h %d, tile %d): out of range or again", s, i, got[0], got[1], got[2])
			}
			seen[got] = true
			if i%2 == 1 && (got[0] != prev[0] || got[1] != prev[1] || got[2]+prev[2] != nM-1 || (got[2] > prev[2]) != (s.Dqk >= 256)) {
				t.Fatalf("%+v: ids %d and %d run tiles %v and %v: not a pair of one head, longer first (shorter at d256)", s, i-1, i, prev, got)
			}
			prev = got
		}
	}
}

// No query rows is the verifier's error (sizes must be positive), not a
// division by zero while the causal order is worked out.
func TestNoQueryRows(t *testing.T) {
	s := AttnShape{B: 1, H: 1, HKV: 1, Sq: 0, Skv: 10, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16}
	for _, c := range []AttnConfig{{M: 64, N: 64, Stages: 2, Threads: 128}, {M: 64, N: 64, Stages: 2, Threads: 128, Persistent: true, Prefetch: true}} {
		if _, err := FlashAttention(s, c).Build(); err == nil || !strings.Contains(err.Error(), "sizes and strides must be positive") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestCausalWalk checks a causal persistent walk's schedule for grids of
// several sizes: every (batch, head, query tile) runs once, and where the
// tail's bins fit the grid no block runs more KV tiles than the whole
// rounds' pairs and one longest tile (square shapes: F·(nM+1) + nM).
func TestCausalWalk(t *testing.T) {
	cfg := AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	for _, tc := range []struct {
		s    AttnShape
		sms  []int
		fits []bool // the tail packed (else walked as pairs)
	}{
		{AttnShape{B: 32, H: 16, Sq: 512, Skv: 512}, []int{132, 128, 100, 7}, []bool{true, true, true, true}},
		{AttnShape{B: 32, H: 32, Sq: 512, Skv: 512}, []int{132}, []bool{true}},
		{AttnShape{B: 16, H: 16, Sq: 1024, Skv: 1024}, []int{132, 5}, []bool{true, true}},
		{AttnShape{B: 32, H: 8, Sq: 512, Skv: 512, Dqk: 256}, []int{132}, []bool{false}},
		{AttnShape{B: 3, H: 5, Sq: 1000, Skv: 1300}, []int{132, 7, 3}, []bool{true, true, true}},
		{AttnShape{B: 2, H: 3, Sq: 256, Skv: 256}, []int{4, 5, 1}, []bool{true, true, true}},
		{AttnShape{B: 1, H: 15, Sq: 512, Skv: 512}, []int{29, 16}, []bool{true, false}}, // 30 pairs; on 16 SMs 14 left, their bins 18
	} {
		s := tc.s
		s.HKV, s.Causal, s.DType = s.H, true, ir.BF16
		if s.Dqk == 0 {
			s.Dqk = 128
		}
		s.Dv = s.Dqk
		nM := (s.Sq + cfg.M - 1) / cfg.M
		pairs := s.B * s.H * nM / 2
		var sms, gv, iv *ir.Var
		var nE ir.Expr
		var out [3]ir.Expr
		f := tl.NewFunc("walk")
		grid := tl.Min(pairs, f.NumSMs())
		sms = f.NumSMs().IR().(*ir.Var)
		f.Kernel(tl.Grid(grid), 128, func(k *tl.Block) {
			g, _, _ := k.Idx()
			gv = g.IR().(*ir.Var)
			n, tile := causalWalk(s, cfg, g, grid)
			nE = n.IR()
			k.Serial(n, func(i tl.Expr) {
				iv = i.IR().(*ir.Var)
				b, h, bx := tile(i)
				out = [3]ir.Expr{b.IR(), h.IR(), bx.IR()}
			})
		})
		eval := func(e ir.Expr, env map[*ir.Var]int) int {
			v, err := interp.EvalInt(e, env)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		for j, n := range tc.sms {
			G := min(pairs, n)
			seen := map[[3]int]bool{}
			most := 0
			for g := range G {
				env := map[*ir.Var]int{sms: n, gv: g}
				load := 0
				for i := range eval(nE, env) {
					env[iv] = i
					var got [3]int
					for x, e := range out {
						got[x] = eval(e, env)
					}
					if got[0] < 0 || got[0] >= s.B || got[1] < 0 || got[1] >= s.H || got[2] < 0 || got[2] >= nM || seen[got] {
						t.Fatalf("%+v on %d SMs: block %d's tile %d is (b %d, h %d, tile %d): out of range or again", s, n, g, i, got[0], got[1], got[2])
					}
					seen[got] = true
					load += ((got[2]+1)*cfg.M + s.Skv - s.Sq + cfg.N - 1) / cfg.N
				}
				most = max(most, load)
			}
			if len(seen) != s.B*s.H*nM {
				t.Errorf("%+v on %d SMs: %d of %d tiles run", s, n, len(seen), s.B*s.H*nM)
			}
			if s.Sq == s.Skv {
				rounds := pairs / G
				packed := rounds*(nM+1) + nM
				if pairs%G == 0 {
					packed = rounds * (nM + 1)
				}
				if tc.fits[j] != (most <= packed) {
					t.Errorf("%+v on %d SMs: the busiest block runs %d KV tiles; packed tail %v, want %v (%d)", s, n, most, most <= packed, tc.fits[j], packed)
				}
			}
		}
	}
}

// TestHeadsThenLongest checks the drawn causal walk's order: every
// (batch, head, query tile) once; heads in turn, each longest first, up to
// the last causalGroup heads; those with no tile after a shorter one.
func TestHeadsThenLongest(t *testing.T) {
	cfg := AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, Draw: true}
	for _, s := range []AttnShape{
		{B: 32, H: 8, Sq: 512, Skv: 512, Dqk: 256, Dv: 256},    // 256 heads, the last 32 longest first
		{B: 32, H: 16, Sq: 512, Skv: 512, Dqk: 128, Dv: 128},   // 512 heads
		{B: 2, H: 3, Sq: 512, Skv: 512, Dqk: 64, Dv: 64},       // one group: longestFirst's order
		{B: 3, H: 5, Sq: 1000, Skv: 1300, Dqk: 128, Dv: 128},   // 8 tiles a head, Sq not a tile multiple
		{B: 1, H: 3, Sq: 40000, Skv: 40000, Dqk: 128, Dv: 128}, // one head a group
	} {
		s.HKV, s.Causal, s.DType = s.H, true, ir.BF16
		heads, nM := s.B*s.H, (s.Sq+cfg.M-1)/cfg.M
		g := causalGroup(s, cfg, nM, heads)
		var id *ir.Var
		var out [3]ir.Expr
		f := tl.NewFunc("order")
		f.Kernel(tl.Grid(heads*nM), 128, func(k *tl.Block) {
			x, _, _ := k.Idx()
			id = x.IR().(*ir.Var)
			b, h, bx := headsThenLongest(x, s, cfg)
			out = [3]ir.Expr{b.IR(), h.IR(), bx.IR()}
		})
		seen := map[[2]int]bool{}
		last := heads * nM // the tile after the previous one in the last group
		for i := range heads * nM {
			var got [3]int
			for j, e := range out {
				v, err := interp.EvalInt(e, map[*ir.Var]int{id: i})
				if err != nil {
					t.Fatal(err)
				}
				got[j] = v
			}
			head, bx := got[0]*s.H+got[1], got[2]
			if got[0] < 0 || got[0] >= s.B || got[1] < 0 || got[1] >= s.H || bx < 0 || bx >= nM || seen[[2]int{head, bx}] {
				t.Fatalf("%+v: tile %d is (b %d, h %d, tile %d): out of range or again", s, i, got[0], got[1], bx)
			}
			seen[[2]int{head, bx}] = true
			if lead := (heads - g) * nM; i < lead {
				if head != i/nM || bx != nM-1-i%nM {
					t.Fatalf("%+v: tile %d is head %d tile %d, want head %d tile %d", s, i, head, bx, i/nM, nM-1-i%nM)
				}
				continue
			}
			if head < heads-g || bx > last {
				t.Fatalf("%+v: tile %d is head %d tile %d, after tile %d of the last %d heads", s, i, head, bx, last, g)
			}
			last = bx
		}
	}
}
