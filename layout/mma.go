package layout

import "fmt"

// Warps is how a Gemm's warps tile its M×N output.
type Warps struct{ M, N int }

// Accumulator is the layout of an M×N f32 accumulator of mma m16n8k16
// when warp w sits at (w % wm, w / wm) of a wm×wn grid. Lane l holds, in
// each 16×8 tile, rows l/4 and l/4+8 and columns 2(l%4) and 2(l%4)+1;
// registers run over those 4 values, then over the warp's n tiles, then
// its m tiles.
func Accumulator(m, n int, w Warps) (*Fragment, error) {
	if m%(16*w.M) != 0 || n%(8*w.N) != 0 {
		return nil, fmt.Errorf("a %d×%d accumulator cannot be split over %d×%d warps in 16×8 tiles", m, n, w.M, w.N)
	}
	wm, wn := m/w.M, n/w.N
	return &Fragment{
		Shape: []int{m, n},
		Thread: []Digit{
			{4, 1, 2}, {8, 0, 1}, // lane
			{w.M, 0, wm}, {w.N, 1, wn}, // warp
		},
		Reg: []Digit{{2, 1, 1}, {2, 0, 8}, {wn / 8, 1, 8}, {wm / 16, 0, 16}},
	}, nil
}

// OperandA is the layout an M×K A operand must have in registers for mma
// m16n8k16: per 16×16 tile, lane l holds rows l/4 and l/4+8 at columns
// 2(l%4)+{0,1} and 2(l%4)+8+{0,1}. Warps along N need all of A's rows of
// their M slice, so they hold copies.
func OperandA(m, k int, w Warps) (*Fragment, error) {
	if m%(16*w.M) != 0 || k%16 != 0 {
		return nil, fmt.Errorf("a %d×%d A operand cannot be split over %d warps along M in 16×16 tiles", m, k, w.M)
	}
	wm := m / w.M
	return &Fragment{
		Shape:  []int{m, k},
		Thread: []Digit{{4, 1, 2}, {8, 0, 1}, {w.M, 0, wm}, {w.N, -1, 0}},
		Reg:    []Digit{{2, 1, 1}, {2, 0, 8}, {2, 1, 8}, {k / 16, 1, 16}, {wm / 16, 0, 16}},
	}, nil
}

// Spread is the default layout of a fragment no tensor-core op constrains:
// consecutive threads take consecutive vectors of vec elements along the
// innermost dims, and the rest goes to registers. Threads beyond the tile's
// size hold copies.
func Spread(shape []int, threads, vec int) *Fragment {
	f := &Fragment{Shape: append([]int(nil), shape...)}
	// Factors of the tile, innermost first: (size, dim, stride).
	var fs []Digit
	for d := len(shape) - 1; d >= 0; d-- {
		fs = append(fs, Digit{shape[d], d, 1})
	}
	take := func(n int) []Digit { // the next n elements' worth of factors
		var out []Digit
		for n > 1 && len(fs) > 0 {
			g := gcd(n, fs[0].Size)
			if g == 1 {
				break
			}
			out = append(out, Digit{g, fs[0].Dim, fs[0].Stride})
			fs[0].Size /= g
			fs[0].Stride *= g
			if fs[0].Size == 1 {
				fs = fs[1:]
			}
			n /= g
		}
		if n > 1 {
			out = append(out, Digit{n, -1, 0})
		}
		return out
	}
	// Vector registers first, then threads, then the remaining registers.
	inner := take(vec)
	var regInner []Digit
	for _, d := range inner {
		if d.Dim >= 0 {
			regInner = append(regInner, d)
		}
	}
	f.Thread = take(threads)
	f.Reg = append(regInner, fs...)
	return f
}

// Rows is a rows×cols layout for element-wise work on rows that 16-byte
// global copies load and store: each thread holds one row, vec contiguous
// columns at a time, with threads/rows threads to a row on consecutive
// vectors (so a warp's accesses are whole 16-byte chunks, and a row's
// statistics are one register a thread). It returns nil when the threads
// do not divide that way.
func Rows(rows, cols, threads, vec int) *Fragment {
	if rows < 1 || vec < 1 || threads%rows != 0 {
		return nil
	}
	tc := threads / rows
	if cols%(vec*tc) != 0 {
		return nil
	}
	return &Fragment{
		Shape:  []int{rows, cols},
		Thread: []Digit{{tc, 1, vec}, {rows, 0, 1}},
		Reg:    []Digit{{vec, 1, 1}, {cols / (vec * tc), 1, vec * tc}},
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// WGs is how a wgmma Gemm's warpgroups tile its M×N output: M along rows
// (warpgroup w at row block w % M), N along columns (at w / M).
type WGs struct{ M, N int }

// WGAccumulator is the layout of an M×N f32 accumulator of wgmma
// m64nNk16 when the warpgroups split M and N evenly (w) and each takes its
// rows 64 at a time, its columns in one instruction. In each 64-row tile,
// warp w of a warpgroup holds rows 16w + l/4 and 16w + l/4 + 8 at columns
// 8j + 2(l%4) + {0,1}: registers run over those 4 values, then over the
// warpgroup's column groups of 8, then its 64-row tiles.
func WGAccumulator(m, n int, w WGs) (*Fragment, error) {
	if m%(64*w.M) != 0 || n%(8*w.N) != 0 {
		return nil, fmt.Errorf("a %d×%d wgmma accumulator cannot be split over %d×%d warpgroups in 64-row tiles and 8-column groups", m, n, w.M, w.N)
	}
	rows, cols := m/w.M, n/w.N
	return &Fragment{
		Shape:  []int{m, n},
		Thread: []Digit{{4, 1, 2}, {8, 0, 1}, {4, 0, 16}, {w.M, 0, rows}, {w.N, 1, cols}},
		Reg:    []Digit{{2, 1, 1}, {2, 0, 8}, {cols / 8, 1, 8}, {rows / 64, 0, 64}},
	}, nil
}

// WGOperandA is the layout an M×K A operand must have in registers for
// wgmma m64nNk16: per 64×16 step each warp holds its 16 rows as mma.sync's
// A fragment does. It equals WGAccumulator(m, k, wg), so a softmax output
// feeds the next wgmma without leaving registers.
func WGOperandA(m, k, wg int) (*Fragment, error) {
	if m%(64*wg) != 0 || k%16 != 0 {
		return nil, fmt.Errorf("a %d×%d wgmma A operand cannot be split over %d warpgroups in 64×16 tiles", m, k, wg)
	}
	rows := m / wg
	return &Fragment{
		Shape:  []int{m, k},
		Thread: []Digit{{4, 1, 2}, {8, 0, 1}, {4, 0, 16}, {wg, 0, rows}},
		Reg:    []Digit{{2, 1, 1}, {2, 0, 8}, {2, 1, 8}, {k / 16, 1, 16}, {rows / 64, 0, 64}},
	}, nil
}
