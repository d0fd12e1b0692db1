package ir

import (
	"fmt"
	"math"
	"path/filepath"
)

// Pos is where the program built a node: the Go file and line of the call
// in the kernel author's code.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.File == "" {
		return "?"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(p.File), p.Line)
}

// Scope is the memory a buffer lives in.
type Scope uint8

const (
	Global   Scope = iota // a kernel parameter in device memory
	Shared                // one tile per thread block
	Fragment              // a tile spread over the registers of the block's threads
	Local                 // per-thread registers: scalars and small arrays
)

func (s Scope) String() string {
	if s > Local {
		return fmt.Sprintf("scope(%d)", uint8(s))
	}
	return [...]string{"global", "shared", "fragment", "local"}[s]
}

// Swizzle is a shared-tile layout annotation. SwizzleAuto lets the backend
// choose; the others force an XOR swizzle over rows of the given byte width.
type Swizzle uint8

const (
	SwizzleAuto Swizzle = iota
	SwizzleNone
	Swizzle32B
	Swizzle64B
	Swizzle128B
)

func (s Swizzle) String() string {
	if s > Swizzle128B {
		return fmt.Sprintf("swizzle(%d)", uint8(s))
	}
	return [...]string{"auto", "none", "32B", "64B", "128B"}[s]
}

// Buffer is a tensor parameter or an on-chip allocation. Shapes of on-chip
// buffers are constants; global shapes may use symbolic sizes. Strides are
// in elements; nil means row-major.
type Buffer struct {
	Name    string
	DType   DType
	Scope   Scope
	Shape   []Expr
	Strides []Expr
	Output  bool
	// Scratch (with Output): a workspace the caller hands over zeroed and
	// the program leaves zeroed (Ticket's counters); not poisoned, not a
	// result.
	Scratch bool
	Swizzle Swizzle
	Pos     Pos
}

// StaticShape returns the shape as ints, or false if some dim is symbolic.
func (b *Buffer) StaticShape() ([]int, bool) {
	s := make([]int, len(b.Shape))
	for i, d := range b.Shape {
		v, ok := ConstInt(d)
		if !ok {
			return nil, false
		}
		s[i] = int(v)
	}
	return s, true
}

// NumElems is the product of a static shape (0 if symbolic), saturated at
// math.MaxInt where it overflows (the verifier refuses such a tile; see
// CheckedElems), so that a size compared with a limit is never wrapped small.
func (b *Buffer) NumElems() int {
	s, ok := b.StaticShape()
	if !ok {
		return 0
	}
	n := int64(1)
	for _, d := range s {
		if n, ok = MulChecked(n, int64(d)); !ok {
			return math.MaxInt
		}
	}
	return int(n)
}

// CheckedElems is the product of a static shape, or false when the shape
// is symbolic, has a dim below 1 or the product overflows an int64.
func (b *Buffer) CheckedElems() (int64, bool) {
	n := int64(1)
	for _, d := range b.Shape {
		c, ok := ConstInt(d)
		if !ok || c < 1 {
			return 0, false
		}
		if n, ok = MulChecked(n, c); !ok {
			return 0, false
		}
	}
	return n, true
}

// MulChecked is a·b, or false when it overflows an int64.
func MulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// AddChecked is a+b, or false when it overflows an int64.
func AddChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// satMul and satAdd saturate at math.MaxInt: byte counts of verified
// programs are far below it, and a saturated count fails every limit.
func satMul(a, b int) int {
	p, ok := MulChecked(int64(a), int64(b))
	if !ok || p > math.MaxInt {
		return math.MaxInt
	}
	return int(p)
}

func satAdd(a, b int) int {
	s, ok := AddChecked(int64(a), int64(b))
	if !ok || s > math.MaxInt {
		return math.MaxInt
	}
	return int(s)
}

// Region is a box of a buffer: Start and Extent per dim. Dims taken by a
// scalar index have Keep false and extent 1; the region's tile shape is the
// extents of the kept dims. A region of a global tensor may run past its
// edge: reads there give zero and writes are dropped.
type Region struct {
	Buf    *Buffer
	Start  []Expr
	Extent []int
	Keep   []bool
}

// Whole is the region covering all of a buffer with a static shape.
func Whole(b *Buffer) Region {
	s, _ := b.StaticShape()
	r := Region{Buf: b, Start: make([]Expr, len(s)), Extent: s, Keep: make([]bool, len(s))}
	for i := range s {
		r.Start[i] = IntConst(0)
		r.Keep[i] = true
	}
	return r
}

// Shape is the region's tile shape: the extents of kept dims.
func (r Region) Shape() []int {
	var s []int
	for i, e := range r.Extent {
		if r.Keep[i] {
			s = append(s, e)
		}
	}
	return s
}

// Dims maps each tile dim to the buffer dim it walks.
func (r Region) Dims() []int {
	var d []int
	for i := range r.Extent {
		if r.Keep[i] {
			d = append(d, i)
		}
	}
	return d
}

// IsWhole reports whether r covers its whole (static) buffer.
func (r Region) IsWhole() bool {
	s, ok := r.Buf.StaticShape()
	if !ok {
		return false
	}
	for i := range s {
		if st, ok := ConstInt(r.Start[i]); !ok || st != 0 || r.Extent[i] != s[i] || !r.Keep[i] {
			return false
		}
	}
	return true
}
