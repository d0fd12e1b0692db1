package kernels_test

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// modCases are the modifiers alone and in pairs, through the registry's
// flags, at lengths that are not multiples of the tiles: GQA, Sq ≠ Skv,
// both layouts, f16 and bf16.
var modCases = []map[string]string{
	{"window": "40,0", "causal": "true", "seq-q": "150", "seq-kv": "190"},
	{"window": "17,9", "seq-q": "130", "layout": "bshd"},
	{"softcap": "5", "seq-q": "100", "seq-kv": "77", "dtype": "f16"},
	{"alibi": "true", "heads": "4", "heads-kv": "2", "seq-q": "90"},
	{"window": "30,0", "softcap": "3", "causal": "true", "seq-q": "120"},
	{"alibi": "true", "window": "-1,5", "seq-q": "70", "seq-kv": "140", "layout": "bshd"},
	{"window": "0,0", "seq-q": "33"}, // each query sees one key, or none past Skv
	{"doc-lens": "40,1,60,49", "causal": "true", "seq-q": "150"},
	{"prefix": "37", "seq-q": "150", "seq-kv": "170"},
	{"prefix": "64", "softcap": "6", "seq-q": "130", "dtype": "f16"},
	{"doc-lens": "70,30", "alibi": "true", "heads-kv": "2", "seq-q": "100", "layout": "bshd"},
}

// Each case on the interpreter against float64 (kernels' Check), and
// compiled for every target.
func TestAttnModsInterp(t *testing.T) {
	eachProblem(t, "flash-attention", map[string]string{"dim": "32", "batch": "2"}, modCases, func(t *testing.T, _ int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 3)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
	})
}

// Two cases' gfx942 programs, emulated, against float64.
func TestAttnModsEmulated(t *testing.T) {
	eachProblem(t, "flash-attention", map[string]string{"dim": "64"}, []map[string]string{
		{"window": "40,0", "softcap": "4", "causal": "true", "seq-q": "150"},
		{"alibi": "true", "heads": "4", "heads-kv": "1", "seq-q": "70", "seq-kv": "100"},
		{"doc-lens": "33,80,7", "causal": "true", "seq-q": "120"},
	}, func(t *testing.T, _ int, _ map[string]string, p kernels.Problem) { checkEmulated(t, p, 5) })
}

// Without modifiers the kernel is the plain one; the flags' bad values and
// combinations are one-line errors; the backward refuses modifiers at
// Build.
func TestAttnModsRefusals(t *testing.T) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vals map[string]string
		want string
	}{
		{map[string]string{"window": "5"}, "want L,R"},
		{map[string]string{"window": "-1,-1"}, "bounds nothing"},
		{map[string]string{"window": "-2,3"}, "want L,R"},
		{map[string]string{"softcap": "-1"}, "want a positive cap"},
		{map[string]string{"alibi": "true", "splits": "2"}, "run the single program"},
		{map[string]string{"doc-lens": "100,100", "seq-q": "256"}, "must sum to --seq-q 256"},
		{map[string]string{"prefix": "10", "causal": "true"}, "leave --causal out"},
		{map[string]string{"doc-lens": "100,0,156", "seq-q": "256"}, "want positive whole lengths"},
		{map[string]string{"doc-lens": "256", "seq-q": "256", "seq-kv": "300"}, "--seq-kv (300) must equal it"},
	} {
		if _, err := e.Problem(c.vals); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.vals, err, c.want)
		}
	}
	noGrad := kernels.SoftCap(10)
	noGrad.ScoreGrad = nil
	s := kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 64, Skv: 64, Dqk: 32, Dv: 32, DType: tl.BF16, Mods: &noGrad}
	want := "the score modifier (softcap=10) has no derivative"
	if _, err := kernels.AttnBwd(s, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 128}).Build(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("backward with %s: %v", noGrad.Name, err)
	}
}

// Hopper's configs at head dim 128 (a persistent walk with a producer
// warpgroup, ping-pong and the overlap; drawn tiles when causal), with a
// window whose key range starts past the first tile, on the interpreter
// against float64: the walk's tiles each visit their own range of keys.
func TestAttnModsHopperConfigs(t *testing.T) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range []map[string]string{
		{"window": "100,0", "causal": "true", "softcap": "20"},
		{"window": "64,64", "alibi": "true"},
		{"doc-lens": "150,50,200", "causal": "true"},
	} {
		vals["dim"], vals["seq-q"], vals["heads"] = "128", "400", "2"
		p, err := e.Problem(vals)
		if err != nil {
			t.Fatal(err)
		}
		c := kernels.GPUConfigFor(p, "sm_90a")
		fn, err := kernels.Build(p, c, cudagen.Limits("sm_90a"))
		if err != nil {
			t.Fatal(err)
		}
		if ac, _ := c.(kernels.AttnConfig); !ac.WS || !ac.Persistent {
			t.Errorf("%s: config %s is not the walk this test is for", p.Shape(), kernels.ConfigFields(c))
		}
		args := p.Inputs(7)
		if err := interp.Run(fn, args); err != nil {
			t.Fatal(err)
		}
		if r := p.Check(args, 7); !r.OK() {
			t.Errorf("%s (%s): %s", p.Shape(), kernels.ConfigFields(c), r)
		}
	}
}

// A window bounds the key loop (its start depends on the query tile, its
// trip count on the window, not the sequence); soft-capping alone does not.
func TestAttnModsKeyRange(t *testing.T) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vals    map[string]string
		bounded bool
	}{
		{map[string]string{"window": "128,0", "causal": "true"}, true},
		{map[string]string{"window": "128,0", "softcap": "10"}, true},
		{map[string]string{"prefix": "256"}, false},                          // from key 0, to the tile's diagonal
		{map[string]string{"doc-lens": "1000,3096", "causal": "true"}, true}, // from the document's start
		{map[string]string{"softcap": "10"}, false},
	} {
		c.vals["seq-q"] = "4096"
		p, err := e.Problem(c.vals)
		if err != nil {
			t.Fatal(err)
		}
		fn, err := kernels.Build(p, p.DefaultConfig(), ir.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		bounded := false
		ir.Walk(fn.Kernel.Body, func(s ir.Stmt) {
			if f, ok := s.(*ir.For); ok && f.Kind == ir.Pipelined {
				_, constStart := ir.ConstInt(f.Start)
				bounded = bounded || !constStart
			}
		})
		if bounded != c.bounded {
			t.Errorf("%v: key loop bounded by the mask: %v, want %v", c.vals, bounded, c.bounded)
		}
	}
}

// The backward's three programs with modifiers, through the registry, on
// the interpreter against float64's gradients (ref.Attn with the same
// modifiers and the soft cap's derivative); each builds for both CUDA
// targets and gfx942, and one runs emulated on gfx942. Without the soft
// cap's derivative dQ and dK missed by 0.15.
func TestAttnModsBwd(t *testing.T) {
	eachProblem(t, "flash-attention-bwd", map[string]string{"dim": "32", "batch": "2"}, []map[string]string{
		{"window": "30,0", "softcap": "5", "causal": "true", "seq-q": "100", "seq-kv": "130"},
		{"alibi": "true", "prefix": "20", "heads": "4", "heads-kv": "2", "seq-q": "90"},
		{"softcap": "3", "window": "9,9", "seq-q": "70", "layout": "bshd", "dtype": "f16"},
		// Sq and Skv 4 apart put a key tile's first and last queries a
		// few rows inside a query tile: a query range off by a few rows
		// skips a tile the key tile must visit.
		{"prefix": "30", "seq-q": "150", "seq-kv": "154"},
		{"window": "10,2", "seq-q": "150", "seq-kv": "154"},
		{"doc-lens": "60,1,39,30", "seq-q": "130"}, // a document from row 61 sees key tile 64-95
		{"doc-lens": "33,97", "causal": "true", "seq-q": "130"},
		{"doc-lens": "70,60", "softcap": "4", "heads": "4", "heads-kv": "2", "seq-q": "130", "layout": "bshd"},
	}, func(t *testing.T, i int, _ map[string]string, p kernels.Problem) {
		checkInterp(t, p, 4)
		compileTargets(t, p, "sm_80", "sm_90a", "gfx942")
		if i == 0 {
			checkEmulated(t, p, 6)
		}
		// The tiles a mask shows whole left unmasked (WholeTiles).
		c := p.DefaultConfig().(kernels.AttnConfig)
		c.WholeTiles = true
		checkRun(t, p, c, ir.DefaultLimits, 4, "interpreter, whole tiles unmasked", interp.Run)
	})
}

// A masked problem's FLOPs count the pairs the mask leaves: a causal window
// of 2 keys before the diagonal over 8 queries leaves 1+2+3·6 = 21 a head.
func TestAttnModsFLOPs(t *testing.T) {
	e, err := kernels.Lookup("flash-attention")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Problem(map[string]string{"window": "2,0", "causal": "true", "seq-q": "8", "batch": "3", "heads": "2", "dim": "32"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.FLOPs(), 2.0*2*3*21*(32+32); got != want {
		t.Errorf("FLOPs %g, want %g", got, want)
	}
}

// The backward's key tiles visit only the query tiles a mask with a query
// range shows them to: a window's loop runs from and to bounds that
// depend on the key tile; without modifiers it runs to the last tile.
func TestAttnModsBwdQueryRange(t *testing.T) {
	for _, tc := range []struct {
		mods    *kernels.AttnMods
		bounded bool
	}{
		{func() *kernels.AttnMods { m := kernels.SlidingWindow(128, 0, 4096, 4096); return &m }(), true},
		{nil, false},
	} {
		s := kernels.AttnShape{B: 1, H: 2, HKV: 2, Sq: 4096, Skv: 4096, Dqk: 64, Dv: 64, Causal: true, DType: ir.BF16, Mods: tc.mods}
		fn, err := kernels.AttnBwd(s, kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}).Build(ir.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		bounded := false
		ir.Walk(fn.Kernel.Body, func(s ir.Stmt) {
			if f, ok := s.(*ir.For); ok && f.Kind == ir.Pipelined {
				_, constStop := ir.ConstInt(f.Stop)
				bounded = bounded || !constStop
			}
		})
		if bounded != tc.bounded {
			t.Errorf("mods %v: query loop bounded: %v, want %v", tc.mods != nil, bounded, tc.bounded)
		}
	}
}
