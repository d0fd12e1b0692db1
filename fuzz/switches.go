package fuzz

// Switches turn on constructs the generator leaves out by default because
// they hit known bugs (being fixed elsewhere) or documented refusals of the
// CUDA backend that the verifier does not yet report. Each names the bug;
// turn one on (tilego fuzz --with NAME) to check a fix, and make it the
// default once fixed.
type Switches struct {
	// Known bugs (issue 50, "Known defects to close").
	SplitNSmallBlock bool // wgSplit divides by zero: threads < 128 with the SplitN hint
	GemmK8           bool // a Gemm with K = 8: verified, refused at emit (mma m16n8k16)
	NestedPipelined  bool // a Pipelined loop inside another: "multi-buffered tile used outside its pipelined loop"
	AtomicF16        bool // AtomicAdd into an f16 tensor: verified, refused at emit
	TMASmallRows     bool // sm_90a TMA swizzle bug: 16-bit shared tiles with rows < 8 (or not a multiple of 8) wider than 128 bytes, loaded in a Pipelined loop
	SingleElemCopy   bool // vecWidth index -1 on a copy between single elements
	SharedNoDims     bool // bufLayout index -1: a shared tile with no dims
	ParallelPastFrag bool // a Parallel loop whose extents exceed the fragment it writes
	UnboundSym       bool // a Sym no parameter binds
	IntOverflow      bool // i32 index arithmetic that overflows (the interpreter computes it in float64, the GPU wraps)

	// Emitter refusals the verifier accepts (the verifier should take the
	// target's rules: issue 50, "Build takes the target's limits").
	FragLocalCopy bool // copies between fragments and locals: "not supported"
	ReduceShared  bool // reductions with a shared source or destination: "reduces fragments into fragments"

	// Found by this fuzzer (FINDINGS.md).
	PipelineLoadUsedOutside bool // a shared tile loaded from global in a Pipelined loop and used outside it: "multi-buffered tile used outside its pipelined loop"
	UnboundFamilies         bool // fragments related only by a reduction or a later loop, seeded apart: "has layout X, but reducing Y gives Z"
	ChainMixedPaths         bool // P = S in registers as the A of a second Gemm where sm_90a takes mma.sync for one Gemm (an unswizzled operand) and wgmma for the other: "fragment P needs layout X here, but the gemm needs Y"
}

// byName maps the CLI's names (--with) to the switches.
func (s *Switches) byName() map[string]*bool {
	return map[string]*bool{
		"splitn-small-block":         &s.SplitNSmallBlock,
		"gemm-k8":                    &s.GemmK8,
		"nested-pipelined":           &s.NestedPipelined,
		"atomic-f16":                 &s.AtomicF16,
		"tma-small-rows":             &s.TMASmallRows,
		"single-elem-copy":           &s.SingleElemCopy,
		"frag-local-copy":            &s.FragLocalCopy,
		"reduce-shared":              &s.ReduceShared,
		"shared-no-dims":             &s.SharedNoDims,
		"parallel-past-fragment":     &s.ParallelPastFrag,
		"unbound-sym":                &s.UnboundSym,
		"int-overflow":               &s.IntOverflow,
		"pipeline-load-used-outside": &s.PipelineLoadUsedOutside,
		"unbound-families":           &s.UnboundFamilies,
		"chain-mixed-paths":          &s.ChainMixedPaths,
	}
}

// Set turns on the switch called name.
func (s *Switches) Set(name string) bool {
	p, ok := s.byName()[name]
	if ok {
		*p = true
	}
	return ok
}

// Names of every switch.
func SwitchNames() []string {
	var s Switches
	var out []string
	for n := range s.byName() {
		out = append(out, n)
	}
	return out
}
