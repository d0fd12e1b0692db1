package tensor

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/tilego/tilego/ir"
)

// Tensor is a host tensor. Values are kept as float64 already rounded to
// DType, so the interpreter and references read exactly what a GPU would.
// Element (i0, i1, ...) lives at Data[Σ ik·Strides[k]].
type Tensor struct {
	DType   ir.DType
	Shape   []int
	Strides []int
	Data    []float64
}

// RowMajor returns the strides of a dense row-major tensor.
func RowMajor(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// StridesFor returns dense strides where order lists the dims from the
// outermost to the innermost in memory; e.g. shape [B H S D] with order
// [0 2 1 3] is the BSHD layout of a BHSD-indexed tensor.
func StridesFor(shape, order []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(order) - 1; i >= 0; i-- {
		s[order[i]] = n
		n *= shape[order[i]]
	}
	return s
}

// New makes a zeroed row-major tensor.
func New(dt ir.DType, shape ...int) *Tensor { return NewStrided(dt, shape, RowMajor(shape)) }

// NewStrided makes a zeroed tensor with the given strides.
func NewStrided(dt ir.DType, shape, strides []int) *Tensor {
	n := 1
	for i, d := range shape {
		if d == 0 {
			n = 0
			break
		}
		n += (d - 1) * strides[i]
	}
	return &Tensor{DType: dt, Shape: append([]int(nil), shape...), Strides: append([]int(nil), strides...), Data: make([]float64, n)}
}

// NumElems is the number of logical elements.
func (t *Tensor) NumElems() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Offset is the position of an element in Data.
func (t *Tensor) Offset(idx ...int) int {
	if len(idx) != len(t.Shape) {
		badIndex(slices.Clone(idx), t.Shape)
	}
	o := 0
	for i, x := range idx {
		if x < 0 || x >= t.Shape[i] { // a stray index would read a neighbor silently
			badIndex(slices.Clone(idx), t.Shape)
		}
		o += x * t.Strides[i]
	}
	return o
}

// badIndex panics for Offset. It takes a copy of the indices, so that
// Offset's own variadic slice stays on the stack (At and Set run in the
// references' inner loops).
func badIndex(idx, shape []int) {
	panic(fmt.Sprintf("tensor: index %v out of range for shape %v", idx, shape))
}

// At reads an element.
func (t *Tensor) At(idx ...int) float64 { return t.Data[t.Offset(idx...)] }

// Set writes an element, rounding to the tensor's type.
func (t *Tensor) Set(v float64, idx ...int) { t.Data[t.Offset(idx...)] = Round(t.DType, v) }

// Each calls fn with every index of the tensor, last dim fastest.
func (t *Tensor) Each(fn func(idx []int)) {
	idx := make([]int, len(t.Shape))
	if t.NumElems() == 0 {
		return
	}
	for {
		fn(idx)
		d := len(idx) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.Shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// Rand fills the tensor with seeded normal values of standard deviation
// std, rounded to its type. Chunks fill in parallel, each from its own
// stream, so the result depends only on the seed.
func (t *Tensor) Rand(seed uint64, std float64) *Tensor {
	const chunk = 1 << 20
	var wg sync.WaitGroup
	for lo := 0; lo < len(t.Data); lo += chunk {
		wg.Add(1)
		go func(lo int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(lo/chunk)^0x9e3779b97f4a7c15))
			for i := lo; i < min(lo+chunk, len(t.Data)); i++ {
				t.Data[i] = Round(t.DType, float64(float32(r.NormFloat64()*std)))
			}
		}(lo)
	}
	wg.Wait()
	return t
}

// Fill sets every element (of Data, so gaps of a strided tensor too).
func (t *Tensor) Fill(v float64) *Tensor {
	v = Round(t.DType, v)
	for i := range t.Data {
		t.Data[i] = v
	}
	return t
}

// Bytes encodes Data little-endian in the tensor's storage format.
func (t *Tensor) Bytes() []byte {
	w := t.DType.Bytes()
	out := make([]byte, len(t.Data)*w)
	chunks(len(t.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			putBits(out[i*w:], w, Bits(t.DType, t.Data[i]))
		}
	})
	return out
}

// chunks runs fn over [0, n) in pieces of 1M elements, in parallel: the
// encoding and decoding of a GPU's tensors (10^8 elements and more) would
// otherwise take seconds on one core.
func chunks(n int, fn func(lo, hi int)) {
	const chunk = 1 << 20
	if n <= chunk {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { fn(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// SetBytes decodes Data from the tensor's storage format.
func (t *Tensor) SetBytes(b []byte) error {
	w := t.DType.Bytes()
	if len(b) != len(t.Data)*w {
		return fmt.Errorf("tensor: %d bytes for %d elements of %s", len(b), len(t.Data), t.DType)
	}
	chunks(len(t.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t.Data[i] = FromBits(t.DType, getBits(b[i*w:], w))
		}
	})
	return nil
}

func putBits(b []byte, w int, v uint64) {
	switch w {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func getBits(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}
