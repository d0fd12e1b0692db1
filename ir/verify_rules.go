package ir

import "math"

// Rules whose breach the verifier would otherwise pass on to a later step
// that refuses it (or, worse, runs it wrong): every target refuses these,
// so they are the language's.

// symsBound checks that each symbolic size is a whole dim of some
// parameter: launches bind sizes from the shapes of the tensors passed, so
// a size that is no tensor's dim (or only part of an expression) has no
// value to take.
func (v *verifier) symsBound() {
	bound := map[*Var]bool{}
	for _, p := range v.f.Params {
		for _, d := range p.Shape {
			if x, ok := d.(*Var); ok {
				bound[x] = true
			}
		}
	}
	for _, s := range v.f.Syms {
		if !bound[s] {
			pos := s.Pos
			if pos.File == "" {
				pos = v.f.Pos
			}
			v.errorf("sym", pos, "size %s is not a dim of any parameter, so a launch cannot infer its value; use it as a dim of a tensor passed in", s.Name)
		}
	}
}

// atomicDType: the CUDA backend adds atomically into f32 only (atomicAdd
// on a float; f16 and bf16 would need paired atomics on aligned halves),
// and the interpreter is the backends' definition.
func (v *verifier) atomicDType(pos Pos, r Region) {
	if dt := r.Buf.DType; dt != F32 {
		v.errorf("atomic_add", pos, "destination %s is %s; atomic adds are into f32 tensors only", r.Buf.Name, dt)
	}
}

// parallelFits checks that a Parallel loop's index variables, where they
// index a fragment dim directly, run over no more than that dim: the loop's
// extents lay the fragment out over the threads, so a larger extent would
// touch elements the fragment does not have.
func (v *verifier) parallelFits(op string, pos Pos, b *Buffer, idx []Expr) {
	if b.Scope != Fragment || len(idx) != len(b.Shape) {
		return
	}
	for i, x := range idx {
		lv, ok := x.(*Var)
		if !ok {
			continue
		}
		ext, inLoop := v.parExt[lv]
		d, dok := ConstInt(b.Shape[i])
		if inLoop && dok && int64(ext) > d {
			v.errorf(op, pos, "%s runs over %d points but dim %d of fragment %s has %d", lv.Name, ext, i, b.Name, d)
		}
	}
}

// nestedPipelined refuses a Pipelined loop inside another: a pipelined
// loop's copies are multi-buffered over its own iterations, and a tile
// multi-buffered by the inner loop would be used outside it by the outer
// one's stages (the CUDA backend's "multi-buffered tile used outside its
// pipelined loop").
func (v *verifier) nestedPipelined(f *For) {
	if f.Kind == Pipelined && v.inPipe > 0 {
		v.errorf("pipelined", f.P, "a pipelined loop inside another pipelined loop; make one of them Serial")
	}
}

// parallelPoints checks a Parallel loop's number of points: its index
// variables are i32, and the backends number its points in 32 bits.
func (v *verifier) parallelPoints(pos Pos, extents []int) {
	n := int64(1)
	for _, e := range extents {
		var ok bool
		if n, ok = MulChecked(n, int64(max(e, 1))); !ok || n > math.MaxInt32 {
			v.errorf("parallel", pos, "extents %v make more than 2^31-1 points; a Parallel loop's points are numbered in 32 bits", extents)
			return
		}
	}
}
