package tl

import (
	"fmt"

	"github.com/tilego/tilego/ir"
)

// Tensor is a parameter or an on-chip tile.
type Tensor struct {
	f *Func
	b *ir.Buffer
}

// Buffer returns the IR buffer.
func (t *Tensor) Buffer() *ir.Buffer {
	if t == nil {
		return nil
	}
	return t.b
}

// isNil reports a nil *Tensor or a zero Tensor (never made by NewFunc's
// or Kernel's builders), and records it against op.
func (t *Tensor) isNil(op string, pos ir.Pos) bool {
	if t != nil && t.b != nil && t.f != nil {
		return false
	}
	orphan().errorf(op, pos, "%s", errNilTensor)
	return true
}

const errNilTensor = "nil tensor: make it with In, Out, Scratch, Shared, Fragment, Local or Var"

// Named renames an on-chip tile (the default names are s0, f0, l0, ...);
// names show in the IR dump and generated code.
func (t *Tensor) Named(name string) *Tensor {
	if t.isNil("named", callerPos()) {
		return t
	}
	t.b.Name = name
	return t
}

// WithStrides sets the element strides of a parameter, so one program can
// read several memory layouts (e.g. BSHD and BHSD) with no copy.
func (t *Tensor) WithStrides(strides ...any) *Tensor {
	pos := callerPos()
	if t.isNil("strides", pos) {
		return t
	}
	var s []ir.Expr
	for _, d := range strides {
		x := lift(d)
		if !t.f.check("strides", pos, x) {
			return t
		}
		s = append(s, x.e)
	}
	t.b.Strides = s
	return t
}

// Swizzled sets the layout of a shared tile.
func (t *Tensor) Swizzled(s ir.Swizzle) *Tensor {
	if t.isNil("swizzle", callerPos()) {
		return t
	}
	if t.b.Scope != ir.Shared {
		t.f.errorf("swizzle", callerPos(), "%s is %s; only shared tiles have a swizzle", t.b.Name, t.b.Scope)
	}
	t.b.Swizzle = s
	return t
}

// At reads one element.
func (t *Tensor) At(idx ...any) Expr {
	if t == nil || t.b == nil || t.f == nil {
		return Expr{err: errNilTensor}
	}
	ix, err := t.indices(idx)
	if err != "" {
		return Expr{err: err}
	}
	return Expr{e: &ir.Load{Buf: t.b, Idx: ix}}
}

// Set writes one element: t[idx...] = v.
func (t *Tensor) Set(v any, idx ...any) {
	pos := callerPos()
	if t.isNil("store", pos) {
		return
	}
	ix, err := t.indices(idx)
	if err != "" {
		t.f.errorf("store", pos, "%s", err)
		return
	}
	x := lift(v)
	if t.f.check("store", pos, x) {
		t.f.emit("store", pos, &ir.Store{At: ir.At{P: pos}, Buf: t.b, Idx: ix, Value: x.e})
	}
}

// Val reads a scalar variable (a local of one element).
func (t *Tensor) Val() Expr { return lift(t) }

// Assign writes a scalar variable.
func (t *Tensor) Assign(v any) {
	if t.isNil("store", callerPos()) {
		return
	}
	idx := make([]any, len(t.b.Shape))
	for i := range idx {
		idx[i] = 0
	}
	t.Set(v, idx...)
}

func (t *Tensor) indices(idx []any) ([]ir.Expr, string) {
	if len(idx) != len(t.b.Shape) {
		return nil, fmt.Sprintf("%s has %d dims but is indexed with %d", t.b.Name, len(t.b.Shape), len(idx))
	}
	out := make([]ir.Expr, len(idx))
	for i, v := range idx {
		x := lift(v)
		if x.err != "" {
			return nil, x.err
		}
		if !x.e.Type().IsInt() {
			return nil, fmt.Sprintf("index %d of %s has type %s; want an integer", i, t.b.Name, x.e.Type())
		}
		out[i] = x.e
	}
	return out, ""
}

// span is one dim of a Sub: a tile, a range or everything.
type span struct {
	start  any
	extent int
	all    bool
}

// Tile is the i-th tile of n elements along a dim: [i*n, i*n+n).
func Tile(i any, n int) any { return span{start: lift(i).Mul(n), extent: n} }

// Range is n elements from start.
func Range(start any, n int) any { return span{start: start, extent: n} }

// All is a whole dim.
var All any = span{all: true}

// Region is a box of a tensor, made by Sub.
type Region struct {
	r   ir.Region
	err string
}

// Sub takes a region of a tensor: one spec per dim, each an index (the dim
// is dropped from the tile's shape), Tile, Range or All.
func (t *Tensor) Sub(specs ...any) Region {
	if t == nil || t.b == nil || t.f == nil {
		return Region{err: errNilTensor}
	}
	b := t.b
	if len(specs) != len(b.Shape) {
		return Region{err: fmt.Sprintf("%s has %d dims but Sub got %d specs", b.Name, len(b.Shape), len(specs))}
	}
	r := ir.Region{Buf: b, Start: make([]ir.Expr, len(specs)), Extent: make([]int, len(specs)), Keep: make([]bool, len(specs))}
	for i, s := range specs {
		sp, ok := s.(span)
		if !ok {
			sp = span{start: s, extent: 1}
		} else {
			r.Keep[i] = true
		}
		if sp.all {
			d, ok := ir.ConstInt(b.Shape[i])
			if !ok {
				return Region{err: fmt.Sprintf("All over dim %d of %s needs a constant size; use Range", i, b.Name)}
			}
			sp = span{start: 0, extent: int(d)}
		}
		x := lift(sp.start)
		if x.err != "" {
			return Region{err: x.err}
		}
		if !x.e.Type().IsInt() {
			return Region{err: fmt.Sprintf("start of dim %d of %s has type %s; want an integer", i, b.Name, x.e.Type())}
		}
		r.Start[i], r.Extent[i] = x.e, sp.extent
	}
	return Region{r: r}
}

// region turns a Tensor or Region argument of a tile op into an ir.Region.
func (f *Func) region(op string, pos ir.Pos, v any) (ir.Region, bool) {
	switch v := v.(type) {
	case *Tensor:
		if v == nil || v.b == nil {
			f.errorf(op, pos, "%s", errNilTensor)
			return ir.Region{}, false
		}
		if _, ok := v.b.StaticShape(); !ok {
			f.errorf(op, pos, "%s has a symbolic shape; take a region of it with Sub", v.b.Name)
			return ir.Region{}, false
		}
		return ir.Whole(v.b), true
	case Region:
		if v.err != "" {
			f.errorf(op, pos, "%s", v.err)
			return ir.Region{}, false
		}
		if v.r.Buf == nil {
			f.errorf(op, pos, "empty Region; make one with Sub")
			return ir.Region{}, false
		}
		return v.r, true
	}
	f.errorf(op, pos, "operand is %T; want a *Tensor or a Region", v)
	return ir.Region{}, false
}
