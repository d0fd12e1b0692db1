package kernels

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// mlaCase is one interpreter test of MLA decoding.
type mlaCase struct {
	name string
	s    MLAShape
	c    MLAConfig
	lens []int32
}

func mlaCases() []mlaCase {
	bf, f16 := MLAShape{Hq: 16, Sq: 1, DType: ir.BF16}, MLAShape{Hq: 16, Sq: 2, DType: ir.F16}
	sq2 := bf
	sq2.Sq = 2
	scaled := bf
	scaled.Scale = 0.1
	return []mlaCase{
		// Lengths around the 64-row blocks: one key, a block but one, a whole
		// block, one key into the next, several blocks.
		{"sq1_bf16", bf, MLAConfig{M: 16, Stages: 1, Threads: 128}, []int32{1, 63, 64, 65, 200}},
		// Two causal tokens in one block of 32 rows: with one key the first
		// token sees nothing (zeros, -inf).
		{"sq2_bf16_m32", sq2, MLAConfig{M: 32, Stages: 1, Threads: 128}, []int32{1, 64, 65, 130}},
		// A block per token.
		{"sq2_f16_m16", f16, MLAConfig{M: 16, Stages: 2, Threads: 128}, []int32{2, 127, 129}},
		// Heads split over blocks (the second block starts at head 32); an
		// empty cache.
		{"hq64_m32_empty", MLAShape{Hq: 64, Sq: 1, DType: ir.F16}, MLAConfig{M: 32, Stages: 1, Threads: 128}, []int32{0, 70}},
		{"scale", scaled, MLAConfig{M: 16, Stages: 1, Threads: 128}, []int32{100}},
		// DeepSeek-V3's 128 heads and two tokens: four blocks of 64 rows.
		{"hq128_sq2_m64", MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, MLAConfig{M: 64, Stages: 1, Threads: 256}, []int32{1, 65, 191}},
		// Two tokens of 32 heads in one block of 64.
		{"hq32_sq2_m64_f16", MLAShape{Hq: 32, Sq: 2, DType: ir.F16}, MLAConfig{M: 64, Stages: 1, Threads: 256}, []int32{2, 64, 129}},
		// One token's 16 or 32 heads padded to a 64-row block (zeros in, nothing out).
		{"hq16_padded_m64", bf, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true}, []int32{1, 63, 65, 200}},
		{"hq32_padded_m64_f16", MLAShape{Hq: 32, Sq: 1, DType: ir.F16}, MLAConfig{M: 64, Stages: 1, Threads: 256}, []int32{0, 129}},
		// Warpgroup roles: one block of 64 rows a token (128 heads), two
		// tokens a block (their LSE through shared memory), padded heads.
		{"hq128_sq2_roles", MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true}, []int32{1, 65, 191}},
		{"hq32_sq2_roles_f16", MLAShape{Hq: 32, Sq: 2, DType: ir.F16}, MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true, Roles: true}, []int32{0, 64, 129}},
		{"hq16_padded_roles", bf, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true}, []int32{1, 63, 65, 200}},
		// Hand-offs: the output in a half a warpgroup, both as above.
		{"hq128_sq2_handoff", MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true}, []int32{1, 65, 191}},
		{"hq32_sq2_handoff_f16", MLAShape{Hq: 32, Sq: 2, DType: ir.F16}, MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true, Roles: true, Handoff: true}, []int32{0, 64, 129}},
		{"hq16_padded_handoff", bf, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true}, []int32{1, 63, 65, 200}},
		// Unequal shares of O: warpgroup 1 takes 320 or 384 of the 512 columns.
		{"hq128_sq2_handoff_v0", MLAShape{Hq: 128, Sq: 2, DType: ir.BF16}, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true, V0: 192}, []int32{1, 65, 191}},
		{"hq16_padded_handoff_v0_f16", MLAShape{Hq: 16, Sq: 1, DType: ir.F16}, MLAConfig{M: 64, Stages: 1, Threads: 256, SplitN: true, Roles: true, Handoff: true, V0: 128}, []int32{0, 63, 200}},
		// A cache block in parts (N keys a step; gfx942's config): lengths
		// around the parts and the blocks, one wave of threads.
		{"sq2_n32_m16", sq2, MLAConfig{M: 16, Stages: 1, Threads: 64, N: 32}, []int32{1, 31, 32, 33, 64, 65, 130}},
		{"sq1_n16_m16_f16", MLAShape{Hq: 16, Sq: 1, DType: ir.F16}, MLAConfig{M: 16, Stages: 2, Threads: 128, N: 16}, []int32{0, 15, 17, 100}},
	}
}

// checkMLA compares every row of O and LSE in args with float64.
func checkMLA(t *testing.T, s MLAShape, args []*tensor.Tensor, lens []int32) {
	t.Helper()
	var rows []MLARow
	for b := range lens {
		for tok := range s.Sq {
			for h := range s.Hq {
				rows = append(rows, MLARow{b, tok, h})
			}
		}
	}
	var do, dl ref.Diff
	CheckMLARows(s, args, rows, &do, &dl)
	if do.Bad > 0 || dl.Bad > 0 || do.Rel() > Tolerance(s.DType) || dl.Rel() > LSETolerance {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
}

func TestMLADecodeInterp(t *testing.T) {
	for _, tc := range mlaCases() {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Check(tc.c); err != nil {
				t.Fatal(err)
			}
			fn, err := MLADecode(tc.s, tc.c).Build()
			if err != nil {
				t.Fatal(err)
			}
			args := MLAInputs(tc.s, tc.lens, 3)
			if err := interp.Run(fn, args); err != nil {
				t.Fatal(err)
			}
			checkMLA(t, tc.s, args, tc.lens)
		})
	}
}

// runSplit runs the split kernel over a schedule, then the combine, on the
// inputs of the single-program kernel; it returns the partial buffers.
func runSplit(t *testing.T, s MLAShape, c MLAConfig, md MLAMetadata, args []*tensor.Tensor) (op, lp *tensor.Tensor) {
	t.Helper()
	all := append(append([]*tensor.Tensor{}, args...), MLAPartials(s, md)...)
	if err := RunSteps(MLASplitSteps(s, c), all, ir.DefaultLimits, interp.Run); err != nil {
		t.Fatal(err)
	}
	for i, v := range all[11].Data { // Merge's and Early's counters: handed back zeroed
		if v != 0 {
			t.Fatalf("counter %d left at %g", i, v)
		}
	}
	return all[9], all[10]
}

// The split path agrees with the reference (and so with the single
// program) whatever the cut: the scheduler's, pieces of one block, and
// more splits than blocks (empty pieces, which write zeros and -inf).
// Splits past a request's pieces stay unwritten (NaN): the combine skips
// them.
func TestMLASplitInterp(t *testing.T) {
	s := MLAShape{Hq: 16, Sq: 2, DType: ir.BF16}
	c := MLAConfig{M: 32, Stages: 1, Threads: 128}
	lens := []int32{1, 65, 200, 130}
	// A long request among short ones on 3 parts: cut in three, so parts
	// hold two chunks and the last part's first chunk is split 2.
	long := []int32{1, 65, 3000, 130}
	big := MLAShape{Hq: 128, Sq: 2, DType: ir.F16}
	bigLens := []int32{190, 3}
	h64 := MLAShape{Hq: 64, Sq: 1, DType: ir.BF16}
	merge := MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true, Merge: true}
	cases := []struct {
		name string
		s    MLAShape
		c    MLAConfig
		lens []int32
		md   MLAMetadata
	}{
		{"scheduler_132_sms", s, c, lens, ScheduleMLA(lens, s.Sq, s.Hq, 132)},
		{"scheduler_3_parts", s, c, long, ScheduleMLAParts(long, MLAPage, 3, MLAPieceCost(s.Sq, s.Hq))},
		{"uniform_5", s, c, lens, UniformMLASplits(lens, MLAPage, 5)},
		{"hq128_sq2_f16_m64", big, MLAConfig{M: 64, Stages: 1, Threads: 256}, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
		{"hq16_padded_m64", MLAShape{Hq: 16, Sq: 1, DType: ir.BF16}, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true}, long, ScheduleMLAParts(long, MLAPage, 3, MLAPieceCost(1, 16))},
		{"hq128_sq2_roles", big, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true}, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
		{"hq128_sq2_handoff", big, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true}, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
		{"hq128_sq2_handoff_v0", big, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true, V0: 192}, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
		// Pairs of pages within chunks that start and end anywhere.
		// A request's first piece merges the others (no combine): a
		// request in three pieces, empty pieces (the merger's own too),
		// two query tokens, f16.
		{"merge_hq64_3_parts", h64, merge, long, ScheduleMLAParts(long, MLAPage, 3, MLAPieceCost(1, 64))},
		{"merge_hq64_uniform_5", h64, merge, lens, UniformMLASplits(lens, MLAPage, 5)},
		{"merge_hq64_sq2_f16_3_parts", MLAShape{Hq: 64, Sq: 2, DType: ir.F16}, merge, long, ScheduleMLAParts(long, MLAPage, 3, MLAPieceCost(2, 64))},
		{"merge_hq128_sq2_handoff", big, merge, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
		// The combine starting early: its blocks wait for every piece of
		// their request (one an M-block and split: 1, 1 and 4 here).
		{"early_3_parts", s, MLAConfig{M: 32, Stages: 1, Threads: 128, Early: true}, long, ScheduleMLAParts(long, MLAPage, 3, MLAPieceCost(s.Sq, s.Hq))},
		{"early_uniform_5_padded_m64", MLAShape{Hq: 16, Sq: 1, DType: ir.BF16}, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Early: true}, lens, UniformMLASplits(lens, MLAPage, 5)},
		{"early_hq128_sq2_handoff", big, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true, Early: true}, bigLens, ScheduleMLA(bigLens, big.Sq, big.Hq, 132)},
	}
	for _, tc := range cases {
		s, c, lens, md := tc.s, tc.c, tc.lens, tc.md
		t.Run(tc.name, func(t *testing.T) {
			if err := md.Validate(lens, MLAPage); err != nil {
				t.Fatal(err)
			}
			args := MLAInputs(s, lens, 5)
			op, lp := runSplit(t, s, c, md, args)
			checkMLA(t, s, args, lens)
			empty, unused := 0, 0
			seen := make([]int, len(lens)) // a piece's split: its place among its request's pieces
			for _, part := range md.Parts {
				for _, ch := range part {
					k := seen[ch.Req]
					seen[ch.Req]++
					if ch.Begin < ch.End {
						continue
					}
					empty++
					if c.Merge && k == 0 && md.NumSplits[ch.Req] > 1 {
						continue // the merger writes O, not its partial
					}
					if v := lp.At(ch.Req, k, s.Sq-1, 3); !math.IsInf(v, -1) {
						t.Errorf("request %d split %d is empty but its LSE is %g", ch.Req, k, v)
					}
					if v := op.At(ch.Req, k, s.Sq-1, 3, 7); v != 0 {
						t.Errorf("request %d split %d is empty but its O is %g", ch.Req, k, v)
					}
				}
			}
			for b := range lens {
				for k := md.NumSplits[b]; k < md.Splits; k++ {
					unused++
					if v := lp.At(b, k, s.Sq-1, 3); !math.IsNaN(v) {
						t.Errorf("request %d has %d splits, but split %d's LSE was written: %g", b, md.NumSplits[b], k, v)
					}
				}
			}
			t.Logf("%d splits, %v per request, %d empty pieces, %d unused splits", md.Splits, md.NumSplits, empty, unused)
		})
	}
}

// The combine merges hand-made partials, including splits that are empty
// (LSE -inf) with garbage (NaN) in their O, and a row every split missed.
func TestMLACombine(t *testing.T) {
	s := MLAShape{Hq: 4, Sq: 1, DType: ir.F16, Dv: 8}.Full()
	const splits = 3
	op := tensor.New(s.partialDType(), 1, splits, 1, 4, s.Dv).Rand(1, 1) // f16: h_q 4 is memory-bound
	lp := tensor.New(ir.F32, 1, splits, 1, 4).Rand(2, 3)
	inf := math.Inf(-1)
	for k, h := range []int{0, 0, 1, 2, 2, 2} { // head 0 misses splits 0 and 1, head 1 split 2; head 2 all
		split := []int{0, 1, 2, 0, 1, 2}[k]
		lp.Set(inf, 0, split, 0, h)
		for d := range s.Dv {
			op.Set(math.NaN(), 0, split, 0, h, d)
		}
	}
	for k, l := range []float64{2.1, 2.9, 2.5} { // head 3: the largest LSE second, so the merge rescales what it has
		lp.Set(l, 0, k, 0, 3)
	}
	o := tensor.New(ir.F16, 1, 1, 4, s.Dv).Fill(math.NaN())
	lse := tensor.New(ir.F32, 1, 1, 4).Fill(math.NaN())
	fn, err := MLACombine(s, CombineConfig{Rows: 2, Threads: 64}).Build()
	if err != nil {
		t.Fatal(err)
	}
	ns := tensor.New(ir.I32, 1).Fill(splits)
	if err := interp.Run(fn, []*tensor.Tensor{ns, op, lp, o, lse}); err != nil {
		t.Fatal(err)
	}
	var do, dl ref.Diff
	for h := range 4 {
		mx := inf
		for k := range splits {
			mx = max(mx, lp.At(0, k, 0, h))
		}
		var sum float64
		want := make([]float64, s.Dv)
		for k := range splits {
			if l := lp.At(0, k, 0, h); !math.IsInf(l, -1) {
				w := math.Exp2(l - mx)
				sum += w
				for d := range want {
					want[d] += w * op.At(0, k, 0, h, d)
				}
			}
		}
		wl := inf
		if sum > 0 {
			wl = (mx + math.Log2(sum)) * math.Ln2
			for d := range want {
				want[d] /= sum
			}
		}
		for d := range want {
			do.Add(o.At(0, 0, h, d), want[d])
		}
		dl.Add(lse.At(0, 0, h), wl)
	}
	if do.Bad > 0 || dl.Bad > 0 || do.Rel() > Tolerance(ir.F16) || dl.Rel() > LSETolerance {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
	if !math.IsInf(lse.At(0, 0, 2), -1) || o.At(0, 0, 2, 5) != 0 {
		t.Errorf("the row no split saw: LSE %g, O %g; want -inf and 0", lse.At(0, 0, 2), o.At(0, 0, 2, 5))
	}
	// A request of one split is the split kernel's to write: the combine
	// leaves its O and LSE as they were.
	ns.Fill(1)
	o.Fill(7)
	lse.Fill(7)
	if err := interp.Run(fn, []*tensor.Tensor{ns, op, lp, o, lse}); err != nil {
		t.Fatal(err)
	}
	for i, v := range append(o.Data, lse.Data...) {
		if v != 7 {
			t.Fatalf("one split: the combine wrote %g at %d", v, i)
		}
	}
}

// Small head dims make a fast sweep of what the full-size tests sample:
// tiles of two and four tokens, heads split over blocks, split or not.
func TestMLASmallDims(t *testing.T) {
	lens := []int32{1, 15, 16, 17, 50, 0}
	for _, hq := range []int{2, 4} {
		for _, sq := range []int{1, 2} {
			for _, m := range []int{2, 4, 8} {
				s := MLAShape{Hq: hq, Sq: sq, DType: ir.BF16, Dqk: 48, Dv: 32, Page: 16}
				c := MLAConfig{M: m, Stages: 1, Threads: 32}
				if s.Check(c) != nil {
					continue
				}
				t.Run(fmt.Sprintf("hq%d_sq%d_m%d", hq, sq, m), func(t *testing.T) {
					fn, err := MLADecode(s, c).Build()
					if err != nil {
						t.Fatal(err)
					}
					args := MLAInputs(s, lens, 11)
					if err := interp.Run(fn, args); err != nil {
						t.Fatal(err)
					}
					checkMLA(t, s, args, lens)
					args = MLAInputs(s, lens, 11)
					runSplit(t, s, c, ScheduleMLAParts(lens, s.Page, 4, MLAPieceCost(s.Sq, s.Hq)), args)
					checkMLA(t, s, args, lens)
				})
			}
		}
	}
}

func TestMLACheckConfig(t *testing.T) {
	s := MLAShape{Hq: 16, Sq: 2, DType: ir.BF16}
	for m, ok := range map[int]bool{16: true, 32: true, 8: true, 64: false, 24: false, 0: false} {
		if err := s.Check(MLAConfig{M: m, Stages: 1, Threads: 128}); (err == nil) != ok {
			t.Errorf("M=%d: %v", m, err)
		}
	}
	if err := (MLAShape{Hq: 16, Sq: 1, DType: ir.F32}).Check(MLAConfig{M: 16, Stages: 1, Threads: 128}); err == nil {
		t.Error("f32 accepted")
	}
	if err := (MLAShape{Hq: 16, Sq: 1, DType: ir.BF16, Scale: -0.1}).Check(MLAConfig{M: 16, Stages: 1, Threads: 128}); err == nil || !strings.Contains(err.Error(), "softmax scale -0.1") {
		t.Errorf("a negative scale: %v", err)
	}
	// N: a divisor of the page, without a producer, roles or clusters.
	for _, tc := range []struct {
		c  MLAConfig
		ok bool
	}{
		{MLAConfig{M: 16, Stages: 1, Threads: 128, N: 32}, true},
		{MLAConfig{M: 16, Stages: 1, Threads: 128, N: 24}, false},
		{MLAConfig{M: 16, Stages: 1, Threads: 128, N: -32}, false},
		{MLAConfig{M: 16, Stages: 2, Threads: 128, WS: true, N: 32}, false},
	} {
		if err := s.Check(tc.c); (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "must divide the page") {
			t.Errorf("%+v: %v", tc.c, err)
		}
	}
	// V0: a multiple of 64 short of Dv, and only with hand-offs.
	handoff := MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, Handoff: true}
	hq128 := MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	for v0, ok := range map[int]bool{0: true, 64: true, 192: true, 448: true, 512: false, 96: false, -64: false} {
		c := handoff
		c.V0 = v0
		if err := hq128.Check(c); (err == nil) != ok {
			t.Errorf("V0=%d: %v", v0, err)
		}
	}
	if err := hq128.Check(MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Roles: true, V0: 192}); err == nil || !strings.Contains(err.Error(), "V0 = 192 needs Handoff") {
		t.Errorf("V0 without Handoff: %v", err)
	}
	// Merge: hand-offs, and a block's rows one token's heads.
	merge := handoff
	merge.Merge = true
	for _, tc := range []struct {
		s  MLAShape
		c  MLAConfig
		ok bool
	}{
		{hq128, merge, true},
		{MLAShape{Hq: 64, Sq: 2, DType: ir.F16}, merge, true},
		{MLAShape{Hq: 32, Sq: 2, DType: ir.BF16}, merge, false}, // two tokens in a block
		{MLAShape{Hq: 16, Sq: 1, DType: ir.BF16}, merge, false}, // padded
		{hq128, MLAConfig{M: 64, Stages: 2, Threads: 256, SplitN: true, WS: true, Merge: true}, false},
	} {
		if err := tc.s.Check(tc.c); (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "Merge needs Handoff") {
			t.Errorf("%+v %+v: %v", tc.s, tc.c, err)
		}
	}
}

// ---- the registry entry ----

func TestMLARegistry(t *testing.T) {
	cases := []map[string]string{
		nil,
		{"seq-q": "2", "dtype": "f16", "batch": "3", "mean-kv": "70"},
		{"heads": "32", "seq-q": "2", "batch": "1", "mean-kv": "90"},
		{"splits": "0", "mean-kv": "150"},
		{"splits": "3", "seq-q": "2", "mean-kv": "90"},
		{"splits": "4", "mean-kv": "1", "batch": "3"}, // more splits than blocks
	}
	for _, vals := range cases {
		t.Run(fmt.Sprint(vals), func(t *testing.T) {
			p := mustProblem(t, "mla-decode", vals)
			args := p.Inputs(3)
			steps, err := p.(Chain).Steps(p.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Program(p.DefaultConfig()); (err == nil) != (len(steps) == 1) {
				t.Errorf("%d steps, Program: %v", len(steps), err)
			}
			if err := RunSteps(steps, args, ir.DefaultLimits, interp.Run); err != nil {
				t.Fatal(err)
			}
			r := p.Check(args, 3)
			if !r.OK() || r.Checked != "all" {
				t.Errorf("%s: %s", p.Shape(), r)
			}
			t.Logf("%s: %d step(s): %s", p.Shape(), len(steps), r)
		})
	}
}

func TestMLARegistryInputs(t *testing.T) {
	p := mustProblem(t, "mla-decode", map[string]string{"batch": "16", "mean-kv": "128"}).(*mlaProblem)
	args := p.Inputs(1)
	lo, hi := int32(1<<30), int32(0)
	for _, l := range p.lens {
		lo, hi = min(lo, l), max(hi, l)
		if l%MLAPage == 0 || l < 64 || l > 193 {
			t.Errorf("length %d: want 64..192, not a multiple of 64", l)
		}
	}
	if hi-lo < 40 {
		t.Errorf("lengths %v hardly vary", p.lens)
	}
	// The table is a permutation of the pool's used blocks, not in order.
	table, seen, inOrder := args[2], map[int]bool{}, true
	prev := -1
	for b, l := range p.lens {
		for j := range (int(l) + MLAPage - 1) / MLAPage {
			id := int(table.At(b, j))
			if seen[id] {
				t.Fatalf("block %d used twice", id)
			}
			seen[id] = true
			inOrder = inOrder && id == prev+1
			prev = id
		}
	}
	if inOrder {
		t.Error("the block table is in pool order; want it shuffled")
	}
	if !math.IsNaN(args[4].At(0, 0, 0, 0)) || !math.IsNaN(args[5].At(0, 0, 0)) {
		t.Error("outputs are not poisoned")
	}
	if r := p.Check(args, 1); r.OK() {
		t.Errorf("unwritten O passed: %s", r)
	}
}

func TestMLAFLOPsBytes(t *testing.T) {
	p := mustProblem(t, "mla-decode", map[string]string{"batch": "4", "heads": "128", "seq-q": "2", "mean-kv": "4096"}).(*mlaProblem)
	sum := 0
	for _, l := range p.lens {
		sum += int(l)
	}
	if want := 2.0 * 2 * 128 * float64(sum) * (576 + 512); p.FLOPs() != want {
		t.Errorf("FLOPs %g, want %g", p.FLOPs(), want)
	}
	var tr Traffic = p
	if want := 2 * (4*2*128*576 + float64(sum)*576 + 4*2*128*512); tr.Bytes() != want {
		t.Errorf("bytes %g, want %g", tr.Bytes(), want)
	}
	if _, checked := p.rowsToCheck(1); !strings.HasPrefix(checked, "sampled") {
		t.Errorf("a 4×4096-token batch is checked %s", checked)
	}
	if c := GPUConfigFor(p, "sm_90a").(MLAConfig); c != (MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}) {
		t.Errorf("sm_90a config %+v, want FlashMLA's block (SplitN, two TMA stages, a producer, roles handed off)", c)
	}
	short := mustProblem(t, "mla-decode", map[string]string{"batch": "4", "heads": "128", "mean-kv": "1024"})
	if c := GPUConfigFor(short, "sm_90a").(MLAConfig); c.Handoff || !c.Roles {
		t.Errorf("sm_90a config %+v at 1k tokens, want roles without hand-offs (measured faster there)", c)
	}
	// The fastest measured at the memory-bound points (2026-11-23): h_q 16,
	// 16 rows and two stages on sm_90a (one elsewhere); h_q 32, the Roles
	// block padded, on sm_90a only. On sm_90a's split path with no more
	// requests than parts (132 SMs over the M-blocks), the combine starts
	// early: not with the single program, 16-row blocks (no producer), or
	// more requests than parts, where with hand-offs the split kernel
	// merges (Merge) if its blocks fit the SMs at once.
	roles := MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true}
	early, handoffEarly, handoffMerge := roles, roles, roles
	early.Early = true
	handoffEarly.Handoff, handoffEarly.Early = true, true
	handoffMerge.Handoff, handoffMerge.Merge = true, true
	for _, tc := range []struct {
		batch, heads, splits, mean, arch string
		want                             MLAConfig
	}{
		{"2", "16", "1", "300", "sm_90a", MLAConfig{M: 16, Stages: 2, Threads: 128}},
		{"2", "16", "3", "300", "sm_90a", MLAConfig{M: 16, Stages: 2, Threads: 128}},
		{"2", "16", "1", "300", "sm_80", MLAConfig{M: 16, Stages: 1, Threads: 128}},
		{"2", "32", "1", "300", "sm_90a", roles},
		{"2", "32", "3", "300", "sm_90a", early},
		{"2", "32", "1", "300", "sm_80", MLAConfig{M: 32, Stages: 1, Threads: 128}},
		{"2", "64", "3", "300", "sm_90a", early}, // hand-offs were slower there
		{"2", "64", "3", "300", "sm_80", MLAConfig{M: 64, Stages: 1, Threads: 256}},
		{"66", "128", "0", "8192", "sm_90a", handoffEarly},                                                                                  // 66 requests over 66 parts
		{"67", "128", "0", "8192", "sm_90a", handoffMerge},                                                                                  // over 66: no combine
		{"67", "128", "3", "8192", "sm_90a", MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}}, // 201 parts: more blocks than SMs
		{"132", "64", "0", "8192", "sm_90a", early},
		{"133", "64", "0", "8192", "sm_90a", roles}, // no hand-offs: the combine
	} {
		q := mustProblem(t, "mla-decode", map[string]string{"batch": tc.batch, "heads": tc.heads, "splits": tc.splits, "mean-kv": tc.mean})
		if c := GPUConfigFor(q, tc.arch).(MLAConfig); c != tc.want {
			t.Errorf("batch %s, h_q %s, %s splits on %s: config %+v, want %+v", tc.batch, tc.heads, tc.splits, tc.arch, c, tc.want)
		}
	}
	if c := GPUConfigFor(p, "sm_80").(MLAConfig); c.M != 64 || c.Threads != 256 || c.Stages != 1 {
		t.Errorf("sm_80 config %+v, want 64 rows over 8 warps, one stage (two do not fit cp.async's path)", c)
	}
}

func TestMLABadFlags(t *testing.T) {
	cases := map[string]map[string]string{
		"1 or 2 query tokens":  {"seq-q": "3"},
		`--splits: "-1"`:       {"splits": "-1"},
		`unknown dtype "f32"`:  {"dtype": "f32"},
		"--mean-kv must be":    {"mean-kv": "0"},
		"--heads must be":      {"heads": "0"},
		"more than 2^40":       {"batch": "16000000", "mean-kv": "16000000"},
		"unknown flag --dim":   {"dim": "64"},
		`--sms: "x" is not an`: {"sms": "x"},
	}
	e, _ := Lookup("mla-decode")
	for want, vals := range cases {
		if _, err := e.Problem(vals); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v; want %q", vals, err, want)
		}
	}
	// A shape no M fits.
	p := mustProblem(t, "mla-decode", map[string]string{"heads": "3"})
	if _, err := p.Program(MLAConfig{M: 2, Stages: 1, Threads: 128}); err == nil {
		t.Error("M=2 with 3 heads built")
	}
}
