package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/tl"
)

// walkProgram is a persistent walk over 8 tiles of A, its tile held in a
// variable t set from init(g, i); then more(k, t) runs before the
// pipelined loop, which copies the tile's rows into shared memory and
// from there to O.
func walkProgram(init func(g, i tl.Expr) tl.Expr, more func(k *tl.Block, t *tl.Tensor)) *tl.Func {
	f := tl.NewFunc("walk")
	A := f.In("A", tl.BF16, 8, 256, 64)
	O := f.Out("O", tl.BF16, 8, 256, 64)
	f.Kernel(tl.Grid(2), 128, func(k *tl.Block) {
		g, _, _ := k.Idx()
		k.WarpSpecialize()
		s := k.Shared(tl.BF16, 64, 64)
		k.Serial(4, func(i tl.Expr) {
			t := k.Var(tl.I32, init(g, i)).Named("t")
			if more != nil {
				more(k, t)
			}
			k.Pipelined(4, 2, func(j tl.Expr) {
				k.Copy(A.Sub(t.Val(), tl.Tile(j, 64), tl.All), s)
				k.Copy(s, O.Sub(t.Val(), tl.Tile(j, 64), tl.All))
			})
		})
	})
	return f
}

// A variable the walk sets once an iteration from values any thread can
// compute is the producer's too; one set twice, or from shared memory, is
// not, and a kernel with no walk has none.
func TestWalkVars(t *testing.T) {
	tile := func(g, i tl.Expr) tl.Expr { return g.Add(i.Mul(2)) }
	for _, tc := range []struct {
		name string
		f    *tl.Func
		want []string // the walk variables, in the order set
	}{
		{"tile index", walkProgram(tile, nil), []string{"t"}},
		{"set twice", walkProgram(tile, func(k *tl.Block, t *tl.Tensor) { t.Assign(t.Val().Add(0)) }), nil},
		{"from another", walkProgram(tile, func(k *tl.Block, t *tl.Tensor) { k.Var(tl.I32, t.Val().Mul(3)).Named("u") }), []string{"t", "u"}},
		{"from shared memory", walkProgram(tile, func(k *tl.Block, t *tl.Tensor) {
			sh := k.Shared(tl.I32, 1)
			k.Var(tl.I32, sh.At(0)).Named("u")
		}), []string{"t"}},
		{"flash attention walk", kernels.FlashAttention(kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 512, Skv: 512, Dqk: 128, Dv: 128, DType: ir.BF16, Causal: true},
			kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true, Persistent: true}), []string{"tile_b", "tile_h", "tile_m"}},
		{"no walk", kernels.FlashAttention(kernels.AttnShape{B: 2, H: 4, HKV: 4, Sq: 512, Skv: 512, Dqk: 128, Dv: 128, DType: ir.BF16},
			kernels.AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256, WS: true}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := tc.f.Build()
			if err != nil {
				t.Fatal(err)
			}
			c := &compilation{f: fn}
			var got []string
			for _, s := range c.walkVars().sets {
				got = append(got, s.Buf.Name)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("walk variables %q, want %q", got, tc.want)
			}
		})
	}
}

// The producer sets the walk's variables at the top of its own walk
// iteration, before it issues the tile's loads through them.
func TestWalkVarsProducer(t *testing.T) {
	p := compileFunc(t, walkProgram(func(g, i tl.Expr) tl.Expr { return g.Add(i.Mul(2)) }, nil), "sm_90a")
	src := p.Source
	set := "t_[(0)] = (int)("
	producer := strings.Index(src, "if (tid == 128)")
	if producer < 0 || strings.Count(src, set) != 2 {
		t.Fatalf("want a producer and t set twice (producer, consumers):\n%s", src)
	}
	first, load := strings.Index(src, set), strings.Index(src, "tl::tma_load_3d(")
	if first < producer || load < first || !strings.Contains(src[load:], "t_[(0)]") {
		t.Errorf("the producer does not set t before loading through it:\n%s", src)
	}
}

// A variable the kernel sets before a serial loop lets the pipelined loop
// inside it load ahead through it; with a producer warpgroup, which would
// need it set on its side too, it does not.
func TestKernelVarsBeforeSerialLoop(t *testing.T) {
	for _, ws := range []bool{false, true} {
		fn, err := testprog.OffsetBeforeSerialLoop(ws).Build()
		if err != nil {
			t.Fatal(err)
		}
		c := &compilation{f: fn}
		var loop *ir.For
		ir.Walk(fn.Kernel.Body, func(s ir.Stmt) {
			if f, ok := s.(*ir.For); ok && f.Kind == ir.Pipelined {
				loop = f
			}
		})
		if got := len(c.hoistable(loop)); got != map[bool]int{false: 1, true: 0}[ws] {
			t.Errorf("ws %v: %d copies load ahead, want %d", ws, got, map[bool]int{false: 1, true: 0}[ws])
		}
	}
}
