package cudagen

import (
	"fmt"
	"github.com/tilego/tilego/compiler/infer"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// crossWarp reports whether reducing dim of l combines values held by
// different warps (which then meet in shared memory).
func crossWarp(l *layout.Fragment, dim int) bool {
	if l == nil {
		return false
	}
	div := 1
	for _, d := range l.Thread {
		if d.Dim == dim && d.Size > 1 && div*d.Size > 32 {
			return true
		}
		div *= d.Size
	}
	return false
}

func reduceOps(k ir.ReduceKind) (init, fold, combine string) {
	switch k {
	case ir.ReduceMax:
		return "-tl::inf()", "fmaxf(%s, %s)", "fmaxf(%s, %s)"
	case ir.ReduceMin:
		return "tl::inf()", "fminf(%s, %s)", "fminf(%s, %s)"
	case ir.ReduceAbsMax:
		return "0.0f", "fmaxf(%s, fabsf(%s))", "fmaxf(%s, %s)"
	}
	return "0.0f", "(%s + %s)", "(%s + %s)"
}

// reduce folds a fragment along one dim: first over each thread's own
// registers, then across the lanes of a warp with shuffles, then across
// warps through shared memory when the dim spans warps.
func (e *emitter) reduce(s *ir.Reduce) {
	if s.Src.Scope != ir.Fragment || s.Dst.Scope != ir.Fragment {
		e.fail(errAt("reduce_"+s.Kind.String(), s.P, "the CUDA backend reduces fragments into fragments; %s is %s and %s is %s", s.Src.Name, s.Src.Scope, s.Dst.Name, s.Dst.Scope))
		return
	}
	ls, ld := e.c.layouts[s.Src], e.c.layouts[s.Dst]
	keep := infer.KeepAllBut(len(ls.Shape), s.Dim)
	if !ls.Project(keep).Equal(ld) {
		e.fail(errAt("reduce_"+s.Kind.String(), s.P, "%s has layout %s, but reducing %s gives %s", s.Dst.Name, ld, s.Src.Name, ls.Project(keep)))
		return
	}
	init, fold, combine := reduceOps(s.Kind)
	nd := ld.NumRegs()
	acc := e.fresh("red")
	e.open("")
	e.line("float %s[%d];", acc, nd)
	e.line("#pragma unroll")
	e.line("for (int r = 0; r < %d; ++r) %s[r] = %s;", nd, acc, init)
	e.line("#pragma unroll")
	e.open("for (int r = 0; r < %d; ++r)", ls.NumRegs())
	slot := fmt.Sprintf("%s[%s]", acc, regExpr(ls.RegMap(keep), "r"))
	e.line("%s = %s;", slot, fmt.Sprintf(fold, slot, load(s.Src.DType, fragGet(s.Src, "r"))))
	e.close()
	// Lanes that differ along dim hold partial results: butterfly them.
	div := 1
	var warpDigits []layout.Digit
	var warpDivs []int
	for _, d := range ls.Thread {
		if d.Dim == s.Dim && d.Size > 1 {
			// The lanes of the digit butterfly; a digit that reaches past
			// the warp leaves its upper part to shared memory.
			m := div
			for ; m < div*d.Size && m < 32; m *= 2 {
				e.line("#pragma unroll")
				e.line("for (int r = 0; r < %d; ++r) %s[r] = %s;", nd, acc, fmt.Sprintf(combine, acc+"[r]", fmt.Sprintf("tl::shfl_xor(%s[r], %d)", acc, m)))
			}
			if rest := div * d.Size / m; rest > 1 {
				warpDigits = append(warpDigits, layout.Digit{Size: rest, Dim: d.Dim, Stride: d.Stride})
				warpDivs = append(warpDivs, m)
			}
		}
		div *= d.Size
	}
	if len(warpDigits) > 0 {
		e.crossWarpReduce(acc, nd, warpDigits, warpDivs, combine)
	}
	e.line("#pragma unroll")
	if s.Clear {
		e.line("for (int r = 0; r < %d; ++r) %s", nd, fragSet(s.Dst, "r", e.store(s.Dst.DType, acc+"[r]")))
	} else {
		old := load(s.Dst.DType, fragGet(s.Dst, "r"))
		e.line("for (int r = 0; r < %d; ++r) %s", nd, fragSet(s.Dst, "r", e.store(s.Dst.DType, fmt.Sprintf(combine, old, acc+"[r]"))))
	}
	e.close()
}

// crossWarpReduce combines partials across the warps that differ only in
// the given thread digits, through the scratch area of shared memory.
func (e *emitter) crossWarpReduce(acc string, nd int, ds []layout.Digit, divs []int, combine string) {
	e.beforeSharedWrite()
	buf := fmt.Sprintf("((float*)(smem + %d))", e.c.smem.scratch)
	e.line("#pragma unroll")
	e.line("for (int r = 0; r < %d; ++r) %s[tid * %d + r] = %s[r];", nd, buf, nd, acc)
	e.sync()
	// Thread tid's partner with digit values v: tid - own digits + v.
	own := ""
	total := 1
	for i, d := range ds {
		own += fmt.Sprintf(" - (tid / %d %% %d) * %d", divs[i], d.Size, divs[i])
		total *= d.Size
	}
	e.open("for (int o = 0; o < %d; ++o)", total)
	partner := "tid" + own
	rest := "o"
	for i, d := range ds {
		partner += fmt.Sprintf(" + (%s %% %d) * %d", rest, d.Size, divs[i])
		rest = fmt.Sprintf("(%s / %d)", rest, d.Size)
	}
	e.line("const int p = %s;", partner)
	e.line("if (p == tid) continue;")
	e.line("#pragma unroll")
	e.line("for (int r = 0; r < %d; ++r) %s[r] = %s;", nd, acc, fmt.Sprintf(combine, acc+"[r]", fmt.Sprintf("%s[p * %d + r]", buf, nd)))
	e.close()
	e.read = true
	e.sync()
}
