package cudagen

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
// handed back zeroed; the lowering is one thread's acquire-release add
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
		i := strings.Index(src, "tl::ticket(&count[")
		if i < 0 || !strings.Contains(src, "int* __restrict__ count") {
			t.Fatalf("%s: no ticket on a writable counter:\n%s", arch, src)
		}
		line := src[strings.LastIndex(src[:i], "\n")+1 : i+strings.Index(src[i:], "\n")]
		if !strings.HasPrefix(strings.TrimSpace(line), "if (tid == 0) ") {
			t.Errorf("%s: ticket lowered as %q", arch, line)
		}
		before, after := src[:i], src[i:]
		if !strings.HasSuffix(strings.TrimSpace(before[:strings.LastIndex(before, "\n")]), "__syncthreads();") || !strings.Contains(after[:200], "__syncthreads();") {
			t.Errorf("%s: the ticket is not between two barriers:\n%s", arch, src)
		}
	}
}

// signalChain: n blocks each write part[bx] and signal count; then a
// kernel that starts early waits for all n and sums the parts, and the
// kernel before lets it start early.
func signalChain(n int) (*tl.Func, *tl.Func) {
	a := tl.NewFunc("parts")
	part := a.Out("part", tl.F32, n)
	count := a.Scratch("count", tl.I32, 1)
	a.Kernel(tl.Grid(n), 128, func(k *tl.Block) {
		bx, _, _ := k.Idx()
		k.NextEarly()
		k.Parallel(func(i tl.Expr) { part.Set(bx.Add(1), bx) }, 1)
		k.Signal(count.Sub(0))
	})
	b := tl.NewFunc("sum")
	partB := b.In("part", tl.F32, n)
	countB := b.Scratch("count", tl.I32, 1)
	total := b.Out("total", tl.F32, 1)
	b.Kernel(tl.Grid(1), 128, func(k *tl.Block) {
		k.StartEarly()
		k.WaitCount(countB.Sub(0), n)
		acc := k.Shared(tl.F32, 1).Named("acc")
		k.Parallel(func(i tl.Expr) { acc.Set(0, i) }, 1)
		k.Serial(n, func(j tl.Expr) {
			k.Parallel(func(i tl.Expr) { acc.Set(acc.At(i).Add(partB.At(j)), i) }, 1)
		})
		k.Parallel(func(i tl.Expr) { total.Set(acc.At(i), i) }, 1)
		k.Parallel(func(i tl.Expr) { countB.Set(0, i) }, 1)
	})
	return a, b
}

// A count signalled by every block of one kernel is waited for by the
// next: on the interpreter the sum is whole, and one count short fails
// rather than pass. Lowered: the signal is the last warp's first thread's
// release add after a barrier, with no barrier after it; the wait one
// thread's poll and a barrier; the early kernel's inputs lose
// __restrict__ (no non-coherent loads of what the kernel before writes)
// and it ends in griddepcontrol.wait, the kernel before starts it with
// griddepcontrol.launch_dependents, both on sm_90a only.
func TestSignalWaitCount(t *testing.T) {
	const n = 37
	fa, fb := signalChain(n)
	pa, err := fa.Build()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := fb.Build()
	if err != nil {
		t.Fatal(err)
	}
	for fn, want := range map[*ir.Func][]string{pa: {"next kernel early", "signal count[0]"}, pb: {"starts early", "wait_count count[0] >= 37"}} {
		for _, w := range want {
			if !strings.Contains(fn.String(), w) {
				t.Errorf("%s prints without %q:\n%s", fn.Name, w, fn)
			}
		}
	}
	part, count, total := tensor.New(ir.F32, n), tensor.New(ir.I32, 1), tensor.New(ir.F32, 1).Fill(-1)
	if err := interp.Run(pa, []*tensor.Tensor{part, count}); err != nil {
		t.Fatal(err)
	}
	if count.At(0) != n {
		t.Fatalf("count %g after %d signals", count.At(0), n)
	}
	if err := interp.Run(pb, []*tensor.Tensor{part, count, total}); err != nil {
		t.Fatal(err)
	}
	if want := float64(n * (n + 1) / 2); total.At(0) != want || count.At(0) != 0 {
		t.Errorf("total %g, counter %g; want %g and 0", total.At(0), count.At(0), want)
	}
	count.Set(n-1, 0)
	if err := interp.Run(pb, []*tensor.Tensor{part, count, total}); err == nil || !strings.Contains(err.Error(), "wait forever") {
		t.Errorf("a count one short: got %v, want a wait that never ends", err)
	}
	for _, arch := range []string{"sm_80", "sm_90a"} {
		a, err := Compile(pa, Options{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Compile(pb, Options{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		sig := "if (tid == 96) tl::signal(&count[0]);"
		i := strings.Index(a.Source, sig)
		if i < 0 {
			t.Fatalf("%s: no %q:\n%s", arch, sig, a.Source)
		}
		if before := strings.TrimSpace(a.Source[:i]); !strings.HasSuffix(before, "__syncthreads();") {
			t.Errorf("%s: no barrier before the signal:\n%s", arch, a.Source)
		}
		if after := a.Source[i+len(sig):]; strings.Contains(after, "__syncthreads()") {
			t.Errorf("%s: a barrier after the signal:\n%s", arch, a.Source)
		}
		wait := "if (tid == 0) tl::wait_count(&count[0], 37);\n  __syncthreads();"
		if !strings.Contains(b.Source, wait) {
			t.Errorf("%s: no %q:\n%s", arch, wait, b.Source)
		}
		if strings.Contains(b.Source, "__restrict__") {
			t.Errorf("%s: the early kernel's parameters are __restrict__:\n%s", arch, b.Source)
		}
		hopper := arch == "sm_90a"
		if got := strings.Contains(a.Source, "tl::grid_launch_next();"); got != hopper {
			t.Errorf("%s: launch_dependents emitted %v, want %v", arch, got, hopper)
		}
		if got := strings.Contains(b.Source, "tl::grid_wait();"); got != hopper || b.Early != hopper || a.Early {
			t.Errorf("%s: grid_wait emitted %v, Early %v (the kernel before: %v); want %v, %v, false", arch, got, b.Early, a.Early, hopper, hopper)
		}
	}
}
