package kernels

import (
	"fmt"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// The split-KV scheduler for MLA decoding. Decoding one request is a
// stream over its cache blocks, and requests differ in length, so one block
// of threads per request leaves most SMs idle on a small batch and lets a
// long request finish last on a large one. The scheduler cuts the whole
// batch's work into parts of about equal cost, one per SM (per M-block of
// query rows), cutting a request where a part ends. MLADecodeSplit runs a
// block per part (per M-block), which walks the part's pieces in order,
// each piece of a request one split of its partial outputs; MLACombine
// merges a request's splits. A part is a block's whole work, as in
// FlashMLA: a grid of one block per piece would leave the balancing to the
// hardware's block scheduler, which runs blocks in launch order.

// MLAPieceCost is what a piece of a request costs besides its cache
// blocks, in blocks' time: loading Q, storing the partial, the
// pipeline's restart and the combine's share. The scheduler balances parts
// with it (so it does not cut short requests into pieces that cost more
// than they save), and MLASplitPays weighs it. It is 6 at every s_q·h_q,
// fitted for each kind of point:
//   - where a request's rows take two or more 64-row blocks (h_q·s_q >
//     64, compute-bound): 10 on an H100 while a piece cost 14k cycles
//     (10 beat 18 by 1-1.3%, 18 had beaten 8 and 4).
//     With the combine's merge in registers (H200,
//     alternating pairs, h_q 128) 7 beat 10 by 1.0-3.0% at b64 kv4k-16k,
//     b128 kv8k and s_q 2 kv4k, and 6 was within ±0.3% of 7 at kv8k and s_q
//     2, 3% faster at b64 kv4k; 5 was slower than 6;
//   - where they fit one (h_q·s_q ≤ 64, memory-bound): with 18 a part of
//     one piece got 69 blocks and one of two pieces 51 (b64 h_q 16 kv8k),
//     and the parts of one piece, which take longest, set the time; 8 was
//     2-4% faster at all six memory-bound bench points (2026-11-24), 6
//     0-2% faster than 8 with the partials in bf16,
//     and 4 and 8 0.4-1.7% slower than 6 with the merge in registers
//     (b64 h_q 32 and 64 kv8k).
func MLAPieceCost(sq, hq int) int { return 6 }

// MLAChunk is a piece of one request: cache blocks [Begin, End).
type MLAChunk struct{ Req, Begin, End int }

// MLAMetadata is a schedule: which pieces each part runs (Tensors gives
// them as MLADecodeSplit reads them), and per request its pieces.
type MLAMetadata struct {
	Parts     [][]MLAChunk // per part, its pieces in order
	NumSplits []int        // per request, the pieces it is cut into (at least 1)
	Splits    int          // the most pieces of any request: the grid's split dim
	// Bounds is [batch, Splits+1], row-major: split k of request b covers
	// blocks [Bounds[b][k], Bounds[b][k+1]); splits past NumSplits[b] are
	// empty (both bounds the request's block count).
	Bounds []int32
}

// MLASMParts is the number of parts for an SM count: every M-block of the
// s_q·h_q query rows (64 rows on a GPU) of a part takes one SM.
func MLASMParts(sq, hq, sms int) int {
	mBlocks := (sq*hq + 63) / 64
	return max(1, sms/mBlocks)
}

// MLASplitPays reports whether md, a schedule of lens over sms SMs, should
// beat the single program: that program's blocks (one a request and
// M-block) start in launch order on the SMs as they free up, one an SM,
// and the last to finish sets its time; the split path's is its costliest
// part, each piece adding MLAPieceCost. On the 2026-11-23 H100 bench
// this picked the faster path at every point where the two differed by
// more than 5%; on an H200 mla suite the split
// path it took was faster at all 17 points (1.07-2.15×, b64 kv2k the
// least); it declined only at kv1k (b64 and b128), where no split ran.
func MLASplitPays(md MLAMetadata, lens []int32, sq, hq, sms int) bool {
	mBlocks := (sq*hq + 63) / 64
	cost := MLAPieceCost(sq, hq)
	free := make([]int, max(sms, 1)) // when each SM frees up, in blocks
	for _, n := range mlaBlocks(lens, MLAPage) {
		for range mBlocks {
			i := 0
			for j := range free {
				if free[j] < free[i] {
					i = j
				}
			}
			free[i] += n
		}
	}
	single := 0
	for _, t := range free {
		single = max(single, t)
	}
	split := 0
	for _, part := range md.Parts {
		t := 0
		for _, c := range part {
			t += c.End - c.Begin + cost
		}
		split = max(split, t)
	}
	return split < single
}

// ScheduleMLA balances a batch (the cache lengths) over the parts an SM
// count gives (MLASMParts), a piece costing MLAPieceCost.
func ScheduleMLA(lens []int32, sq, hq, sms int) MLAMetadata {
	return ScheduleMLAParts(lens, MLAPage, MLASMParts(sq, hq, sms), MLAPieceCost(sq, hq))
}

// ScheduleMLAParts cuts the batch (cache blocks of page rows) into parts
// of about equal cost: a request costs its cache blocks plus cost for each
// piece of it. Each part has a budget of ceil(total / parts) + cost and takes
// requests in order: a whole request (the rest of one) when it fits, else
// as many blocks as the budget leaves after the piece's own cost, and the
// request goes on in the next part. The last part takes what is left.
func ScheduleMLAParts(lens []int32, page, parts, cost int) MLAMetadata {
	parts = max(parts, 1)
	blocks := mlaBlocks(lens, page)
	total := 0
	for _, n := range blocks {
		total += n + cost
	}
	budget := (total+parts-1)/parts + cost
	md := MLAMetadata{Parts: make([][]MLAChunk, parts)}
	req, pos := 0, 0 // the next block to schedule: block pos of request req
	for p := range parts {
		left := budget
		for req < len(blocks) {
			rest := blocks[req] - pos
			if rest+cost <= left || p == parts-1 {
				md.Parts[p] = append(md.Parts[p], MLAChunk{req, pos, blocks[req]})
				left -= rest + cost
				req, pos = req+1, 0
				continue
			}
			if take := left - cost; take > 0 {
				md.Parts[p] = append(md.Parts[p], MLAChunk{req, pos, pos + take})
				pos += take
			}
			break
		}
	}
	md.bounds(len(lens))
	return md
}

// UniformMLASplits cuts every request into n pieces of (nearly) equal
// block counts, as a fixed --splits does, each piece a part of its own; a
// request with fewer than n blocks gets empty pieces (zeros and -inf).
func UniformMLASplits(lens []int32, page, n int) MLAMetadata {
	n = max(n, 1)
	var md MLAMetadata
	for b, nb := range mlaBlocks(lens, page) {
		for k := range n {
			md.Parts = append(md.Parts, []MLAChunk{{b, nb * k / n, nb * (k + 1) / n}})
		}
	}
	md.bounds(len(lens))
	return md
}

// mlaBlocks is the number of cache blocks of each request.
func mlaBlocks(lens []int32, page int) []int {
	out := make([]int, len(lens))
	for i, l := range lens {
		out[i] = (max(int(l), 0) + page - 1) / page
	}
	return out
}

// bounds derives NumSplits, Splits and Bounds from Parts.
func (md *MLAMetadata) bounds(batch int) {
	cuts := make([][]int, batch) // per request, the begins of its pieces, then its end
	ends := make([]int, batch)
	for _, part := range md.Parts {
		for _, c := range part {
			cuts[c.Req] = append(cuts[c.Req], c.Begin)
			ends[c.Req] = max(ends[c.Req], c.End)
		}
	}
	md.NumSplits = make([]int, batch)
	md.Splits = 1
	for b := range batch {
		md.NumSplits[b] = max(len(cuts[b]), 1)
		md.Splits = max(md.Splits, md.NumSplits[b])
	}
	md.Bounds = make([]int32, batch*(md.Splits+1))
	for b := range batch {
		row := md.Bounds[b*(md.Splits+1) : (b+1)*(md.Splits+1)]
		for k := range row {
			row[k] = int32(ends[b])
			if k < len(cuts[b]) {
				row[k] = int32(cuts[b][k])
			}
		}
	}
}

// Tensors are the schedule as the split path reads it: parts [parts, 2]
// (part p runs chunks parts[p, 0] to parts[p, 1]-1),
// chunks [pieces, 4] (request, first block, end block, split index: the
// piece's place among its request's pieces) and num_splits [batch].
func (md MLAMetadata) Tensors() (parts, chunks, numSplits *tensor.Tensor) {
	n := 0
	for _, part := range md.Parts {
		n += len(part)
	}
	parts = tensor.New(ir.I32, max(len(md.Parts), 1), 2) // no parts: one part of no chunks
	chunks = tensor.New(ir.I32, max(n, 1), 4)            // no chunks: a row no part points at
	numSplits = tensor.New(ir.I32, len(md.NumSplits))
	seen := make([]int, len(md.NumSplits))
	i := 0
	for p, part := range md.Parts {
		parts.Set(float64(i), p, 0)
		for _, c := range part {
			for j, v := range []int{c.Req, c.Begin, c.End, seen[c.Req]} {
				chunks.Set(float64(v), i, j)
			}
			seen[c.Req]++
			i++
		}
		parts.Set(float64(i), p, 1)
	}
	for b, v := range md.NumSplits {
		numSplits.Set(float64(v), b)
	}
	return parts, chunks, numSplits
}

// Validate checks that the pieces of every request tile its blocks
// exactly, in order, and that Bounds says the same.
func (md MLAMetadata) Validate(lens []int32, page int) error {
	blocks := mlaBlocks(lens, page)
	next := make([]int, len(lens))
	for p, part := range md.Parts {
		for _, c := range part {
			if c.Req < 0 || c.Req >= len(lens) || c.Begin != next[c.Req] || c.End < c.Begin || c.End > blocks[c.Req] {
				return fmt.Errorf("part %d: piece %+v does not continue request %d at block %d of %d", p, c, c.Req, next[c.Req], blocks[c.Req])
			}
			next[c.Req] = c.End
		}
	}
	for b, n := range blocks {
		if next[b] != n {
			return fmt.Errorf("request %d: blocks %d..%d are in no piece", b, next[b], n)
		}
		row := md.Bounds[b*(md.Splits+1) : (b+1)*(md.Splits+1)]
		if row[0] != 0 || int(row[md.Splits]) != n {
			return fmt.Errorf("request %d: bounds %v do not span 0..%d", b, row, n)
		}
		for k := 1; k < len(row); k++ {
			if row[k] < row[k-1] {
				return fmt.Errorf("request %d: bounds %v decrease", b, row)
			}
		}
	}
	return nil
}
