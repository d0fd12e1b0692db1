// Package layout describes how a fragment's elements are spread over the
// threads of a block and each thread's registers.
//
// A Fragment layout is mixed-radix: the thread id is split into digits
// (innermost first) and so is the register index; each digit adds
// digit·Stride to one coordinate of the tile, or nothing (Dim = -1) when
// the threads it tells apart hold copies of the same elements. The layouts
// of mma accumulators and operands, and all the layouts derived from them
// by reductions and element-wise loops, are of this form.
package layout

import (
	"fmt"
	"slices"
	"strings"
)

// Digit is one radix of a thread id or register index.
type Digit struct {
	Size   int
	Dim    int // tile dim this digit moves along; -1 for a replicated digit
	Stride int
}

// Fragment maps (thread, register) to tile coordinates.
type Fragment struct {
	Shape  []int
	Thread []Digit // product of sizes = threads in the block
	Reg    []Digit // product of sizes = registers per thread
}

// NumRegs is the number of registers each thread holds.
func (f *Fragment) NumRegs() int { return prod(f.Reg) }

// NumThreads is the number of threads the layout spans.
func (f *Fragment) NumThreads() int { return prod(f.Thread) }

func prod(ds []Digit) int {
	n := 1
	for _, d := range ds {
		n *= d.Size
	}
	return n
}

// Coord returns the tile coordinates of register r of thread t.
func (f *Fragment) Coord(t, r int) []int {
	c := make([]int, len(f.Shape))
	for _, d := range f.Thread {
		if d.Dim >= 0 {
			c[d.Dim] += (t % d.Size) * d.Stride
		}
		t /= d.Size
	}
	for _, d := range f.Reg {
		if d.Dim >= 0 {
			c[d.Dim] += (r % d.Size) * d.Stride
		}
		r /= d.Size
	}
	return c
}

// canon merges adjacent digits that continue each other and drops digits
// of size 1, so equal maps have equal digit lists.
func canon(ds []Digit) []Digit {
	var out []Digit
	for _, d := range ds {
		if d.Size == 1 {
			continue
		}
		if d.Dim < 0 {
			d.Stride = 0
		}
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.Dim == d.Dim && (d.Dim < 0 || d.Stride == p.Stride*p.Size) {
				p.Size *= d.Size
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// Canon returns f with its digits in canonical form.
func (f *Fragment) Canon() *Fragment {
	return &Fragment{Shape: slices.Clone(f.Shape), Thread: canon(f.Thread), Reg: canon(f.Reg)}
}

// Equal reports whether f and g map (thread, register) the same way.
func (f *Fragment) Equal(g *Fragment) bool {
	a, b := f.Canon(), g.Canon()
	return slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Thread, b.Thread) && slices.Equal(a.Reg, b.Reg)
}

func (f *Fragment) String() string {
	ds := func(xs []Digit) string {
		parts := make([]string, len(xs))
		for i, d := range xs {
			if d.Dim < 0 {
				parts[i] = fmt.Sprintf("%d:rep", d.Size)
			} else {
				parts[i] = fmt.Sprintf("%d:d%d*%d", d.Size, d.Dim, d.Stride)
			}
		}
		return strings.Join(parts, " ")
	}
	c := f.Canon()
	return fmt.Sprintf("%v thread(%s) reg(%s)", c.Shape, ds(c.Thread), ds(c.Reg))
}

// Project keeps the tile dims listed in keep (in the new order) and drops
// the others: threads that differed only along a dropped dim now hold the
// same elements (replicated), and registers along a dropped dim disappear.
// This is the layout of dst in a reduction, and the layout a fragment
// indexed by a subset of a Parallel loop's variables must have.
func (f *Fragment) Project(keep []int) *Fragment {
	newDim := map[int]int{}
	shape := make([]int, len(keep))
	for i, d := range keep {
		newDim[d] = i
		shape[i] = f.Shape[d]
	}
	if len(shape) == 0 {
		shape = []int{1}
	}
	g := &Fragment{Shape: shape}
	for _, d := range f.Thread {
		nd, ok := newDim[d.Dim]
		if !ok {
			nd = -1
		}
		g.Thread = append(g.Thread, Digit{Size: d.Size, Dim: nd, Stride: d.Stride})
	}
	for _, d := range f.Reg {
		if nd, ok := newDim[d.Dim]; ok {
			g.Reg = append(g.Reg, Digit{Size: d.Size, Dim: nd, Stride: d.Stride})
		}
	}
	return g
}

// RegMap returns, for a layout f driving a loop and a projection g of it
// (g.Equal(f.Project(keep))), how register r of f maps to a register of g:
// the pairs (div, mod, mul) such that reg_g = Σ (r / div % mod) · mul.
func (f *Fragment) RegMap(keep []int) []Term {
	kept := map[int]bool{}
	for _, d := range keep {
		kept[d] = true
	}
	var terms []Term
	div, mul := 1, 1
	for _, d := range f.Reg {
		if d.Dim >= 0 && kept[d.Dim] && d.Size > 1 {
			terms = append(terms, Term{Div: div, Mod: d.Size, Mul: mul})
			mul *= d.Size
		}
		div *= d.Size
	}
	return terms
}

// Term is one digit of a register index map.
type Term struct{ Div, Mod, Mul int }

// Apply evaluates a register map at r.
func Apply(terms []Term, r int) int {
	n := 0
	for _, t := range terms {
		n += r / t.Div % t.Mod * t.Mul
	}
	return n
}

// Check verifies that f covers every element of its shape exactly once per
// group of replicated threads: a layout with a hole or an overlap is a
// compiler bug, caught here rather than on the GPU.
//
// It counts the elements each (thread, register) holds walking the
// digits as an odometer, each step adding one digit's offset in the
// row-major tile, rather than computing every coordinate anew (Coord):
// the compiler checks every layout it infers, which made this loop most
// of a compilation.
func (f *Fragment) Check() error {
	n := 1
	for _, s := range f.Shape {
		n *= s
	}
	digits := append(slices.Clone(f.Thread), f.Reg...)
	rowStride := make([]int, len(f.Shape))
	for i, m := len(f.Shape)-1, 1; i >= 0; i-- {
		rowStride[i] = m
		m *= f.Shape[i]
	}
	lo, hi := make([]int, len(f.Shape)), make([]int, len(f.Shape))
	step := make([]int, len(digits))
	for i, d := range digits {
		if d.Size < 1 || d.Dim >= len(f.Shape) {
			return f.checkCoords(n)
		}
		if d.Dim < 0 {
			continue
		}
		if span := (d.Size - 1) * d.Stride; span < 0 {
			lo[d.Dim] += span
		} else {
			hi[d.Dim] += span
		}
		step[i] = d.Stride * rowStride[d.Dim]
	}
	for i := range f.Shape {
		if lo[i] < 0 || hi[i] >= f.Shape[i] || f.Shape[i] < 1 {
			return f.checkCoords(n) // it says which thread and register stray
		}
	}
	seen := make([]int32, n)
	val := make([]int, len(digits))
	for idx := 0; ; {
		seen[idx]++
		i := 0
		for ; i < len(digits); i++ {
			if val[i]++; val[i] < digits[i].Size {
				idx += step[i]
				break
			}
			idx -= (digits[i].Size - 1) * step[i]
			val[i] = 0
		}
		if i == len(digits) {
			break
		}
	}
	for i, k := range seen {
		if k != seen[0] || k == 0 {
			return fmt.Errorf("layout %s: element %d held %d times, element 0 %d times", f, i, k, seen[0])
		}
	}
	return nil
}

// checkCoords is Check by every (thread, register)'s coordinates, for the
// layouts whose digits reach outside the tile (or a digit or the tile has
// no size): it says which thread and register.
func (f *Fragment) checkCoords(n int) error {
	seen := make([]int, n)
	T, R := f.NumThreads(), f.NumRegs()
	for t := range T {
		for r := range R {
			c := f.Coord(t, r)
			idx := 0
			for i, x := range c {
				if x < 0 || x >= f.Shape[i] {
					return fmt.Errorf("layout %s: thread %d reg %d maps outside the tile to %v", f, t, r, c)
				}
				idx = idx*f.Shape[i] + x
			}
			seen[idx]++
		}
	}
	for i, k := range seen {
		if k != seen[0] || k == 0 {
			return fmt.Errorf("layout %s: element %d held %d times, element 0 %d times", f, i, k, seen[0])
		}
	}
	return nil
}
