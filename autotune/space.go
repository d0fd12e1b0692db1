package autotune

// The config spaces the tuner searches: kernels.Candidates, less the
// configs the problem calls unfit (kernels.Unfit), those the compiler
// refuses or places in more shared memory than the architecture's blocks
// may have (cudagen.Plan, on the program kernels.Build makes), and those
// the register heuristic (kernels.Regs) says would spill. The compiler
// answers for itself: nothing here restates its rules.

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// Estimate is what a config costs on an architecture.
type Estimate struct {
	// Cost is what the compiler decided for the config's program; zero
	// when it was not asked (the problem or the register estimate rejected
	// the config first) or refused.
	Cost cudagen.Cost
	// Regs estimates registers per thread (kernels.Regs).
	Regs int
	// WGMMA: every Gemm of the program lowers to warpgroup MMA.
	WGMMA bool
	// Reject says why the config cannot work ("" when it can): the
	// problem's reason, the compiler's refusal (at the kernel code's
	// file:line), or the register estimate's.
	Reject string
}

// EstimateConfig builds c's program for p, has the compiler plan it for
// arch ("sm_80", "sm_90a") and says whether it can work. Estimates are
// remembered for the problems asked about last, so Reject after Space
// compiles nothing again.
func EstimateConfig(p kernels.Problem, c kernels.Config, arch string) Estimate {
	return estimatesFor(p, arch).get(p, c, arch)
}

func estimate(p kernels.Problem, c kernels.Config, arch string) Estimate {
	e := Estimate{Regs: kernels.Regs(p, c)}
	if e.Reject = kernels.Unfit(p, c); e.Reject != "" {
		return e
	}
	// No thread may hold more than MaxRegs, whatever the compiler
	// decides: an estimate over that needs no compiling.
	if e.Reject = kernels.RegsOver(e.Regs, kernels.MaxRegs); e.Reject != "" {
		return e
	}
	lim := cudagen.Limits(arch)
	lim.Target = nil // Plan compiles the program, once, and checks its shared memory
	opts := cudagen.Options{Arch: arch}
	fn, err := kernels.Build(p, c, lim)
	if err == nil && fn.Kernel.WarpSpecialize && !cudagen.Producers(opts) {
		e.Reject = fmt.Sprintf("ws: the compiler gives no program a producer warpgroup on %s", arch)
		return e
	}
	if err == nil {
		e.Cost, err = cudagen.Plan(fn, opts)
	}
	if err != nil {
		e.Cost, e.Reject = cudagen.Cost{}, refusal(err)
		return e
	}
	k := fn.Kernel
	e.WGMMA = e.Cost.WGMMA > 0 && e.Cost.MMA == 0
	budget := e.Cost.ConsumerRegs // what setmaxnreg gives the consumers
	if budget == 0 {
		budget = kernels.RegBudget(e.Cost.Threads)
	}
	regs := kernels.RegsOver(e.Regs, budget)
	if regs != "" {
		regs += fmt.Sprintf(" (%d threads launched)", e.Cost.Threads)
	}
	switch {
	case k.WarpSpecialize && !e.Cost.Producer:
		e.Reject = fmt.Sprintf("ws: the compiler adds no producer warpgroup to this program on %s", arch)
	case k.PingPong && !e.Cost.PingPong:
		e.Reject = fmt.Sprintf("pingpong: the compiler does not have this program's consumers take turns on %s", arch)
	default:
		e.Reject = regs
	}
	return e
}

// refusal is a build or plan error as one line: the refused ops, each at
// the kernel code's file:line.
func refusal(err error) string {
	var list ir.ErrorList
	if errors.As(err, &list) {
		return strings.ReplaceAll(list.Error(), "\n", "; ")
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// Reject says why c cannot work for p on arch, "" when it can.
func Reject(p kernels.Problem, c kernels.Config, arch string) string {
	return EstimateConfig(p, c, arch).Reject
}

// Space is the configs of kernels.Candidates(p) that pass Reject on arch
// ("sm_80", "sm_90a"), most promising first: on sm_90a the configs whose
// GEMMs lower to wgmma, then the rest; within each, ping-pong and
// persistent configs after the others, and the nearest to p.GPUConfig()
// first (distance in log2 of every numeric field). It estimates the
// candidates in parallel over the cores.
func Space(p kernels.Problem, arch string) []kernels.Config {
	type ranked struct {
		c     kernels.Config
		ok    bool
		slow  bool
		late  bool // ping-pong or a persistent walk
		dist  float64
		index int
	}
	ref := p.GPUConfig()
	cs := kernels.Candidates(p)
	t := estimatesFor(p, arch)
	rs := make([]ranked, len(cs))
	parallel(len(cs), func(i int) {
		c := cs[i]
		e := t.get(p, c, arch)
		// Ping-pong lost to the same tiles without it at 35 of the 36
		// sweep points on an H100, and with the deferred P·V it only tied
		// (docs/perf.md): it comes after the rest, as do the persistent
		// walks, which win only up to 2k tokens (where the benchmark's
		// seeds hold the ones that won).
		late := false
		if a, ok := c.(kernels.AttnConfig); ok {
			late = a.PingPong || a.Persistent
		}
		rs[i] = ranked{c, e.Reject == "", arch == "sm_90a" && !e.WGMMA, late, kernels.ConfigDistance(c, ref), i}
	})
	rs = slices.DeleteFunc(rs, func(r ranked) bool { return !r.ok })
	later := func(a, b bool) int {
		if a {
			return 1
		}
		return -1
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.slow != b.slow:
			return later(a.slow, b.slow)
		case a.late != b.late:
			return later(a.late, b.late)
		case a.dist != b.dist:
			if a.dist < b.dist {
				return -1
			}
			return 1
		}
		return a.index - b.index
	})
	out := make([]kernels.Config, len(rs))
	for i, r := range rs {
		out[i] = r.c
	}
	return out
}

// parallel runs fn(0..n-1) over GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			for i := k; i < n; i += w {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// estimates are one problem's estimates on one architecture, by config.
type estimates struct {
	key      string
	mu       sync.Mutex
	byConfig map[string]Estimate
}

// get is c's estimate, estimated on first use.
func (t *estimates) get(p kernels.Problem, c kernels.Config, arch string) Estimate {
	key := configKey(c)
	t.mu.Lock()
	e, ok := t.byConfig[key]
	t.mu.Unlock()
	if !ok {
		e = estimate(p, c, arch)
		t.mu.Lock()
		t.byConfig[key] = e
		t.mu.Unlock()
	}
	return e
}

// memoProblems is how many problems' estimates are remembered.
const memoProblems = 16

var memo struct {
	sync.Mutex
	tables []*estimates // the most recently asked last
}

// estimatesFor is the table of p's estimates on arch, a new one where
// none is remembered.
func estimatesFor(p kernels.Problem, arch string) *estimates {
	key := fmt.Sprintf("%s %s %s", p.Kernel(), p.Shape(), arch)
	memo.Lock()
	defer memo.Unlock()
	for i, t := range memo.tables {
		if t.key == key {
			memo.tables = append(slices.Delete(memo.tables, i, i+1), t)
			return t
		}
	}
	t := &estimates{key: key, byConfig: map[string]Estimate{}}
	if len(memo.tables) == memoProblems {
		memo.tables = memo.tables[1:]
	}
	memo.tables = append(memo.tables, t)
	return t
}
