package kernels

import "testing"

func TestTailSplits(t *testing.T) {
	cases := []struct {
		name string
		g    SplitGrid
		want int
	}{
		// 4 blocks on 132 SMs with a long KV: split each in 32 (the optimum
		// of ceil(8192/s) + 8s; 33 would still fit the wave).
		{"small_grid_long_kv", SplitGrid{Blocks: 4, Keys: 8192, Dim: 128, SMs: 132}, 32},
		// 32 blocks: 4 pieces each fill one round; 5 would take two.
		{"tail_of_32", SplitGrid{Blocks: 32, Keys: 2048, Dim: 128, SMs: 132}, 4},
		// A full wave and a tail of 8: 16 pieces each fill the last wave.
		{"one_wave_and_a_tail", SplitGrid{Blocks: 140, Keys: 16384, Dim: 128, SMs: 132}, 16},
		// Grids that fill the SMs exactly have no tail.
		{"fills_one_wave", SplitGrid{Blocks: 132, Keys: 8192, Dim: 128, SMs: 132}, 1},
		{"fills_two_waves", SplitGrid{Blocks: 264, Keys: 8192, Dim: 128, SMs: 132}, 1},
		// A tail of 100 SMs alone: two rounds of halves take as long.
		{"big_tail", SplitGrid{Blocks: 100, Keys: 8192, Dim: 128, SMs: 132}, 1},
		// Short KV: two pieces of 128 keys save less than the combine costs.
		{"short_kv", SplitGrid{Blocks: 4, Keys: 256, Dim: 128, SMs: 132}, 1},
		// Below two pieces of MinSplitKeys there is nothing to split.
		{"tiny_kv", SplitGrid{Blocks: 4, Keys: 200, Dim: 128, SMs: 132}, 1},
		// 31 full waves and a tail of 4: 22 pieces each (the optimum of
		// ceil(4096/s) + 8s) save 2.5%.
		{"many_waves_small_tail", SplitGrid{Blocks: 4096, Keys: 4096, Dim: 128, SMs: 132}, 22},
		// The sweep's d128 grid at 16k: 15 waves and 68 blocks, cut in 7
		// over 4 rounds (476 pieces); causal, the pieces must fit one round,
		// and halves do not pay.
		{"d128_16k", SplitGrid{Blocks: 2048, Keys: 16384, Dim: 128, SMs: 132}, 7},
		{"d128_16k_causal", SplitGrid{Blocks: 2048, Keys: 16384, Dim: 128, SMs: 132, Causal: true}, 1},
		// At 4k keys the pieces' rounds cost what the tail does.
		{"d128_4k", SplitGrid{Blocks: 2048, Keys: 4096, Dim: 128, SMs: 132}, 1},
		// d256: 7 full waves and 100 blocks; 1024 blocks at 16k save 0.6%.
		{"d256_16k", SplitGrid{Blocks: 1024, Keys: 16384, Dim: 256, SMs: 132}, 1},
		// d64's 4096 blocks: a tail of 4 at one block an SM, of 136 at two.
		{"d64_4k_one_an_sm", SplitGrid{Blocks: 4096, Keys: 4096, Dim: 64, SMs: 132}, 22},
		{"d64_4k_two_an_sm", SplitGrid{Blocks: 4096, Keys: 4096, Dim: 64, SMs: 132, PerSM: 2}, 1},
		{"bad_input", SplitGrid{Blocks: 0, Keys: 4096, Dim: 128, SMs: 132}, 1},
	}
	for _, c := range cases {
		if got := TailSplits(c.g); got != c.want {
			t.Errorf("%s: TailSplits(%+v) = %d, want %d", c.name, c.g, got, c.want)
		}
	}
}

// Whatever it picks, every piece gets MinSplitKeys keys, a causal grid's
// pieces fit its last wave, and only a grid with a partial wave splits.
func TestTailSplitsInvariants(t *testing.T) {
	for _, blocks := range []int{1, 4, 16, 100, 132, 136, 264, 400, 2048, 4096} {
		for _, keys := range []int{100, 512, 4096, 32768} {
			for _, dim := range []int{64, 128, 256} {
				for _, causal := range []bool{false, true} {
					g := SplitGrid{Blocks: blocks, Keys: keys, Dim: dim, SMs: 132, Causal: causal}
					s := TailSplits(g)
					tail := blocks - (blocks+131)/132*132 + 132
					switch {
					case s < 1:
						t.Errorf("%+v: %d splits", g, s)
					case s > 1 && keys/s < MinSplitKeys:
						t.Errorf("%+v: %d pieces of %d keys", g, s, keys/s)
					case s > 1 && causal && tail*s > 132:
						t.Errorf("%+v: %d splits of a causal tail of %d", g, s, tail)
					case s > 1 && tail == 132:
						t.Errorf("%+v: %d splits of full waves", g, s)
					}
				}
			}
		}
	}
}

// FlashAttentionSplits counts d64's blocks two an SM, and a multi-wave
// causal grid's tail at its shortest rows.
func TestFlashAttentionSplitsGrid(t *testing.T) {
	sweep := func(d, sq int, causal bool) AttnShape {
		return AttnShape{B: 16384 / sq, H: 2048 / d, HKV: 2048 / d, Sq: sq, Skv: sq, Dqk: d, Dv: d, Causal: causal}
	}
	cases := []struct {
		name string
		s    AttnShape
		want int
	}{
		{"d128_16k", sweep(128, 16384, false), 7},
		{"d128_16k_causal", sweep(128, 16384, true), 1}, // its tail holds 128-key rows
		{"d64_4k", sweep(64, 4096, false), 1},           // 15.5 waves of 264: halves take two rounds
		{"long_kv_causal", AttnShape{B: 1, H: 34, HKV: 34, Sq: 512, Skv: 8192, Dqk: 128, Dv: 128, Causal: true}, 31},
	}
	for _, c := range cases {
		if got := FlashAttentionSplits(c.s, AttnConfig{M: 128}, 132); got != c.want {
			t.Errorf("%s: %d splits, want %d", c.name, got, c.want)
		}
	}
}
