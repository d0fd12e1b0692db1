package ir

import (
	"fmt"
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

// NumElems is the product of a static shape (0 if symbolic).
func (b *Buffer) NumElems() int {
	s, ok := b.StaticShape()
	if !ok {
		return 0
	}
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
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
