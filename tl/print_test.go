package tl_test

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tl"
)

// The golden test of the IR's text form lives here rather than in ir's
// tests because building programs needs tl, which imports ir.

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// pipelinedGemm is C = A·B with 64×64×32 tiles, a 2-stage pipeline over K,
// a rasterized grid, a producer warpgroup and a swizzled B tile.
func pipelinedGemm() *tl.Func {
	f := tl.NewFunc("gemm")
	m, n := f.Sym("M"), f.Sym("N")
	A := f.In("A", tl.F16, m, 256)
	B := f.In("B", tl.F16, 256, n)
	C := f.Out("C", tl.F32, m, n)
	f.Kernel(tl.Grid(tl.CeilDiv(n, 64), tl.CeilDiv(m, 64)), 128, func(k *tl.Block) {
		bx, by, _ := k.Idx()
		k.Rasterize(8, true)
		k.WarpSpecialize()
		as := k.Shared(tl.F16, 64, 32).Named("as")
		bs := k.Shared(tl.F16, 32, 64).Named("bs").Swizzled(ir.Swizzle128B)
		acc := k.Fragment(tl.F32, 64, 64).Named("acc")
		k.Clear(acc)
		k.Pipelined(256/32, 2, func(kk tl.Expr) {
			k.Copy(A.Sub(tl.Tile(by, 64), tl.Tile(kk, 32)), as)
			k.Copy(B.Sub(tl.Tile(kk, 32), tl.Tile(bx, 64)), bs)
			k.Gemm(as, bs, acc, tl.WithPolicy(ir.FullRow))
		})
		k.Copy(acc, C.Sub(tl.Tile(by, 64), tl.Tile(bx, 64)))
	})
	return f
}

// tinyAttention is one head of causal attention over 64 keys, 16 at a time,
// with the online softmax: Parallel, reductions, If, Select and math.
func tinyAttention() *tl.Func {
	const M, N, D, S = 16, 16, 32, 64
	f := tl.NewFunc("tiny_attention")
	Q := f.In("Q", tl.BF16, S, D)
	K := f.In("K", tl.BF16, S, D).WithStrides(1, S)
	V := f.In("V", tl.BF16, S, D)
	O := f.Out("O", tl.BF16, S, D)
	Stat := f.Out("Stat", tl.F32, 2)
	f.Kernel(tl.Grid(S/M), 64, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		qs := k.Shared(tl.BF16, M, D).Named("qs")
		ks := k.Shared(tl.BF16, N, D).Named("ks")
		vs := k.Shared(tl.BF16, N, D).Named("vs")
		s := k.Fragment(tl.F32, M, N).Named("s")
		p := k.Fragment(tl.BF16, M, N).Named("p")
		acc := k.Fragment(tl.F32, M, D).Named("acc")
		m := k.Fragment(tl.F32, M).Named("m")
		l := k.Fragment(tl.F32, M).Named("l")
		rowMax := k.Fragment(tl.F32, M).Named("row_max")
		alpha := k.Fragment(tl.F32, M).Named("alpha")
		total := k.Var(tl.F32, 0).Named("total")
		scale := 1 / math.Sqrt(D)

		k.Copy(Q.Sub(tl.Tile(bx, M), tl.All), qs)
		k.Clear(acc)
		k.Clear(l)
		k.Fill(m, tl.NegInf())
		k.Serial(bx.Add(1), func(j tl.Expr) {
			k.Copy(K.Sub(tl.Tile(j, N), tl.All), ks)
			k.Gemm(qs, ks, s, tl.TransB, tl.ClearAccum)
			k.If(j.Eq(bx), func() { // the diagonal tile: mask keys after the query
				k.Parallel(func(i, jj tl.Expr) {
					s.Set(tl.Select(jj.Gt(i), tl.NegInf(), s.At(i, jj)), i, jj)
				}, M, N)
			})
			k.ReduceMax(s, rowMax, 1)
			k.Parallel(func(i tl.Expr) {
				mNew := tl.Max(m.At(i), rowMax.At(i).Mul(scale))
				alpha.Set(tl.Exp(m.At(i).Sub(mNew)), i)
				m.Set(mNew, i)
			}, M)
			k.Parallel(func(i, jj tl.Expr) {
				s.Set(tl.Exp(s.At(i, jj).Mul(scale).Sub(m.At(i))), i, jj)
			}, M, N)
			k.ReduceSum(s, rowMax, 1)
			k.Parallel(func(i tl.Expr) {
				l.Set(l.At(i).Mul(alpha.At(i)).Add(rowMax.At(i)), i)
			}, M)
			k.Parallel(func(i, d tl.Expr) {
				acc.Set(acc.At(i, d).Mul(alpha.At(i)), i, d)
			}, M, D)
			k.Copy(s, p)
			k.Copy(V.Sub(tl.Tile(j, N), tl.All), vs)
			k.Gemm(p, vs, acc)
		})
		k.Parallel(func(i, d tl.Expr) {
			acc.Set(acc.At(i, d).Div(l.At(i)), i, d)
		}, M, D)
		k.Copy(acc, O.Sub(tl.Tile(bx, M), tl.All))
		k.If(bx.Eq(0).And(tl.Int(S).Gt(M)), func() {
			k.Unrolled(4, func(i tl.Expr) {
				total.Assign(total.Val().Add(tl.Cast(tl.Abs(Q.At(i, 0)), tl.F32)))
			})
		}).Else(func() {
			k.While(total.Val().Lt(1).Or(total.Val().Ne(total.Val()).Not()), func() {
				total.Assign(tl.Sqrt(total.Val().Add(1)).Neg())
			})
		})
		k.ReduceAbsMax(acc, m, 1, tl.Accumulate)
		k.AtomicAdd(m.Sub(tl.Range(0, 2)), Stat)
	})
	return f
}

func TestPrintGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() *tl.Func
	}{
		{"gemm", pipelinedGemm},
		{"attention", tinyAttention},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := tc.build().Build()
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			got := fn.String()
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run PrintGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test -run PrintGolden -update rewrites it)\n--- got:\n%s--- want:\n%s", tc.name, path, got, want)
			}
		})
	}
}

// A warpgroup block prints as a block naming its warpgroup.
func TestPrintWarpgroup(t *testing.T) {
	f := tl.NewFunc("roles")
	f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
		x := k.Fragment(tl.F32, 64).Named("x")
		k.Warpgroup(1, func() { k.Clear(x) })
	})
	fn, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	if s := fn.String(); !strings.Contains(s, "warpgroup 1 {") || !strings.Contains(s, "fill x") {
		t.Errorf("no warpgroup block in\n%s", s)
	}
}
