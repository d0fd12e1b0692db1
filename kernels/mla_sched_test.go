package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// partCost is what a part runs: its blocks plus cost a piece.
func partCost(part []MLAChunk, cost int) int {
	n := 0
	for _, c := range part {
		n += c.End - c.Begin + cost
	}
	return n
}

// Every schedule tiles each request's blocks in order, its bounds say the
// same, and no part costs more than its budget.
func TestScheduleMLAInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		lens := make([]int32, 1+r.IntN(40))
		for i := range lens {
			switch r.IntN(4) {
			case 0:
				lens[i] = int32(r.IntN(3)) // empty or one key
			case 1:
				lens[i] = int32(r.IntN(200000))
			default:
				lens[i] = int32(r.IntN(5000))
			}
		}
		parts := 1 + r.IntN(140)
		cost := []int{0, MLAPieceCost(1, 16), MLAPieceCost(1, 128)}[r.IntN(3)]
		md := ScheduleMLAParts(lens, MLAPage, parts, cost)
		if err := md.Validate(lens, MLAPage); err != nil {
			t.Fatalf("trial %d (%d parts, lens %v): %v", trial, parts, lens, err)
		}
		if len(md.Parts) != parts {
			t.Fatalf("trial %d: %d parts, want %d", trial, len(md.Parts), parts)
		}
		total := 0
		for _, n := range mlaBlocks(lens, MLAPage) {
			total += n + cost
		}
		budget := (total+parts-1)/parts + cost
		for p, part := range md.Parts {
			if c := partCost(part, cost); c > budget {
				t.Fatalf("trial %d: part %d costs %d, over the budget %d: %v", trial, p, c, budget, part)
			}
		}
	}
}

func TestScheduleMLA(t *testing.T) {
	// One long request over 132 SMs: pieces of ceil(1005/132) = 8 blocks.
	md := ScheduleMLA([]int32{64000}, 1, 16, 132)
	if md.Splits != 125 || md.NumSplits[0] != 125 {
		t.Errorf("one request of 1000 blocks: %d splits, want 125", md.Splits)
	}
	for _, part := range md.Parts {
		for _, c := range part {
			if c.End-c.Begin > 8 {
				t.Errorf("piece %+v is longer than 8 blocks", c)
			}
		}
	}
	// As many equal requests as parts: one each, none cut.
	lens := slices.Repeat([]int32{600}, 132)
	md = ScheduleMLA(lens, 1, 16, 132)
	if md.Splits != 1 {
		t.Errorf("132 requests of 10 blocks on 132 parts: %d splits, want 1", md.Splits)
	}
	for p, part := range md.Parts {
		if len(part) != 1 || part[0].Req != p {
			t.Errorf("part %d runs %v, want request %d whole", p, part, p)
		}
	}
	// A long request among short ones is cut, the short ones are not.
	md = ScheduleMLAParts([]int32{100, 100, 20000, 100}, MLAPage, 8, 18)
	if want := []int{1, 1, 8, 1}; !slices.Equal(md.NumSplits, want) {
		t.Errorf("one long request among short: splits %v, want %v", md.NumSplits, want)
	}
	// Empty requests still get a (empty) piece, so their rows are written.
	md = ScheduleMLAParts([]int32{0, 0}, MLAPage, 4, 18)
	if err := md.Validate([]int32{0, 0}, MLAPage); err != nil || md.Splits != 1 || !slices.Equal(md.Bounds, []int32{0, 0, 0, 0}) {
		t.Errorf("empty requests: %+v %v", md, err)
	}
}

func TestMLASMParts(t *testing.T) {
	for _, c := range []struct{ sq, hq, sms, want int }{
		{1, 16, 132, 132}, {2, 16, 132, 132}, {1, 128, 132, 66}, {2, 128, 132, 33}, {2, 128, 3, 1},
	} {
		if got := MLASMParts(c.sq, c.hq, c.sms); got != c.want {
			t.Errorf("MLASMParts(%d, %d, %d) = %d, want %d", c.sq, c.hq, c.sms, got, c.want)
		}
	}
}

func TestUniformMLASplits(t *testing.T) {
	lens := []int32{1, 300, 0}
	md := UniformMLASplits(lens, MLAPage, 4)
	if err := md.Validate(lens, MLAPage); err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 0, 0, 0, 1, 0, 1, 2, 3, 5, 0, 0, 0, 0, 0}
	if md.Splits != 4 || !slices.Equal(md.Bounds, want) {
		t.Errorf("bounds %v (%d splits), want %v", md.Bounds, md.Splits, want)
	}
	ps, ch, ns := md.Tensors()
	if len(md.Parts) != 12 || !slices.Equal(ps.Shape, []int{12, 2}) || ps.At(11, 0) != 11 || ps.At(11, 1) != 12 || !slices.Equal(ns.Data, []float64{4, 4, 4}) {
		t.Errorf("%d parts; parts %v; num_splits %v", len(md.Parts), ps.Data, ns.Data)
	}
	// Part 6 is request 1's third piece: blocks 2..3.
	if got := ch.Data[6*4 : 7*4]; !slices.Equal(got, []float64{1, 2, 3, 2}) {
		t.Errorf("chunk 6: %v, want request 1, blocks 2..3, split 2", got)
	}
}

// The split path is taken where its balance outweighs a piece's overhead:
// long, uneven batches and a lone long request, not a few short ones.
func TestMLASplitPays(t *testing.T) {
	for _, c := range []struct {
		lens    []int32
		sq, sms int
		want    bool
	}{
		{MLALengths(64, 2048), 1, 132, true},    // 1.07× the single program with the merge in registers (H200)
		{MLALengths(128, 8192), 1, 132, true},   // 2 uneven waves of ~128 blocks
		{MLALengths(128, 32768), 1, 132, true},  // the same, longer
		{MLALengths(128, 4096), 2, 132, true},   // 4 M-blocks a request: 1.09× split (H100)
		{[]int32{64 * 1000}, 1, 132, true},      // one request on 2 of 132 SMs
		{[]int32{100, 200, 300}, 1, 132, false}, // a few blocks each
	} {
		md := ScheduleMLA(c.lens, c.sq, 128, c.sms)
		if got := MLASplitPays(md, c.lens, c.sq, 128, c.sms); got != c.want {
			t.Errorf("%d requests (first %d), s_q %d: split pays %v, want %v", len(c.lens), c.lens[0], c.sq, got, c.want)
		}
	}
}

// Where a request's rows fit one block (memory-bound), a piece costs less,
// so the parts of one piece (which take the longest) are not given more
// blocks than the mean by much: with 18 a piece, 69 against a mean of 59
// (b64 h_q 16 kv8k), and those parts set the kernel's time.
func TestScheduleMLAMemoryBound(t *testing.T) {
	for _, b := range []int{64, 128} {
		lens := MLALengths(b, 8192)
		md := ScheduleMLA(lens, 1, 16, 132)
		most, sum := 0, 0
		for _, part := range md.Parts {
			n := 0
			for _, c := range part {
				n += c.End - c.Begin
			}
			most, sum = max(most, n), sum+n
		}
		if mean := float64(sum) / float64(len(md.Parts)); float64(most) > 1.1*mean {
			t.Errorf("batch %d: a part of %d blocks against a mean of %.1f", b, most, mean)
		}
	}
}
