package cudagen

import (
	"regexp"
	"strings"

	"github.com/tilego/tilego/ir"
)

// The generated code declares names of its own (the thread index, loop
// counters, temporaries numbered by emitter.fresh, names derived from a
// tile's), in the same scopes as the program's tensors and sizes. A
// program that named a fragment "tid" or "sum", or a parameter "lane",
// would redeclare or shadow one of them: a compile error, or a wrong
// value where the inner name hides the outer. emitSafeNames emits such a
// tensor or size with "_" appended, which no name of the emitter's own
// ends with (TestGeneratedNames checks this on the library's programs).

// generatedNames are the names the emitter declares or reads besides the
// program's own: kernel-wide ones, helpers' and fixed temporaries'.
var generatedNames = map[string]bool{}

func init() {
	for _, n := range []string{
		// kernel-wide
		"tid", "warp", "lane", "smem", "wg", "bx", "by", "bz", "num_sms", "tl",
		// fixed temporaries of loops, copies, reductions, walks and splits
		"r", "it", "c", "j", "a", "t", "p", "q", "x", "s", "v", "o", "ks", "idx", "val", "vec", "part", "dot", "ok",
		"lo", "hi", "d", "da", "db", "desc", "scale_d", "group", "half", "mr", "next", "ones", "pid", "pol", "rb", "ring",
		"size", "wl", "wm0", "ticket", "crank", "kk", "walk_counter",
		// CUDA and HIP built-ins the generated code reads
		"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "uint4", "uint2", "float2", "float4",
		"half2", "int4", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t",
	} {
		generatedNames[n] = true
	}
	for _, n := range cxxKeywords {
		generatedNames[n] = true
	}
}

// cxxKeywords are C++'s reserved words (and CUDA's qualifiers): no
// program name may be one.
var cxxKeywords = []string{
	"alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
	"constexpr", "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast",
	"else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
	"int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private",
	"protected", "public", "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static",
	"static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
	"typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
	"__global__", "__device__", "__shared__", "__restrict__", "__forceinline__", "__launch_bounds__",
}

// generatedShape matches the shapes of the emitter's made-up names:
// emitter.fresh's (a prefix and a number, "c3", "red12", "cp4"), names it
// derives from those or from a tile's ("cp4_base", "acc_v7"), its
// helpers' ("wgmma_m64n128k16_ss_bf16") and the library's loop variables
// ("i3", "k0"), which tl names.
var generatedShape = regexp.MustCompile(`^(?:(?:c|t|w|i|k|red|gi|gj|gp|pf|cp)[0-9]+(?:_\w*)?|(?:ga|gb|da|db)_\w*|(?:wgmma|mma|mfma)_\w*|\w+_(?:v[0-9]+|late|n))$`)

// reservedName reports whether a program's tensor or size named n would
// meet a name of the generated code's. A name ending in "_" never does.
func reservedName(n string) bool {
	return !strings.HasSuffix(n, "_") && (generatedNames[n] || generatedShape.MatchString(n))
}

// emitSafeNames emits c's program with its parameters', sizes' and
// allocations' reserved names renamed, "_" appended until the name is not
// taken, and gives them their own names back after: the program, and the
// messages of the passes before, keep the names the user gave. Loop
// variables and block indices are tl's, named clear of the emitter's.
func emitSafeNames(c *compilation) error {
	f := c.f
	taken := map[string]bool{}
	var bufs []*ir.Buffer
	bufs = append(bufs, f.Params...)
	if f.Kernel != nil {
		bufs = append(bufs, f.Kernel.Allocs...)
	}
	for _, b := range bufs {
		taken[b.Name] = true
	}
	for _, v := range f.Syms {
		taken[v.Name] = true
	}
	rename := func(n string) string {
		if !reservedName(n) {
			return n
		}
		m := n + "_"
		for taken[m] {
			m += "_"
		}
		taken[m] = true
		return m
	}
	type saved struct {
		name *string
		was  string
	}
	var restore []saved
	for _, b := range bufs {
		restore = append(restore, saved{&b.Name, b.Name})
		b.Name = rename(b.Name)
	}
	for _, v := range f.Syms {
		restore = append(restore, saved{&v.Name, v.Name})
		v.Name = rename(v.Name)
	}
	defer func() {
		for _, r := range restore {
			*r.name = r.was
		}
	}()
	return emitPass(c)
}
