package kernels

// FlashAttention's tail split: when the grid's last wave occupies only a
// few SMs, the rest sit idle while those blocks walk the whole KV
// sequence. Splitting the KV range of just those blocks in s pieces runs
// them on s times as many SMs, at the price of partial outputs and a
// combine (as MLACombine does for decoding).
//
// The cost model counts time in key-times: the time one block takes to
// process one key row (Q·Kᵀ, softmax and P·V for its M rows), so an
// unsplit block costs Skv. With W = ceil(blocks / SMs) waves, and the
// last wave holding tail = blocks − (W−1)·SMs blocks:
//
//	unsplit:  W·Skv
//	split s:  (W−1)·Skv + ceil(Skv/s) + SplitKeys + CombineKeys + s·CombinePerSplitKeys
//
// A split must keep the tail in one wave (tail·s ≤ SMs) and give every
// piece at least MinSplitKeys keys. TailSplits picks the s that minimizes
// the split time and takes it only when it saves at least MinSplitGain of
// the unsplit time; otherwise it returns 1. Causal masking (shorter rows)
// is not modelled. The constants are estimates for an H100/H200 block of
// 128 rows at head dim 128 (a key-time there is about 15 ns, so the
// combine's launch and its reads, ~5 µs, are ~384 key-times); they are not
// yet fitted on a GPU.
const (
	// SplitKeys: what each piece adds: loading its Q tile again and
	// storing f32 partials and an LSE instead of the output.
	SplitKeys = 64
	// CombineKeys: the combine kernel's launch and fixed cost.
	CombineKeys = 384
	// CombinePerSplitKeys: the combine's reads per piece.
	CombinePerSplitKeys = 8
	// MinSplitKeys: no piece gets fewer keys (two 64-key tiles).
	MinSplitKeys = 128
	// MinSplitGain: the least saving, as a fraction of the unsplit time,
	// worth a second kernel and the partial buffers.
	MinSplitGain = 0.05
)

// TailSplits returns how many KV splits to use for the blocks of the last
// wave of a FlashAttention grid of B·H·ceil(Sq/M) blocks over Skv keys on
// sms SMs; 1 means no split.
func TailSplits(b, h, sq, m, skv, sms int) int {
	if b < 1 || h < 1 || sq < 1 || m < 1 || skv < 1 || sms < 1 {
		return 1
	}
	blocks := b * h * ((sq + m - 1) / m)
	waves := (blocks + sms - 1) / sms
	tail := blocks - (waves-1)*sms
	unsplit := float64(waves) * float64(skv)
	best, bestTime := 1, unsplit
	for s := 2; tail*s <= sms && skv/s >= MinSplitKeys; s++ {
		t := float64(waves-1)*float64(skv) + float64((skv+s-1)/s) + SplitKeys + CombineKeys + float64(s)*CombinePerSplitKeys
		if t < bestTime {
			best, bestTime = s, t
		}
	}
	if unsplit-bestTime < MinSplitGain*unsplit {
		return 1
	}
	return best
}
