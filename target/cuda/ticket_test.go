package cuda

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// ticketSum: each of n blocks writes its index + 1 to part[bx] and draws a
// ticket; the one that finds n-1 sums every part into total and resets the
// counter.
func ticketSum(n int) *tl.Func {
	f := tl.NewFunc("ticket_sum")
	part := f.Out("part", tl.F32, n)
	total := f.Out("total", tl.F32, 1)
	count := f.Scratch("count", tl.I32, 1)
	f.Kernel(tl.Grid(n), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		k.Parallel(func(i tl.Expr) { part.Set(bx.Add(1), bx) }, 1)
		tk := k.Shared(tl.I32, 1).Named("tk")
		k.Ticket(count.Sub(0), tk)
		k.If(tk.At(0).Eq(n-1), func() {
			count.Set(0, 0)
			acc := k.Shared(tl.F32, 1).Named("acc")
			k.Parallel(func(i tl.Expr) { acc.Set(0, i) }, 1)
			k.Serial(n, func(j tl.Expr) {
				k.Parallel(func(i tl.Expr) { acc.Set(acc.At(i).Add(part.At(j)), i) }, 1)
			})
			k.Parallel(func(i tl.Expr) { total.Set(acc.At(i), i) }, 1)
		})
	})
	return f
}

// Exactly one block (the last to draw) sees every part, and the counter is
// handed back zeroed; the lowering fences around one thread's atomic add
// between two barriers, and scratch is declared writable.
func TestTicket(t *testing.T) {
	const n = 37
	fn, err := ticketSum(n).Build()
	if err != nil {
		t.Fatal(err)
	}
	for run := range 3 { // the same counter serves every run
		part, total := tensor.New(ir.F32, n), tensor.New(ir.F32, 1).Fill(-1)
		count := tensor.New(ir.I32, 1)
		if run == 2 {
			count.Set(n, 0) // a counter not handed over zeroed: no block finds n-1
		}
		if err := interp.Run(fn, []*tensor.Tensor{part, total, count}); err != nil {
			t.Fatal(err)
		}
		want, wantCount := float64(n*(n+1)/2), 0.0
		if run == 2 {
			want, wantCount = -1, 2*n
		}
		if total.At(0) != want || count.At(0) != wantCount {
			t.Errorf("run %d: total %g, counter %g; want %g and %g", run, total.At(0), count.At(0), want, wantCount)
		}
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		p, err := Compile(fn, Options{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		src := p.Source
		i := strings.Index(src, "atomicAdd(&count[")
		if i < 0 || !strings.Contains(src, "int* __restrict__ count") {
			t.Fatalf("%s: no atomic add on a writable counter:\n%s", arch, src)
		}
		line := src[strings.LastIndex(src[:i], "\n")+1 : i+strings.Index(src[i:], "\n")]
		if !strings.HasPrefix(strings.TrimSpace(line), "if (tid == 0) { __threadfence();") || !strings.HasSuffix(line, "__threadfence(); }") {
			t.Errorf("%s: ticket lowered as %q", arch, line)
		}
		before, after := src[:i], src[i:]
		if !strings.HasSuffix(strings.TrimSpace(before[:strings.LastIndex(before, "\n")]), "__syncthreads();") || !strings.Contains(after[:200], "__syncthreads();") {
			t.Errorf("%s: the ticket is not between two barriers:\n%s", arch, src)
		}
	}
}
