package fuzz

// Switches turn on constructs of the generator. Defaults has those on
// that every target either compiles or refuses at the op's file:line; the
// others are off: each says why.
type Switches struct {
	// Bugs found and fixed; on by default, so they stay fixed.
	SplitNSmallBlock        bool // wgSplit divided by zero: threads < 128 with the SplitN hint
	TMASmallRows            bool // 16-bit shared tiles of rows not a multiple of 8 over several panels, loaded by TMA with the wrong swizzle (sm_90a)
	SingleElemCopy          bool // vecWidth indexed -1 on a copy between single elements
	IntOverflow             bool // i32 index arithmetic that overflows (the interpreter computed it in float64; the GPU wraps)
	PipelineLoadUsedOutside bool // a tile a Pipelined loop loads ahead, used outside the loop: "multi-buffered tile used outside its pipelined loop"

	// Refused by a target at the op's file:line (Build with its limits
	// refuses them too), counted as refusals. The first three are off by
	// default: each is one known rule, which they would hit in one program
	// of ten, checked by no other target.
	GemmK8          bool // a Gemm with K = 8: neither mma m16n8k16 nor wgmma
	FragLocalCopy   bool // copies between fragments and locals
	ReduceShared    bool // reductions with a shared source or destination
	UnboundFamilies bool // fragments related only by a reduction or a later loop, seeded apart: "needs layout X here, but ... needs Y"
	ChainMixedPaths bool // P = S in registers as the A of a second Gemm where sm_90a takes mma.sync for one Gemm and wgmma for the other

	// Off: SharedNoDims is refused by the CUDA target as the others above,
	// but so often (a third of the programs) that it crowds them out; the
	// rest are invalid programs, which the verifier refuses.
	SharedNoDims     bool // a shared tile with no dims
	NestedPipelined  bool // a Pipelined loop inside another
	AtomicF16        bool // AtomicAdd into an f16 tensor
	ParallelPastFrag bool // a Parallel loop whose extents exceed the fragment it writes
	UnboundSym       bool // a Sym no parameter binds
}

// Defaults are the switches tilego fuzz and the tests start from.
func Defaults() Switches {
	return Switches{SplitNSmallBlock: true, TMASmallRows: true, SingleElemCopy: true, IntOverflow: true, PipelineLoadUsedOutside: true,
		UnboundFamilies: true, ChainMixedPaths: true}
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
