package kernels

import "testing"

func TestTailSplits(t *testing.T) {
	cases := []struct {
		name                  string
		b, h, sq, m, skv, sms int
		want                  int
	}{
		// 4 blocks on 132 SMs with a long KV: split each in 32 (the optimum
		// of ceil(8192/s) + 8s; 33 would still fit the wave).
		{"small_grid_long_kv", 1, 4, 128, 128, 8192, 132, 32},
		// 32 blocks: at most 4 pieces each keep the tail in one wave.
		{"tail_of_32", 1, 16, 256, 128, 2048, 132, 4},
		// A full wave and a tail of 8: 16 pieces each fill the last wave.
		{"one_wave_and_a_tail", 2, 70, 128, 128, 16384, 132, 16},
		// Grids that fill the SMs exactly have no tail.
		{"fills_one_wave", 1, 132, 128, 128, 8192, 132, 1},
		{"fills_two_waves", 2, 66, 256, 128, 8192, 132, 1},
		// A tail of 100 SMs cannot double within the wave.
		{"big_tail", 1, 100, 128, 128, 8192, 132, 1},
		// Short KV: two pieces of 128 keys save less than the combine costs.
		{"short_kv", 1, 4, 128, 128, 256, 132, 1},
		// Below two pieces of MinSplitKeys there is nothing to split.
		{"tiny_kv", 1, 4, 128, 128, 200, 132, 1},
		// 31 full waves and a tail of 4: splitting the tail saves ~2.5% of
		// the run, under MinSplitGain.
		{"many_waves_small_tail", 4, 32, 4096, 128, 4096, 132, 1},
		// The same tail of 4 behind one full wave saves 40%, at 22 pieces
		// (the optimum of ceil(4096/s) + 8s).
		{"one_wave_small_tail", 2, 34, 128, 64, 4096, 132, 22},
		{"bad_input", 0, 4, 128, 128, 4096, 132, 1},
	}
	for _, c := range cases {
		if got := TailSplits(c.b, c.h, c.sq, c.m, c.skv, c.sms); got != c.want {
			t.Errorf("%s: TailSplits(B=%d H=%d Sq=%d M=%d Skv=%d SMs=%d) = %d, want %d",
				c.name, c.b, c.h, c.sq, c.m, c.skv, c.sms, got, c.want)
		}
	}
}

// Whatever it picks, the split keeps the tail in one wave, gives every
// piece MinSplitKeys keys, and is never slower in the model.
func TestTailSplitsInvariants(t *testing.T) {
	for _, b := range []int{1, 2, 3, 8} {
		for _, h := range []int{1, 4, 16, 40} {
			for _, sq := range []int{64, 128, 1000, 4096} {
				for _, skv := range []int{100, 512, 4096, 32768} {
					s := TailSplits(b, h, sq, 128, skv, 132)
					blocks := b * h * ((sq + 127) / 128)
					tail := blocks - (blocks+131)/132*132 + 132
					if s > 1 && (tail*s > 132 || skv/s < MinSplitKeys) {
						t.Errorf("B=%d H=%d Sq=%d Skv=%d: %d splits of a tail of %d", b, h, sq, skv, s, tail)
					}
				}
			}
		}
	}
}
