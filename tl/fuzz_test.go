package tl_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// FuzzBuild drives the builder with arguments drawn from the fuzzer's
// bytes (shapes of every size and sign, every scope and dtype, nil
// tensors and zero handles, ops in any order, indices out of range) and
// checks that nothing panics: no tl call, Build, a second Verify, the
// printer, nor the interpreter on what Build accepts (small programs only,
// and a panic the interpreter recovers from counts as one).
func FuzzBuild(f *testing.F) {
	for _, seed := range []string{
		"", "\x00", "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a",
		"gemm\x00\x01\x02copy\xff\xfe", "\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0",
		// Programs Build accepts (found by a random search), so that the
		// fuzzer starts from ones the interpreter runs.
		"\x01\x00\x01\x83\x02\x05\xbf\xfc\x03<\xdd\x00\x05\xf5\xcc\n\x96\x8bc\x1e\x98\x02\x03\x05\x00\x86aI\r\x06\x03\x02\x93\xfdu",
		"\x05\a\xb0\xe9\xa3\x02\x03\x80\x06\x05\xb6\xc5\x01\x99\x7f\xa4\x06\a\x02\x05\a\x05\a\xfc\xde\x00\x05\x00\x02_\x03\x02\x04\xc6_ć\x06\x04\x04\x02\xa2\xf8\xea\x01\x00Y\x9e{\xb80\a*",
		"\a\x03\xb6\x99\x03\r\x01\a\x00\x02\x03\x00\x04\xbb\xbe'\x02\x00}\x04\xe1\xbf?\x04\xc2\x02\x05\x96\x03\a\xab\xad\x06%0\x06\x05\x94\x85\xbc\x02\x03=\a;\x02\f\x17\a\x03\x00\x04\x01\x9e\x01\xe2\x00\xb8\x02Y\x03\x02D\x02\x03\x05\x03\xfcr",
		"\x06\x06\x01\x06\x02\xc3\x13\x04\x04-\x01\x06\x06\x00\x04\x04\a\xfc\xab\xd5[\x04\xa1\x00\x03\x01\x03\xd3\x05\a\x06\x05\x01\x02\x13\x03\x01\xa9\xcc\x05\xce\xfa\x02\x02\x04\xdb\x03\xbe\xab\x1a\x04\xf1\xe0\x98\x04\x00\x00",
		"\x05\x06'\x03\x00\x02\x01\aX\r\x1cPϽӤ\xd0)\xa1\xb7\x02X\x01\a\x01\x00\x02\x00\x01\xa1K\x00\x00J'\x01k\x05\x02n\x00\xf3\x06\x01\x03\xc7.\x03\x06\x05\x00\x02\x00\x05\x01\x01\x03\xcc\x05\a\x05#\x02T\x88\a1\x1eP\x03\x04(\x00\xa2\x06",
		"\x01\xf1\x8e\x06\n;\xfe\x05\x01t\x05\x8b\x05\xce\f\x05\x055\x14\x00\xfe\xfc\xe0\xcb\x1d\xbc\x01\x03\x05\xb6\x00\x03\xb4\x81\x0f\xee\x10\x01\x00\x03\x05\xf7\xbd\x03\x05\x96/\x00\xdc",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		g := &gen{data: data}
		fn := g.program()
		p, err := fn.Build(g.limits())
		if d := time.Since(start); d > 2*time.Second { // a builder or verifier step that blows up
			t.Fatalf("building took %v", d)
		}
		if err != nil {
			var list ir.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Build error %T is not a non-empty ir.ErrorList: %v", err, err)
			}
			_ = err.Error()
			return
		}
		if err := ir.Verify(p, ir.DefaultLimits); err != nil {
			_ = err.Error() // the default limits may be tighter than g's
		}
		_ = p.String()
		g.run(t, p)
		if d := time.Since(start); d > 10*time.Second { // past the run's time guard
			t.Fatalf("the run took %v", d)
		}
	})
}

// gen turns bytes into choices; past their end every choice is 0.
type gen struct {
	data  []byte
	pos   int
	fn    *tl.Func
	syms  []tl.Expr
	ts    []*tl.Tensor // every tensor and tile made so far, and nils
	depth int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return g.data[g.pos-1]
}

func (g *gen) intn(n int) int { return int(g.byte()) % n }
func (g *gen) coin() bool     { return g.byte()&1 == 1 }

// rare is true once in n choices (never on a 0 byte, so that the bytes'
// end, all zeros, builds a plain program).
func (g *gen) rare(n int) bool { return g.intn(n) == n-1 }

// size is a dim or extent: mostly small, sometimes 0, negative or huge.
func (g *gen) size() int {
	sizes := []int{1, 2, 4, 8, 16, 32, 64, 3, 7, 128, 0, -1, -64, 256, 1 << 20, 1 << 31, 1 << 32, math.MaxInt, math.MinInt, 1 << 62}
	i := g.intn(len(sizes) * 2)
	if i >= len(sizes) {
		i = i % 7 // the small ones twice as often
	}
	return sizes[i]
}

func (g *gen) dtype() tl.DType {
	types := []tl.DType{tl.F32, tl.F16, tl.BF16, tl.I32, tl.F32, tl.I64, tl.Bool, tl.F8E4M3, tl.F8E5M2, ir.Invalid, tl.DType(9), tl.DType(200)}
	return types[g.intn(len(types))]
}

// value is an operand for an expression: a Go value, a size, an index
// variable or another expression.
func (g *gen) value(vars []tl.Expr) any {
	switch g.intn(24) {
	case 1:
		return g.size()
	case 2:
		return float64(g.size()) / 3
	case 3:
		return g.coin()
	case 4, 5, 6, 7:
		if len(vars) > 0 {
			return vars[g.intn(len(vars))]
		}
	case 8:
		if len(g.syms) > 0 {
			return g.syms[g.intn(len(g.syms))]
		}
	case 9:
		return g.tensor() // a Var reads as a scalar; others are errors
	case 10, 11:
		if t := g.tensor(); t != nil && len(vars) > 0 {
			idx := make([]any, len(t.Buffer().Shape))
			if g.rare(6) {
				idx = idx[:g.intn(len(idx)+1)]
			}
			for i := range idx {
				idx[i] = vars[g.intn(len(vars))]
			}
			return t.At(idx...)
		}
	case 12, 13, 14:
		if g.depth < 4 {
			g.depth++
			defer func() { g.depth-- }()
			return g.expr(vars)
		}
	case 23:
		return tl.Expr{} // the zero Expr
	}
	return g.intn(8)
}

func (g *gen) expr(vars []tl.Expr) tl.Expr {
	x := tl.Int(0)
	if v, ok := g.value(vars).(tl.Expr); ok {
		x = v
	} else {
		x = x.Add(v)
	}
	y := g.value(vars)
	switch g.intn(16) {
	case 0:
		return x.Sub(y)
	case 1:
		return x.Mul(y)
	case 2:
		return x.Div(y)
	case 3:
		return x.Mod(y)
	case 4:
		return x.Lt(y)
	case 5:
		return x.Eq(y).And(x.Ne(y))
	case 6:
		return tl.Min(x, y)
	case 7:
		return tl.CeilDiv(x, y)
	case 8:
		return tl.Exp2(x)
	case 9:
		return tl.Cast(x, g.dtype())
	case 10:
		return tl.Select(x.Ge(0), x, y)
	case 11:
		return x.Neg()
	case 12:
		return tl.Abs(x).Or(x)
	case 13:
		return tl.Max(x, y)
	}
	return x.Add(y)
}

func (g *gen) tensor() *tl.Tensor {
	if len(g.ts) == 0 || g.rare(32) {
		return nil
	}
	return g.ts[g.intn(len(g.ts))]
}

// operand is a tile operand: a tensor, a region of one, or junk.
func (g *gen) operand(vars []tl.Expr) any {
	t := g.tensor()
	switch g.intn(24) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return t
	case 22:
		return tl.Region{}
	case 23:
		return g.intn(3)
	}
	if t == nil {
		return t.Sub() // a nil tensor's region
	}
	n := len(t.Buffer().Shape)
	if g.rare(8) {
		n = g.intn(4)
	}
	specs := make([]any, n)
	for i := range specs {
		switch g.intn(6) {
		case 0, 1:
			specs[i] = tl.All
		case 2:
			specs[i] = tl.Tile(g.value(vars), g.size())
		case 3:
			specs[i] = tl.Range(g.value(vars), g.size())
		default:
			specs[i] = g.value(vars)
		}
	}
	return t.Sub(specs...)
}

func (g *gen) dims() []int {
	d := make([]int, 1+g.intn(3))
	if g.rare(10) {
		d = d[:0]
	}
	for i := range d {
		d[i] = g.size()
	}
	return d
}

func (g *gen) program() *tl.Func {
	f := tl.NewFunc("fuzz")
	if g.rare(20) {
		f = nil
	}
	g.fn = f
	for range g.intn(3) {
		g.syms = append(g.syms, f.Sym("n"+string(rune('a'+len(g.syms)))))
	}
	for i := range g.intn(5) {
		shape := make([]any, g.intn(4))
		for j := range shape {
			if len(g.syms) > 0 && (j == 0 || g.coin()) {
				shape[j] = g.syms[(i+j)%len(g.syms)]
			} else {
				shape[j] = g.size()
			}
		}
		name := "P" + string(rune('A'+i))
		var t *tl.Tensor
		switch g.intn(3) {
		case 0:
			t = f.In(name, g.dtype(), shape...)
		case 1:
			t = f.Out(name, g.dtype(), shape...)
		default:
			t = f.Scratch(name, g.dtype(), shape...)
		}
		if g.rare(4) {
			st := make([]any, len(shape))
			for j := range st {
				st[j] = g.value(nil)
			}
			t.WithStrides(st...)
		}
		g.ts = append(g.ts, t)
	}
	grid := make([]any, (1+g.intn(5))%5)
	for i := range grid {
		grid[i] = 1
		if g.coin() {
			grid[i] = g.value(nil)
		}
	}
	threads := []int{128, 256, 32, 64, 0, -32, 100, 2048, 384}[g.intn(9)]
	f.Kernel(grid, threads, g.body)
	if g.rare(30) {
		f.Kernel(grid, threads, g.body) // a second kernel
	}
	return f
}

func (g *gen) limits() ir.Limits {
	if !g.rare(4) {
		return ir.DefaultLimits
	}
	return ir.Limits{MaxSharedBytes: g.size(), MaxThreads: g.size()}
}

// body builds a kernel body: tiles, then ops in random order.
func (g *gen) body(k *tl.Block) {
	if g.rare(30) {
		k = nil
	}
	bx, by, bz := k.Idx()
	vars := []tl.Expr{bx, by, bz}
	for range g.intn(6) {
		dt, dims := g.dtype(), g.dims()
		var t *tl.Tensor
		switch g.intn(4) {
		case 0:
			t = k.Shared(dt, dims...)
			if g.rare(3) {
				t.Swizzled(ir.Swizzle(g.intn(7)))
			}
		case 1:
			t = k.Fragment(dt, dims...)
		case 2:
			t = k.Local(dt, dims...)
		default:
			t = k.Var(dt, g.value(vars))
		}
		if g.rare(8) {
			t.Named("t")
		}
		g.ts = append(g.ts, t)
	}
	g.ops(k, vars, 1+g.intn(8))
}

func (g *gen) ops(k *tl.Block, vars []tl.Expr, n int) {
	for range n {
		g.op(k, vars)
	}
}

func (g *gen) nested(k *tl.Block, vars []tl.Expr) {
	if g.depth >= 3 {
		return
	}
	g.depth++
	g.ops(k, vars, 1+g.intn(3))
	g.depth--
}

func (g *gen) op(k *tl.Block, vars []tl.Expr) {
	with := func(v tl.Expr) []tl.Expr { return append(append([]tl.Expr{}, vars...), v) }
	small := func() any { // a loop bound the interpreter runs fast
		if g.rare(6) {
			return g.value(vars)
		}
		return g.intn(4)
	}
	switch g.intn(32) {
	case 0:
		if g.coin() {
			k.Copy(g.operand(vars), g.operand(vars))
		} else {
			k.Copy(g.operand(vars), g.operand(vars), tl.CacheHint(g.intn(4)))
		}
	case 1:
		var opts []tl.GemmOpt
		for _, o := range []tl.GemmOpt{tl.TransA, tl.TransB, tl.ClearAccum, tl.WithPolicy(ir.Policy(g.intn(5))), nil} {
			if g.intn(3) == 0 {
				opts = append(opts, o)
			}
		}
		k.Gemm(g.operand(vars), g.operand(vars), g.operand(vars), opts...)
	case 2:
		k.Fill(g.operand(vars), g.value(vars))
	case 3:
		k.Clear(g.operand(vars))
	case 4:
		reduce := []func(src, dst *tl.Tensor, dim int, opts ...tl.ReduceOpt){k.ReduceSum, k.ReduceMax, k.ReduceMin, k.ReduceAbsMax}[g.intn(4)]
		var opts []tl.ReduceOpt
		if g.coin() {
			opts = append(opts, tl.Accumulate)
		}
		reduce(g.tensor(), g.tensor(), g.intn(4)-1, opts...)
	case 5:
		k.AtomicAdd(g.operand(vars), g.operand(vars))
	case 6:
		k.Ticket(g.operand(vars), g.operand(vars))
	case 7:
		k.Signal(g.operand(vars))
	case 8:
		k.WaitCount(g.operand(vars), g.value(vars))
	case 9:
		k.Prefetch(g.operand(vars))
	case 10, 11, 12:
		ext := make([]int, 1+g.intn(3))
		for i := range ext {
			ext[i] = g.size()
		}
		k.Parallel(func(idx []tl.Expr) {
			vs := append(append([]tl.Expr{}, vars...), idx...)
			for range 1 + g.intn(3) {
				t := g.tensor()
				at := make([]any, g.intn(4))
				for i := range at {
					at[i] = vs[g.intn(len(vs))]
				}
				if g.rare(4) {
					k.If(g.expr(vs).Lt(g.value(vs)), func() { t.Set(g.value(vs), at...) })
				} else {
					t.Set(g.value(vs), at...)
				}
			}
		}, ext...)
	case 13:
		k.ScaleRows(g.tensor(), g.tensor())
	case 14:
		k.Serial(small(), func(i tl.Expr) { g.nested(k, with(i)) })
	case 15:
		k.SerialRange(g.value(vars), small(), func(i tl.Expr) { g.nested(k, with(i)) })
	case 16:
		k.Unrolled(small(), func(i tl.Expr) { g.nested(k, with(i)) })
	case 17:
		k.Spread(small(), func(i tl.Expr) { g.nested(k, with(i)) })
	case 18, 19:
		k.Pipelined(small(), g.intn(4), func(i tl.Expr) {
			g.nested(k, with(i))
			if g.coin() {
				k.Defer(func() { g.nested(k, with(i)) })
			}
		})
	case 20:
		k.Defer(func() { g.nested(k, vars) })
	case 21:
		// A While that ends: v counts up to a small bound; or, rarely, any
		// condition (the run's time guard stops one that never ends).
		v := k.Var(tl.I32, 0)
		cond := v.Val().Lt(g.intn(4))
		if g.rare(8) {
			cond = g.expr(vars)
		}
		k.While(cond, func() {
			v.Assign(v.Val().Add(1))
			g.nested(k, vars)
		})
	case 22, 23:
		s := k.If(g.expr(vars), func() { g.nested(k, vars) })
		if g.coin() {
			s.Else(func() { g.nested(k, vars) })
		}
	case 24:
		if g.rare(8) {
			var zero tl.IfStmt
			zero.Else(func() {})
		}
	case 25:
		k.Warpgroup(g.intn(3)-1, func() { g.nested(k, vars) })
	case 26:
		if t := g.tensor(); t != nil {
			at := make([]any, g.intn(4))
			for i := range at {
				at[i] = g.value(vars)
			}
			t.Set(g.value(vars), at...)
		}
	case 27:
		if t := g.tensor(); g.coin() {
			t.Assign(g.value(vars))
		}
	case 28:
		hints := []func(){k.WarpSpecialize, k.PingPong, k.Draw, k.FirstTilesFirst, k.NextEarly, k.StartEarly, k.Cooperative, k.SplitN,
			func() { k.LateStart(g.size()) }, func() { k.Cluster(g.size()) }, func() { k.Rasterize(g.size(), g.coin()) }}
		hints[g.intn(len(hints))]()
	case 29:
		_ = k.NumSMs()
	case 30:
		if g.rare(8) {
			var z tl.Block
			z.Copy(g.operand(vars), g.operand(vars))
		}
	default:
		k.Copy(g.operand(vars), g.operand(vars))
	}
}

// run interprets an accepted program on small tensors, sizes bound to
// small values, and fails on a panic the interpreter recovered from.
func (g *gen) run(t *testing.T, p *ir.Func) {
	syms := map[*ir.Var]int{}
	for i, s := range p.Syms {
		syms[s] = 1 + (i*37+g.intn(100))%70
	}
	var args []*tensor.Tensor
	for _, b := range p.Params {
		shape := make([]int, len(b.Shape))
		n := 1
		for i, d := range b.Shape {
			v, err := interp.EvalInt(d, syms)
			if err != nil || v < 1 || v > 1<<12 {
				return
			}
			shape[i], n = v, n*v
			if n > 1<<16 {
				return
			}
		}
		strides := tensor.RowMajor(shape)
		if b.Strides != nil {
			span := 1
			for i, s := range b.Strides {
				v, err := interp.EvalInt(s, syms)
				if err != nil || v < 1 || v > 1<<16 {
					return
				}
				strides[i], span = v, span+(shape[i]-1)*v
			}
			if span > 1<<18 {
				return
			}
		}
		args = append(args, tensor.NewStrided(b.DType, shape, strides).Fill(1))
	}
	blocks := 1
	for _, d := range p.Kernel.Grid {
		v, err := interp.EvalInt(d, syms)
		if err != nil || v > 64 {
			return
		}
		blocks *= max(v, 1)
	}
	if blocks > 64 {
		return
	}
	err := interp.RunWith(p, args, interp.Options{Timeout: 300 * time.Millisecond})
	var pe *interp.PanicError
	if errors.As(err, &pe) {
		t.Fatalf("the interpreter panicked: %v\n%s\n%s", err, p, pe.Stack)
	}
}
