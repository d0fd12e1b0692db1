package cudagen

import (
	"slices"

	"github.com/tilego/tilego/ir"
)

// Walk variables. A persistent walk (a serial loop around the kernel's
// pipelined loop) computes each iteration's tile from its loop variable;
// inlined, that index math is emitted again at every use, in the
// producer's copies and in the consumers' masks and stores, and nvcc keeps
// the pieces it shares live across the loop. A scalar variable (tl's Var)
// set at the top of the walk's body from values any thread can compute
// holds it once an iteration. The consumers set it as the program says;
// the producer sets it too, at the top of its own walk iteration, so its
// copies may address the walk's tiles through it (pureExpr). Without a
// walk, such variables set in the kernel's body before its pipelined loop
// (a varlen sequence's offsets) are set by the producer before its loop,
// those its bounds and copies read (producerSets). Without a producer,
// variables the kernel sets before a serial loop around the pipelined
// loop count as well (a varlen sequence's offsets around a GQA group's
// loop).

// walkVars are the walk's variables, in the order they are set, or none.
type walkVars struct {
	outer *ir.For     // the walk; nil for variables set before a top-level loop
	sets  []*ir.Store // the statements the producer runs again
	vars  map[*ir.Buffer]bool
}

// walkVars finds them once: the kernel's one pipelined loop is a statement
// of a top-level serial loop (or of the kernel's body), and before it that
// loop's body (or the kernel's) sets a
// one-element local buffer, written nowhere else, from an expression that
// reads only globals that are not outputs and earlier walk variables.
func (c *compilation) walkVars() *walkVars {
	if c.wv != nil {
		return c.wv
	}
	c.wv = &walkVars{vars: map[*ir.Buffer]bool{}}
	body := c.f.Kernel.Body
	var pipelined []*ir.For
	ir.Walk(body, func(s ir.Stmt) {
		if f, ok := s.(*ir.For); ok && f.Kind == ir.Pipelined {
			pipelined = append(pipelined, f)
		}
	})
	if len(pipelined) != 1 {
		return c.wv
	}
	outer, _ := loopNesting(body)
	o := outer[pipelined[0]]
	scan := body
	if o != nil {
		scan = o.Body
	} else if !slices.Contains(body, ir.Stmt(pipelined[0])) {
		return c.wv
	}
	writes := writeCounts(body)
	set := func(st ir.Stmt) (*ir.Store, bool) { // st sets a variable
		s, ok := st.(*ir.Store)
		if !ok || s.Buf.Scope != ir.Local || writes[s.Buf] != 1 || !oneElement(s.Buf) || !pureWith(s.Value, c.wv.vars) {
			return nil, false
		}
		return s, true
	}
	if o != nil && !c.f.Kernel.WarpSpecialize {
		// Variables the kernel sets before the serial loop count too (a
		// varlen sequence's offsets around a GQA group's loop): every
		// thread has set them before any copy reads them. A producer
		// warpgroup would need them set on its side as well.
		for _, st := range body {
			if st == ir.Stmt(o) {
				break
			}
			if s, ok := set(st); ok {
				c.wv.vars[s.Buf] = true
			}
		}
	}
	for _, st := range scan {
		if st == ir.Stmt(pipelined[0]) {
			break
		}
		if s, ok := set(st); ok {
			c.wv.sets = append(c.wv.sets, s)
			c.wv.vars[s.Buf] = true
		}
	}
	if len(c.wv.sets) > 0 {
		c.wv.outer = o
	}
	return c.wv
}

// oneElement: b holds a single element.
func oneElement(b *ir.Buffer) bool {
	shape, ok := b.StaticShape()
	if !ok {
		return false
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n == 1
}

// writeCounts counts the statements that write each buffer (walk loads and
// walk variables need tiles and variables one statement writes).
func writeCounts(body []ir.Stmt) map[*ir.Buffer]int {
	n := map[*ir.Buffer]int{}
	ir.Walk(body, func(s ir.Stmt) {
		switch s := s.(type) {
		case *ir.Store:
			n[s.Buf]++
		case *ir.Copy:
			n[s.Dst.Buf]++
		case *ir.AtomicAdd:
			n[s.Dst.Buf]++
		case *ir.Ticket:
			n[s.Counter.Buf]++
			n[s.Dst.Buf]++
		case *ir.Signal:
			n[s.Counter.Buf]++
		case *ir.Gemm:
			n[s.C.Buf]++
		case *ir.Fill:
			n[s.Dst.Buf]++
		case *ir.Reduce:
			n[s.Dst]++
		}
	})
	return n
}

// walkSets emits, in the producer's walk iteration, the walk's variables.
func (e *emitter) walkSets(o *ir.For) {
	if wv := e.c.walkVars(); wv.outer == o {
		for _, s := range wv.sets {
			e.storeStmt(s)
		}
	}
}

// producerSets emits, before the producer's loop f (no walk), the kernel
// variables its bounds and copies read, and those they are set from.
func (e *emitter) producerSets(f *ir.For, l *tmaLoop) {
	wv := e.c.walkVars()
	if wv.outer != nil || len(wv.sets) == 0 {
		return
	}
	need := map[*ir.Buffer]bool{}
	note := func(x ir.Expr) {
		ir.WalkExpr(x, func(x ir.Expr) {
			if ld, ok := x.(*ir.Load); ok && wv.vars[ld.Buf] {
				need[ld.Buf] = true
			}
		})
	}
	note(f.Start)
	note(f.Stop)
	for cp := range l.copies {
		for _, x := range cp.Src.Start {
			note(x)
		}
	}
	var sets []*ir.Store
	for i := len(wv.sets) - 1; i >= 0; i-- { // later variables are set from earlier ones
		if s := wv.sets[i]; need[s.Buf] {
			note(s.Value)
			sets = append(sets, s)
		}
	}
	for i := len(sets) - 1; i >= 0; i-- {
		e.storeStmt(sets[i])
	}
}
