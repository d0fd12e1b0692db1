package kernels

// FlashAttention's tail split: when the grid's last wave occupies only part
// of the SMs, the rest sit idle while those blocks walk the whole KV
// sequence. Splitting the KV range of just those blocks in s pieces runs
// them on s times as many SMs, at the price of partial outputs and a
// combine (as MLACombine does for decoding).
//
// The cost model counts time in key-times: the time one 128-row block takes
// to process one key row (Q·Kᵀ, softmax and P·V), so an unsplit block costs
// Skv. With slots = SMs · PerSM blocks running at once, W = ceil(blocks /
// slots) waves, the last holding tail = blocks − (W−1)·slots blocks, and R =
// ceil(tail·s / slots) rounds of pieces:
//
//	unsplit:  W·Skv
//	split s:  (W−1)·Skv + R·(ceil(Skv/s) + SplitKeys) + CombineKeys·128/D + tail·s·PartialKeys
//
// Every piece gets at least MinSplitKeys keys. A causal grid keeps its
// pieces in one round (tail·s ≤ slots): the model takes every block at Skv
// keys, and a causal grid's last wave holds its shortest rows. TailSplits
// takes the s with the least time when it saves at least MinSplitGain of
// the unsplit time; otherwise it returns 1.
//
// The constants are for an H100/H200 at head dim 128, where a key-time is
// about 15 ns. A d128 grid of 2048 blocks (15.5 waves) over 16k keys, cut
// 7 ways in its last wave, ran 1.034-1.035× the single program (medians of
// eight back-to-back pairs in each of two calls, H100, 2026-11-24); at 8k
// keys 1.005×; a d256 grid of 1024 blocks at 4k and 8k cut 3 ways ran
// 0.96× and 0.98×. The model gives
// +2.1%, +1.5%, −3.0% and −1.5%: it takes the first alone.
const (
	// SplitKeys: what each piece adds: loading its Q tile again and
	// storing f32 partials and an LSE instead of the output.
	SplitKeys = 64
	// CombineKeys: the combine kernel's launch and fixed cost (~5 µs) at
	// head dim 128; fewer key-times at larger dims.
	CombineKeys = 384
	// PartialKeys: the combine's read of one piece's f32 partials (128
	// rows × D × 4 bytes at ~2.5 TB/s over all SMs), in key-times at any D.
	PartialKeys = 2
	// MinSplitKeys: no piece gets fewer keys (two 64-key tiles).
	MinSplitKeys = 128
	// MinSplitGain: the least saving, as a fraction of the unsplit time,
	// worth a second kernel and the partial buffers.
	MinSplitGain = 0.02
)

// SplitGrid is what TailSplits decides on: a FlashAttention grid of Blocks
// blocks of 128 query rows, each over Keys keys at head dim Dim (the mean
// of Q·Kᵀ's and P·V's), on SMs SMs that run PerSM blocks each (0: one).
type SplitGrid struct {
	Blocks, Keys, Dim, SMs, PerSM int
	Causal                        bool
}

// TailSplits returns how many KV pieces to cut each block of g's last wave
// in; 1 means no split.
func TailSplits(g SplitGrid) int {
	if g.Blocks < 1 || g.Keys < 1 || g.Dim < 1 || g.SMs < 1 {
		return 1
	}
	slots := g.SMs * max(g.PerSM, 1)
	waves := (g.Blocks + slots - 1) / slots
	tail := g.Blocks - (waves-1)*slots
	unsplit := float64(waves) * float64(g.Keys)
	combine := float64(CombineKeys) * 128 / float64(g.Dim)
	best, bestTime := 1, unsplit
	for s := 2; g.Keys/s >= MinSplitKeys; s++ {
		rounds := (tail*s + slots - 1) / slots
		if g.Causal && rounds > 1 {
			break
		}
		t := float64(waves-1)*float64(g.Keys) + float64(rounds*((g.Keys+s-1)/s+SplitKeys)) + combine + float64(tail*s*PartialKeys)
		if t < bestTime {
			best, bestTime = s, t
		}
	}
	if unsplit-bestTime < MinSplitGain*unsplit {
		return 1
	}
	return best
}
