package layout

import (
	"fmt"
	"testing"
)

// The expected placements below are typed from AMD's documentation, not
// from mfma.go:
//
//   - [calc] AMD Matrix Instruction Calculator (github.com/ROCm/
//     amd_matrix_instruction_calculator), architecture cdna3: the
//     --detail-instruction section "Register to matrix element mapping
//     with no modifiers" of each instruction (the formulas), and its
//     --matrix-layout tables for the A, B and D matrices (the entries).
//     An operand element e of a lane is 2·GPR_num + GPR_bits/16 there.
//   - [notes] AMD lab notes "AMD matrix cores" (GPUOpen), example kernels
//     matrix-cores/src/mfma_fp32_16x16x16fp16.cpp and
//     mfma_fp32_32x32x8fp16.cpp: their comments on which lanes of which
//     register cover which rows and columns (gfx908/gfx90a spellings of the
//     same instructions).

// docMap is a documented placement: lane l, register (operand element) r
// holds row, col of the instruction's A (M×K), B (K×N) or C/D (M×N).
type docMap func(l, r int) (row, col int)

// [calc] v_mfma_f32_16x16x16_f16 and _bf16.
var (
	doc16A docMap = func(l, e int) (int, int) { return l % 16, 4*(l/16) + e }
	doc16B docMap = func(l, e int) (int, int) { return 4*(l/16) + e, l % 16 }
	doc16D docMap = func(l, r int) (int, int) { return 4*(l/16) + r%4, l % 16 }
)

// [calc] v_mfma_f32_32x32x8_f16 and _bf16.
var (
	doc32A docMap = func(l, e int) (int, int) { return l % 32, 4*(l/32) + e }
	doc32B docMap = func(l, e int) (int, int) { return 4*(l/32) + e, l % 32 }
	doc32D docMap = func(l, r int) (int, int) { return (8*(r/4))%32 + 4*(l/32) + r%4, l % 32 }
)

// entry is one documented (lane, register) → (row, col).
type entry struct{ lane, reg, row, col int }

// Entries read off [calc]'s --matrix-layout tables and [notes]' comments,
// edges included (lane 63, the last register).
var (
	ent16A = []entry{
		{0, 0, 0, 0}, {17, 1, 1, 5}, {33, 0, 1, 8}, {40, 2, 8, 10}, {63, 3, 15, 15}, {63, 0, 15, 12},
		{48, 0, 0, 12}, // [notes]: the last 16 lanes of a[0] cover column 12
	}
	ent16B = []entry{
		{0, 0, 0, 0}, {17, 0, 4, 1}, {33, 3, 11, 1}, {40, 3, 11, 8}, {63, 0, 12, 15}, {63, 3, 15, 15},
		{48, 2, 14, 0}, // [notes]: the last 16 lanes of b[2] cover row 14
	}
	ent16D = []entry{
		{0, 0, 0, 0}, {1, 3, 3, 1}, {17, 1, 5, 1}, {40, 0, 8, 8}, {62, 0, 12, 14}, {63, 3, 15, 15},
		{48, 3, 15, 0}, // [notes]: d[3] covers rows 3, 7, 11 and 15
	}
	ent32A = []entry{
		{0, 0, 0, 0}, {17, 0, 17, 0}, {31, 3, 31, 3}, {33, 3, 1, 7}, {40, 1, 8, 5}, {63, 3, 31, 7},
		{32, 0, 0, 4}, // [notes]: the last 32 lanes of a[0] cover column 4
	}
	ent32B = []entry{
		{0, 0, 0, 0}, {17, 2, 2, 17}, {33, 0, 4, 1}, {40, 0, 4, 8}, {63, 3, 7, 31},
		{32, 1, 5, 0}, // [notes]: the last 32 lanes of b[1] cover row 5
	}
	ent32D = []entry{
		{0, 4, 8, 0}, {1, 15, 27, 1}, {17, 3, 3, 17}, {32, 12, 28, 0}, {33, 5, 13, 1},
		{40, 10, 22, 8}, {63, 0, 4, 31}, {63, 15, 31, 31},
		{0, 12, 24, 0}, {32, 0, 4, 0}, // [notes]: d[12:15] cover rows 24-31; the last 32 lanes of d[0] cover row 4
	}
)

// mapMismatches lists where f's single-wave map disagrees with want over
// all lanes and regs registers.
func mapMismatches(f *Fragment, want docMap, regs int) []string {
	var bad []string
	for l := range WaveSize {
		for r := range regs {
			row, col := want(l, r)
			if c := f.Coord(l, r); c[0] != row || c[1] != col {
				bad = append(bad, fmt.Sprintf("lane %d reg %d at %v, want [%d %d]", l, r, c, row, col))
			}
		}
	}
	return bad
}

func entryMismatches(f *Fragment, es []entry) []string {
	var bad []string
	for _, e := range es {
		if c := f.Coord(e.lane, e.reg); c[0] != e.row || c[1] != e.col {
			bad = append(bad, fmt.Sprintf("lane %d reg %d at %v, want [%d %d]", e.lane, e.reg, c, e.row, e.col))
		}
	}
	return bad
}

// must returns a function that passes a constructor's layout through and
// fails t on its error.
func must(t *testing.T) func(*Fragment, error) *Fragment {
	return func(f *Fragment, err error) *Fragment {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
}

// One instruction, one wave: every lane and register as documented.
func TestMFMAMatchesAMDDocs(t *testing.T) {
	get := must(t)
	one := Waves{1, 1}
	for _, c := range []struct {
		in               MFMAInst
		docA, docB, docD docMap
		eA, eB, eD       []entry
	}{
		{MFMA16x16x16F16, doc16A, doc16B, doc16D, ent16A, ent16B, ent16D},
		{MFMA16x16x16BF16, doc16A, doc16B, doc16D, ent16A, ent16B, ent16D},
		{MFMA32x32x8F16, doc32A, doc32B, doc32D, ent32A, ent32B, ent32D},
		{MFMA32x32x8BF16, doc32A, doc32B, doc32D, ent32A, ent32B, ent32D},
	} {
		in := c.in
		a := get(MFMAOperandA(in.M, in.K, in, one, 1))
		b := get(MFMAOperandB(in.K, in.N, in, one, 1))
		d := get(MFMAAccumulator(in.M, in.N, in, one))
		// [calc] "Register usage": 2 GPRs of two 16-bit elements for A and
		// B, 4 (16×16) or 16 (32×32) for C/D.
		wantD := map[int]int{16: 4, 32: 16}[in.M]
		if a.NumRegs() != 4 || b.NumRegs() != 4 || d.NumRegs() != wantD || in.OperandElems() != 4 || in.AccRegs() != wantD {
			t.Errorf("%s: %d, %d, %d registers (OperandElems %d, AccRegs %d); want 4, 4, %d", in.Name, a.NumRegs(), b.NumRegs(), d.NumRegs(), in.OperandElems(), in.AccRegs(), wantD)
		}
		for _, m := range []struct {
			what string
			f    *Fragment
			doc  docMap
			es   []entry
		}{{"A", a, c.docA, c.eA}, {"B", b, c.docB, c.eB}, {"D", d, c.docD, c.eD}} {
			if m.f.NumThreads() != WaveSize {
				t.Errorf("%s %s: %d threads", in.Name, m.what, m.f.NumThreads())
			}
			for _, s := range append(mapMismatches(m.f, m.doc, m.f.NumRegs()), entryMismatches(m.f, m.es)...) {
				t.Errorf("%s %s: %s", in.Name, m.what, s)
			}
			if err := m.f.Check(); err != nil {
				t.Errorf("%s %s: %v", in.Name, m.what, err)
			}
		}
	}
}

// The comparisons above can fail: a transposed or shifted expectation is
// caught, by the formula check and by the entry check.
func TestMFMADocCheckCatchesWrongLayouts(t *testing.T) {
	get := must(t)
	d16 := get(MFMAAccumulator(16, 16, MFMA16x16x16F16, Waves{1, 1}))
	transposed := func(l, r int) (int, int) { row, col := doc16D(l, r); return col, row }
	if bad := mapMismatches(d16, transposed, 4); len(bad) == 0 {
		t.Error("a transposed 16x16 accumulator map passed")
	}
	a32 := get(MFMAOperandA(32, 8, MFMA32x32x8F16, Waves{1, 1}, 1))
	groupsSwapped := func(l, e int) (int, int) { return l / 2, 4*(l%2) + e }
	if bad := mapMismatches(a32, groupsSwapped, 4); len(bad) == 0 {
		t.Error("a 32x32x8 A map with lane bits swapped passed")
	}
	// 16x16 D written with the 32x32 rule (and the reverse): tables do not
	// carry over between the shapes.
	if bad := mapMismatches(d16, doc32D, 4); len(bad) == 0 {
		t.Error("the 32x32 accumulator map passed for 16x16")
	}
	if bad := entryMismatches(d16, []entry{{17, 1, 1, 5}}); len(bad) != 1 {
		t.Errorf("a transposed entry gave %d mismatches, want 1", len(bad))
	}
	// The A layout is not the B layout of the transpose's lane numbering.
	b16 := get(MFMAOperandB(16, 16, MFMA16x16x16F16, Waves{1, 1}, 1))
	if bad := mapMismatches(b16, doc16A, 4); len(bad) == 0 {
		t.Error("the A map passed for B")
	}
}

// Several waves: the documented tile of each instruction, repeated over
// tiles (registers: instruction's, then n tiles, then m tiles) and waves
// (wave w at (w % M, w / M)).
func TestMFMAAccumulatorTiling(t *testing.T) {
	get := must(t)
	for _, c := range []struct {
		m, n int
		in   MFMAInst
		w    Waves
		doc  docMap
	}{
		{16, 16, MFMA16x16x16F16, Waves{1, 1}, doc16D},
		{64, 64, MFMA16x16x16F16, Waves{2, 2}, doc16D},
		{128, 64, MFMA16x16x16BF16, Waves{4, 1}, doc16D},
		{64, 128, MFMA16x16x16F16, Waves{1, 2}, doc16D},
		{128, 128, MFMA32x32x8F16, Waves{2, 2}, doc32D},
		{256, 128, MFMA32x32x8BF16, Waves{4, 2}, doc32D},
		{32, 128, MFMA32x32x8F16, Waves{1, 4}, doc32D},
	} {
		name := fmt.Sprintf("%s %dx%d over %v", c.in.Name, c.m, c.n, c.w)
		f := get(MFMAAccumulator(c.m, c.n, c.in, c.w))
		if err := f.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if f.NumThreads() != WaveSize*c.w.M*c.w.N || f.NumThreads()*f.NumRegs() != c.m*c.n {
			t.Errorf("%s: %d threads × %d registers; want each of %d elements held once", name, f.NumThreads(), f.NumRegs(), c.m*c.n)
		}
		wm, wn := c.m/c.w.M, c.n/c.w.N
		tr, nt := c.in.AccRegs(), wn/c.in.N
		for th := range f.NumThreads() {
			l, w := th%WaveSize, th/WaveSize
			for r := range f.NumRegs() {
				row, col := c.doc(l, r%tr)
				row += w%c.w.M*wm + r/tr/nt*c.in.M
				col += w/c.w.M*wn + r/tr%nt*c.in.N
				if got := f.Coord(th, r); got[0] != row || got[1] != col {
					t.Fatalf("%s: thread %d reg %d at %v, want [%d %d]", name, th, r, got, row, col)
				}
			}
		}
	}
}

// Operands over several waves: the documented tile repeated over K steps
// and m (n) tiles, each element held by every wave along the other dim.
func TestMFMAOperandTiling(t *testing.T) {
	get := must(t)
	for _, c := range []struct {
		m, n, k    int
		in         MFMAInst
		w          Waves
		docA, docB docMap
	}{
		{16, 16, 16, MFMA16x16x16F16, Waves{1, 1}, doc16A, doc16B},
		{64, 64, 64, MFMA16x16x16F16, Waves{2, 2}, doc16A, doc16B},
		{128, 32, 32, MFMA16x16x16BF16, Waves{4, 1}, doc16A, doc16B},
		{128, 128, 32, MFMA32x32x8F16, Waves{2, 2}, doc32A, doc32B},
		{64, 256, 16, MFMA32x32x8BF16, Waves{1, 4}, doc32A, doc32B},
	} {
		name := fmt.Sprintf("%s m%d n%d k%d over %v", c.in.Name, c.m, c.n, c.k, c.w)
		a := get(MFMAOperandA(c.m, c.k, c.in, c.w, 1))
		b := get(MFMAOperandB(c.k, c.n, c.in, c.w, 1))
		for _, x := range []struct {
			what   string
			f      *Fragment
			copies int
		}{{"A", a, c.w.N}, {"B", b, c.w.M}} {
			if err := x.f.Check(); err != nil {
				t.Errorf("%s %s: %v", name, x.what, err)
			}
			if x.f.NumThreads()*x.f.NumRegs() != x.f.Shape[0]*x.f.Shape[1]*x.copies {
				t.Errorf("%s %s: %d threads × %d registers; want %d copies of each element", name, x.what, x.f.NumThreads(), x.f.NumRegs(), x.copies)
			}
		}
		oe, steps := c.in.OperandElems(), c.k/c.in.K
		wm, wn := c.m/c.w.M, c.n/c.w.N
		for th := range a.NumThreads() {
			l, w := th%WaveSize, th/WaveSize
			wi, wj := w%c.w.M, w/c.w.M
			for r := range a.NumRegs() {
				e, s, tile := r%oe, r/oe%steps, r/oe/steps
				row, kk := c.docA(l, e)
				row += wi*wm + tile*c.in.M
				kk += s * c.in.K
				if got := a.Coord(th, r); got[0] != row || got[1] != kk {
					t.Fatalf("%s A: thread %d reg %d at %v, want [%d %d]", name, th, r, got, row, kk)
				}
				kk, col := c.docB(l, e)
				kk += s * c.in.K
				col += wj*wn + tile*c.in.N
				if got := b.Coord(th, r); got[0] != kk || got[1] != col {
					t.Fatalf("%s B: thread %d reg %d at %v, want [%d %d]", name, th, r, got, kk, col)
				}
			}
		}
	}
}

// kPack 2: a lane's 8 elements of every 2·K are consecutive k (one 16-byte
// read); K step s still reads registers 4s..4s+3, and A and B give those
// the same k, so each instruction multiplies matching terms and the steps
// together cover K once. The expected k follow from that definition, not
// from AMD's documentation.
func TestMFMAKPack(t *testing.T) {
	get := must(t)
	for _, in := range []MFMAInst{MFMA16x16x16F16, MFMA32x32x8BF16} {
		const kPack = 2
		k := 4 * in.K
		a := get(MFMAOperandA(in.M, k, in, Waves{1, 1}, kPack))
		b := get(MFMAOperandB(k, in.N, in, Waves{1, 1}, kPack))
		for _, f := range []*Fragment{a, b} {
			if err := f.Check(); err != nil {
				t.Error(err)
			}
		}
		plain := get(MFMAOperandA(in.M, k, in, Waves{1, 1}, 1))
		if a.NumRegs() != plain.NumRegs() || a.Equal(plain) {
			t.Errorf("%s: kPack 2 A %s, plain %s: want as many registers, other k", in.Name, a, plain)
		}
		run := kPack * in.OperandElems()
		for l := range WaveSize {
			for r := range a.NumRegs() {
				ka := a.Coord(l, r)[1]
				// B's lane with the same lane group (l / M).
				if kb := b.Coord(l, r)[0]; ka != kb {
					t.Errorf("%s: lane %d reg %d: A at k %d, B at k %d", in.Name, l, r, ka, kb)
				}
				if want := a.Coord(l, r-r%run)[1] + r%run; ka != want {
					t.Errorf("%s: lane %d reg %d at k %d, want %d (a run of %d)", in.Name, l, r, ka, want, run)
				}
			}
		}
	}
	a := get(MFMAOperandA(16, 64, MFMA16x16x16F16, Waves{1, 1}, 2))
	for _, e := range []entry{{16, 4, 0, 12}, {16, 8, 0, 40}, {63, 7, 15, 31}, {63, 15, 15, 63}} {
		if c := a.Coord(e.lane, e.reg); c[0] != e.row || c[1] != e.col {
			t.Errorf("16x16x16 A, kPack 2: lane %d reg %d at %v, want [%d %d]", e.lane, e.reg, c, e.row, e.col)
		}
	}
}

// An accumulator is, register for register, the B operand of an MFMA with K
// = its rows when each wave holds one tile along M or one along N (with
// more of both, the accumulator's registers run over n tiles first and the
// operand's over K steps first), and the waves do not split M.
func TestMFMAAccumulatorIsOperandB(t *testing.T) {
	get := must(t)
	for _, c := range []struct {
		m, n int
		in   MFMAInst
		w    Waves
		same bool
	}{
		{16, 16, MFMA16x16x16F16, Waves{1, 1}, true},
		{16, 128, MFMA16x16x16F16, Waves{1, 2}, true},
		{64, 16, MFMA16x16x16BF16, Waves{1, 1}, true},
		{32, 64, MFMA32x32x8F16, Waves{1, 2}, true},
		{128, 32, MFMA32x32x8F16, Waves{1, 1}, true},
		{32, 32, MFMA16x16x16F16, Waves{1, 1}, false},
		{32, 32, MFMA16x16x16F16, Waves{2, 1}, false},
	} {
		acc := get(MFMAAccumulator(c.m, c.n, c.in, c.w))
		b := get(MFMAOperandB(c.m, c.n, c.in, c.w, 1))
		if acc.Equal(b) != c.same {
			t.Errorf("%s %dx%d over %v: accumulator %s, B %s: equal %v, want %v", c.in.Name, c.m, c.n, c.w, acc, b, !c.same, c.same)
		}
	}
}

func TestMFMARefuses(t *testing.T) {
	in := MFMA32x32x8F16
	for _, c := range []struct {
		name string
		err  error
	}{
		{"accumulator rows", second(MFMAAccumulator(48, 64, in, Waves{1, 1}))},
		{"accumulator waves", second(MFMAAccumulator(32, 64, in, Waves{2, 1}))},
		{"no waves", second(MFMAAccumulator(32, 32, in, Waves{0, 1}))},
		{"unknown instruction", second(MFMAAccumulator(32, 32, MFMAInst{"v_mfma_f32_32x32x4_2b_f16", 32, 32, 4}, Waves{1, 1}))},
		{"A k", second(MFMAOperandA(32, 12, in, Waves{1, 1}, 1))},
		{"A k packed", second(MFMAOperandA(32, 8, in, Waves{1, 1}, 2))},
		{"A kPack 0", second(MFMAOperandA(32, 8, in, Waves{1, 1}, 0))},
		{"B columns over waves", second(MFMAOperandB(8, 32, in, Waves{1, 2}, 1))},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func second(_ *Fragment, err error) error { return err }

// A transposed accumulator holds every element once, is the plain
// accumulator's map with rows and columns swapped within each 16×16 tile,
// and, with the waves along M only, is an A operand's layout (K = n).
func TestMFMAAccumulatorT(t *testing.T) {
	for _, tc := range []struct {
		m, n int
		w    Waves
	}{{64, 64, Waves{4, 1}}, {128, 64, Waves{2, 2}}, {32, 96, Waves{1, 2}}, {16, 16, Waves{1, 1}}} {
		at, err := MFMAAccumulatorT(tc.m, tc.n, MFMA16x16x16F16, tc.w)
		if err != nil {
			t.Fatal(err)
		}
		acc, _ := MFMAAccumulator(tc.m, tc.n, MFMA16x16x16F16, tc.w)
		if err := at.Check(); err != nil {
			t.Fatal(err)
		}
		seen := map[[2]int]int{}
		for th := range at.NumThreads() {
			for r := range at.NumRegs() {
				c, p := at.Coord(th, r), acc.Coord(th, r)
				seen[[2]int{c[0], c[1]}]++
				// Within the 16×16 tile both name, the row and column offsets swap.
				r0, c0 := p[0]/16*16, p[1]/16*16
				if want := [2]int{r0 + p[1]%16, c0 + p[0]%16}; [2]int{c[0], c[1]} != want {
					t.Fatalf("%+v: thread %d reg %d at %v, want %v", tc, th, r, c, want)
				}
			}
		}
		if len(seen) != tc.m*tc.n {
			t.Errorf("%+v: %d distinct elements, want %d", tc, len(seen), tc.m*tc.n)
		}
		if tc.w.N == 1 {
			a, err := MFMAOperandA(tc.m, tc.n, MFMA16x16x16F16, tc.w, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Equal(at) {
				t.Errorf("%+v: transposed accumulator %v, A operand %v", tc, at, a)
			}
		}
	}
}
