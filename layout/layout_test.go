package layout

import (
	"math/rand/v2"
	"testing"
)

func TestLayoutsCoverTheirTiles(t *testing.T) {
	acc := func(m, n int, w Warps) *Fragment {
		f, err := Accumulator(m, n, w)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	opA := func(m, k int, w Warps) *Fragment {
		f, err := OperandA(m, k, w)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name string
		f    *Fragment
	}{
		{"acc 64x64 4x1", acc(64, 64, Warps{4, 1})},
		{"acc 128x128 2x2", acc(128, 128, Warps{2, 2})},
		{"acc 128x256 2x4", acc(128, 256, Warps{2, 4})},
		{"opA 64x32 4x1", opA(64, 32, Warps{4, 1})},
		{"opA 64x32 2x2", opA(64, 32, Warps{2, 2})},
		{"spread 64 over 128", Spread([]int{64}, 128, 1)},
		{"spread 128x64 over 128 vec 8", Spread([]int{128, 64}, 128, 8)},
		{"spread 7x5 over 32", Spread([]int{7, 5}, 32, 1)},
		{"row of acc", acc(64, 64, Warps{2, 2}).Project([]int{0})},
		{"rows 8x512 over 128 vec 8", Rows(8, 512, 128, 8)},
		{"rows 16x64 over 128 vec 4", Rows(16, 64, 128, 4)},
	}
	for _, c := range cases {
		if err := c.f.Check(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestAccumulatorMatchesPTX(t *testing.T) {
	f, _ := Accumulator(16, 8, Warps{1, 1})
	for lane := range 32 {
		for i := range 4 {
			c := f.Coord(lane, i)
			row, col := lane/4+8*(i/2), 2*(lane%4)+i%2
			if c[0] != row || c[1] != col {
				t.Fatalf("lane %d reg %d at %v, want (%d, %d)", lane, i, c, row, col)
			}
		}
	}
}

// The A operand of P·V in registers is the accumulator of S = Q·Kᵀ when the
// warps split M only: that is what lets attention skip shared memory.
func TestOperandAIsAccumulatorForFullRow(t *testing.T) {
	a, _ := Accumulator(128, 64, Warps{4, 1})
	b, _ := OperandA(128, 64, Warps{4, 1})
	if !a.Equal(b) {
		t.Fatalf("accumulator %s != operand A %s", a, b)
	}
	c, _ := Accumulator(128, 64, Warps{2, 2})
	d, _ := OperandA(128, 64, Warps{2, 2})
	if c.Equal(d) {
		t.Fatal("a 2x2 accumulator cannot be a 2x2 A operand")
	}
}

func TestProjectAndRegMap(t *testing.T) {
	f, _ := Accumulator(64, 32, Warps{4, 1})
	row := f.Project([]int{0})
	terms := f.RegMap([]int{0})
	for th := range f.NumThreads() {
		for r := range f.NumRegs() {
			rr := Apply(terms, r)
			if got, want := row.Coord(th, rr)[0], f.Coord(th, r)[0]; got != want {
				t.Fatalf("thread %d reg %d: row reg %d is row %d, want %d", th, r, rr, got, want)
			}
		}
	}
	if row.NumRegs() != 2 {
		t.Fatalf("a 16-row warp slice holds 2 rows per thread, got %d", row.NumRegs())
	}
}

func TestWGLayouts(t *testing.T) {
	for _, c := range []struct{ m, n, wg int }{{64, 64, 1}, {128, 128, 2}, {128, 256, 1}, {192, 96, 3}} {
		a, err := WGAccumulator(c.m, c.n, WGs{c.wg, 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Check(); err != nil {
			t.Error(err)
		}
		b, err := WGOperandA(c.m, c.n, c.wg)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Equal(b) {
			t.Errorf("%v: accumulator %s != operand A %s", c, a, b)
		}
	}
	// Thread 37 (warp 1, lane 5), register 6: row 16 + 1 + 8, column 8 + 2 + 0.
	a, _ := WGAccumulator(64, 64, WGs{1, 1})
	if c := a.Coord(37, 6); c[0] != 25 || c[1] != 10 {
		t.Errorf("thread 37 reg 6 at %v, want [25 10]", c)
	}
	// Two warpgroups splitting N: the second holds the right half, each
	// thread as the first one's same thread does in its half.
	s, err := WGAccumulator(64, 512, WGs{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
	if s.NumRegs() != 128 || s.NumThreads() != 256 {
		t.Errorf("64×512 over 1×2 warpgroups: %d registers, %d threads; want 128, 256", s.NumRegs(), s.NumThreads())
	}
	half, _ := WGAccumulator(64, 256, WGs{1, 1})
	for _, tr := range [][2]int{{0, 0}, {37, 6}, {127, 127}, {5, 64}} {
		c0, c1 := s.Coord(tr[0], tr[1]), s.Coord(tr[0]+128, tr[1])
		h := half.Coord(tr[0], tr[1])
		if c0[0] != h[0] || c0[1] != h[1] || c1[0] != h[0] || c1[1] != h[1]+256 {
			t.Errorf("thread %d reg %d: %v and (+128) %v; want %v and 256 columns on", tr[0], tr[1], c0, c1, h)
		}
	}
	if _, err := WGAccumulator(64, 40, WGs{1, 2}); err == nil {
		t.Error("40 columns split over 2 warpgroups in groups of 8: no error")
	}
}

// Rows gives each thread one row and vec adjacent columns a register run,
// consecutive threads on consecutive runs; it declines shapes the threads
// cannot divide so.
func TestRows(t *testing.T) {
	f := Rows(8, 512, 128, 8)
	for _, c := range []struct{ t, r, row, col int }{
		{0, 0, 0, 0}, {0, 7, 0, 7}, {0, 8, 0, 128}, {1, 0, 0, 8}, {15, 31, 0, 3*128 + 15*8 + 7}, {16, 0, 1, 0}, {127, 0, 7, 120},
	} {
		if got := f.Coord(c.t, c.r); got[0] != c.row || got[1] != c.col {
			t.Errorf("thread %d reg %d: got %v, want [%d %d]", c.t, c.r, got, c.row, c.col)
		}
	}
	if got := f.Project([]int{0}).NumRegs(); got != 1 {
		t.Errorf("a row's statistics take %d registers a thread, want 1", got)
	}
	for _, c := range []struct{ rows, cols, threads, vec int }{{3, 64, 128, 8}, {8, 100, 128, 8}, {256, 64, 128, 1}} {
		if f := Rows(c.rows, c.cols, c.threads, c.vec); f != nil {
			t.Errorf("Rows%v = %v, want nil", c, f)
		}
	}
}

// Check, which walks the digits, says what checking every (thread,
// register)'s coordinates says, for random layouts good and bad.
func TestCheckWalksAsCoords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bad := 0
	for range 20000 {
		f := &Fragment{Shape: make([]int, 1+rng.IntN(3))}
		n := 1
		for i := range f.Shape {
			f.Shape[i] = 1 + rng.IntN(8)
			n *= f.Shape[i]
		}
		digit := func() Digit {
			return Digit{Size: 1 + rng.IntN(4), Dim: rng.IntN(len(f.Shape)+1) - 1, Stride: rng.IntN(5) - 1}
		}
		for range rng.IntN(4) {
			f.Thread = append(f.Thread, digit())
		}
		for range rng.IntN(4) {
			f.Reg = append(f.Reg, digit())
		}
		got, want := f.Check(), f.checkCoords(n)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("%s: Check says %v, the coordinates %v", f, got, want)
		}
		if got != nil {
			bad++
		}
	}
	if bad == 0 || bad == 20000 {
		t.Errorf("%d of 20000 random layouts bad: the test checks little", bad)
	}
}
