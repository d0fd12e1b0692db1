package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// slidingWindow is causal attention for one head in which query i sees
// keys i-W+1 .. i, written from the library's steps: the user's own mask,
// then OnlineSoftmax, the rescale, P·V and NormalizeRows. Key tiles wholly
// outside every row's window are not visited.
func slidingWindow(S, D, W, M, N int) *tl.Func {
	f := tl.NewFunc("sliding_window")
	Q, K, V := f.In("Q", tl.BF16, S, D), f.In("K", tl.BF16, S, D), f.In("V", tl.BF16, S, D)
	O := f.Out("O", tl.F32, S, D)
	scale := 1 / math.Sqrt(float64(D)) * math.Log2E
	f.Kernel(tl.Grid(tl.CeilDiv(S, M)), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		qs, ks, vs := k.Shared(tl.BF16, M, D), k.Shared(tl.BF16, N, D), k.Shared(tl.BF16, N, D)
		s, p, acc := k.Fragment(tl.F32, M, N), k.Fragment(tl.BF16, M, N), k.Fragment(tl.F32, M, D)
		m, mOld, l := k.Fragment(tl.F32, M), k.Fragment(tl.F32, M), k.Fragment(tl.F32, M)
		k.Copy(Q.Sub(tl.Tile(bx, M), tl.All), qs)
		k.Fill(m, tl.NegInf())
		k.Clear(l)
		k.Clear(acc)
		q0 := bx.Mul(M)
		lo := tl.Max(q0.Sub(W-1), 0).Div(N)          // the first key tile any row's window reaches
		hi := tl.Min(q0.Add(M), S).Add(N - 1).Div(N) // past the last row's diagonal
		k.PipelinedRange(lo, hi, 1, func(j tl.Expr) {
			k.Copy(K.Sub(tl.Tile(j, N), tl.All), ks)
			k.Copy(V.Sub(tl.Tile(j, N), tl.All), vs)
			k.Gemm(qs, ks, s, tl.TransB, tl.ClearAccum, tl.WithPolicy(tl.FullRow))
			k.Parallel(func(i, c tl.Expr) {
				q, key := q0.Add(i), j.Mul(N).Add(c)
				hide := key.Gt(q).Or(key.Le(q.Sub(W))).Or(key.Ge(S))
				s.Set(tl.Select(hide, tl.NegInf(), s.At(i, c)), i, c)
			}, M, N)
			kernels.OnlineSoftmax(k, s, m, mOld, l, scale, M, N, false)
			k.Parallel(func(i, d tl.Expr) { acc.Set(acc.At(i, d).Mul(mOld.At(i)), i, d) }, M, D)
			k.Copy(s, p)
			k.Gemm(p, vs, acc, tl.WithPolicy(tl.FullRow))
		})
		kernels.NormalizeRows(k, acc, l, M, D)
		k.Copy(acc, O.Sub(tl.Tile(bx, M), tl.All))
	})
	return f
}

// A sliding-window attention built from the library's steps, on the
// interpreter, against float64.
func ExampleOnlineSoftmax() {
	const S, D, W = 150, 64, 40
	fn, err := slidingWindow(S, D, W, 64, 32).Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	q, k, v := tensor.New(tl.BF16, S, D).Rand(1, 1), tensor.New(tl.BF16, S, D).Rand(2, 1), tensor.New(tl.BF16, S, D).Rand(3, 1)
	o := tensor.New(tl.F32, S, D)
	if err := interp.Run(fn, []*tensor.Tensor{q, k, v, o}); err != nil {
		fmt.Println(err)
		return
	}
	worst := 0.0
	for i := range S {
		ws, sum := make([]float64, S), 0.0
		for j := max(0, i-W+1); j <= i; j++ {
			dot := 0.0
			for d := range D {
				dot += q.At(i, d) * k.At(j, d)
			}
			ws[j] = dot / math.Sqrt(D)
		}
		mx := math.Inf(-1)
		for j := max(0, i-W+1); j <= i; j++ {
			mx = math.Max(mx, ws[j])
		}
		for j := max(0, i-W+1); j <= i; j++ {
			ws[j] = math.Exp(ws[j] - mx)
			sum += ws[j]
		}
		for d := range D {
			want := 0.0
			for j := max(0, i-W+1); j <= i; j++ {
				want += ws[j] / sum * v.At(j, d)
			}
			worst = math.Max(worst, math.Abs(o.At(i, d)-want))
		}
	}
	fmt.Println("sliding window, largest error under 1e-2:", worst < 1e-2)
	// Output: sliding window, largest error under 1e-2: true
}

// The sliding-window kernel compiles for every target, and its gfx942 code,
// emulated, gives what the interpreter gives.
func TestSlidingWindowTargets(t *testing.T) {
	const S, D, W = 150, 64, 40
	f := slidingWindow(S, D, W, 64, 32)
	for _, arch := range []string{"sm_80", "sm_90a"} {
		fn, err := f.Build(cudagen.Limits(arch))
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
	}
	fn, err := f.Build(cudagen.Limits("gfx942"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cudagen.Compile(fn, cudagen.Options{Arch: "gfx942"})
	if err != nil {
		t.Fatal(err)
	}
	in := []*tensor.Tensor{tensor.New(tl.BF16, S, D).Rand(1, 1), tensor.New(tl.BF16, S, D).Rand(2, 1), tensor.New(tl.BF16, S, D).Rand(3, 1)}
	want, got := tensor.New(tl.F32, S, D), tensor.New(tl.F32, S, D)
	if err := interp.Run(fn, append(in, want)); err != nil {
		t.Fatal(err)
	}
	for i := range got.Data {
		got.Data[i] = math.NaN()
	}
	if err := emu.Run(p, append(in, got)); err != nil {
		t.Fatal(err)
	}
	var d ref.Diff
	for i := range want.Data {
		d.Add(got.Data[i], want.Data[i])
	}
	if d.Bad > 0 || d.Rel() > 1e-2 {
		t.Errorf("gfx942, emulated, against the interpreter: %s", &d)
	}
}
