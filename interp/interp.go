// Package interp runs a tile program on the CPU with its exact meaning:
// every block of the grid runs its tile ops one after another on host
// tensors, storage types round as on the GPU and arithmetic is f32. It is
// the definition every backend is tested against, and the fallback when
// there is no GPU.
package interp

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Run executes f over args, one tensor per parameter in order. Outputs are
// written in place. Symbolic sizes are bound from the tensors' shapes, and
// each tensor's strides must match those the program declares. It runs
// under DefaultTimeout (RunWith sets another).
func Run(f *ir.Func, args []*tensor.Tensor) error { return RunWith(f, args, Options{}) }

// InterpSMs is the SM count a program sees in the interpreter: more than
// one, so that persistent grids walk several tiles a block, unevenly.
const InterpSMs = 3

// Bind resolves symbolic sizes from the tensors passed for f's parameters
// and checks every shape and stride against the program's declaration.
func Bind(f *ir.Func, args []*tensor.Tensor) (map[*ir.Var]int, error) {
	if len(args) != len(f.Params) {
		return nil, fmt.Errorf("%s: %d tensors for %d parameters", f.Name, len(args), len(f.Params))
	}
	syms := map[*ir.Var]int{}
	if f.SMs != nil {
		syms[f.SMs] = InterpSMs
	}
	for i, p := range f.Params {
		t := args[i]
		if t == nil {
			return nil, fmt.Errorf("%s: no tensor for parameter %s", f.Name, p.Name)
		}
		if t.DType != p.DType || len(t.Shape) != len(p.Shape) {
			return nil, fmt.Errorf("%s: parameter %s wants %s with %d dims, got %s %v", f.Name, p.Name, p.DType, len(p.Shape), t.DType, t.Shape)
		}
		for d, e := range p.Shape {
			if v, ok := e.(*ir.Var); ok && v.Kind == ir.SymSize {
				if old, seen := syms[v]; seen && old != t.Shape[d] {
					return nil, fmt.Errorf("%s: size %s is %d from an earlier tensor but %d in %s", f.Name, v.Name, old, t.Shape[d], p.Name)
				}
				syms[v] = t.Shape[d]
			}
		}
	}
	for i, p := range f.Params {
		t := args[i]
		for d, e := range p.Shape {
			n, err := evalInt(e, syms)
			if err != nil {
				return nil, fmt.Errorf("%s: shape of %s: %v", f.Name, p.Name, err)
			}
			if n != t.Shape[d] {
				return nil, fmt.Errorf("%s: %s dim %d must be %d, got %d", f.Name, p.Name, d, n, t.Shape[d])
			}
		}
		want := tensor.RowMajor(t.Shape)
		if p.Strides != nil {
			for d, e := range p.Strides {
				n, err := evalInt(e, syms)
				if err != nil {
					return nil, fmt.Errorf("%s: strides of %s: %v", f.Name, p.Name, err)
				}
				want[d] = n
			}
		}
		for d := range want {
			if t.Shape[d] > 1 && want[d] != t.Strides[d] {
				return nil, fmt.Errorf("%s: %s has strides %v but the program reads it with strides %v", f.Name, p.Name, t.Strides, want)
			}
		}
	}
	return syms, nil
}

// EvalInt evaluates an integer expression of symbolic sizes and constants
// (a grid dim, a shape), as backends need at launch.
func EvalInt(e ir.Expr, syms map[*ir.Var]int) (int, error) { return evalInt(e, syms) }

// evalInt is EvalInt.
func evalInt(e ir.Expr, syms map[*ir.Var]int) (int, error) {
	c := &compiler{slot: map[*ir.Var]int{}}
	st := &state{}
	for v, n := range syms {
		c.slot[v] = len(st.vars)
		st.vars = append(st.vars, float64(n))
	}
	fn := c.iexpr(e)
	if c.err != nil {
		return 0, c.err
	}
	return int(fn(st)), nil
}

// launch runs every block of the grid, spread over the host's cores.
func (c *compiler) launch(body exec) error {
	k := c.f.Kernel
	var grid [3]int
	for i := range grid {
		grid[i] = 1
		if i < len(k.Grid) {
			n, err := evalInt(k.Grid[i], c.syms)
			if err != nil {
				return err
			}
			grid[i] = n
		}
	}
	total := grid[0] * grid[1] * grid[2]
	workers := min(runtime.NumCPU(), max(total, 1))
	if k.Cooperative {
		return c.launchCoop(body, grid, total, workers)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		next  int
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := c.newState()
			for {
				mu.Lock()
				b := next
				next++
				stop := first != nil
				mu.Unlock()
				if b >= total || stop {
					return
				}
				idx := c.enter(st, b, grid)
				runBlock(st, body)
				st.halted(k.P, "kernel") // stopped: fail the block, so that no other starts
				if st.err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("%s: block %v: %w", c.f.Name, idx, st.err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// coop schedules a cooperative kernel, whose blocks all run at once on the
// GPU: each block is its own goroutine, so that one may wait for counts
// others add, but only the holders of a token (workers of them) compute,
// so that the host's cores are not oversubscribed. Its fields other than
// tokens are guarded by the shared atomic lock, which every counter add
// holds.
type coop struct {
	tokens chan struct{}
	cond   *sync.Cond // on the shared atomic lock: a count grew, or waiters must stop
	live   int        // blocks not yet ended, started or not
	// waiters holds the blocks in WaitCount, each with whether its count
	// is reached.
	waiters map[*state]func() bool
	stuck   bool  // every live block waits and none's count is reached
	first   error // the first block's error: the waiters stop
}

// launchCoop runs a cooperative kernel's blocks as coop describes.
func (c *compiler) launchCoop(body exec, grid [3]int, total, workers int) error {
	g := &coop{tokens: make(chan struct{}, workers), cond: sync.NewCond(&c.atomicMu), live: total, waiters: map[*state]func() bool{}}
	c.atomicMu.Lock()
	c.coop = g // stop wakes its waiters
	if why := c.halt.Load(); why != nil {
		g.first = fmt.Errorf("%s: %w", c.f.Name, *why)
	}
	c.atomicMu.Unlock()
	for range workers {
		g.tokens <- struct{}{}
	}
	var wg sync.WaitGroup
	for b := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-g.tokens
			c.atomicMu.Lock()
			stop := g.first != nil
			c.atomicMu.Unlock()
			var idx [3]int
			var err error
			if !stop {
				st := c.newState()
				st.coop = g
				idx = c.enter(st, b, grid)
				runBlock(st, body)
				err = st.err
			}
			c.atomicMu.Lock()
			g.live--
			if err != nil && g.first == nil {
				g.first = fmt.Errorf("%s: block %v: %w", c.f.Name, idx, err)
			}
			g.settle()
			c.atomicMu.Unlock()
			g.tokens <- struct{}{}
		}()
	}
	wg.Wait()
	return g.first
}

// settle, under the shared lock, finds whether the waiters are stuck (no
// block runs that could add to their counters, and none may go on) and
// wakes them when they must stop.
func (g *coop) settle() {
	if !g.stuck && len(g.waiters) > 0 && len(g.waiters) == g.live {
		g.stuck = true
		for _, ready := range g.waiters {
			if ready() {
				g.stuck = false
				break
			}
		}
	}
	if g.stuck || g.first != nil {
		g.cond.Broadcast()
	}
}

// wait parks st, which holds the shared lock, until ready holds, and
// reports false when it must stop instead (stuck or another block failed).
// It hands its token back while it waits, so that the blocks it waits for
// may run, and takes one again before it goes on.
func (g *coop) wait(st *state, ready func() bool) bool {
	g.tokens <- struct{}{} // never blocks: st holds one of the tokens
	g.waiters[st] = ready
	g.settle()
	for !ready() && !g.stuck && g.first == nil {
		g.cond.Wait()
	}
	delete(g.waiters, st)
	ok := ready()
	st.mu.Unlock()
	<-g.tokens
	st.mu.Lock()
	return ok
}

// enter sets st up to run block b (linear) of grid and returns its index.
func (c *compiler) enter(st *state, b int, grid [3]int) [3]int {
	st.reset(c)
	st.block, st.blocks = b, grid[0]*grid[1]*grid[2]
	idx := [3]int{b % grid[0], b / grid[0] % grid[1], b / (grid[0] * grid[1])}
	for i, v := range c.f.Kernel.Idx {
		st.vars[c.slot[v]] = float64(idx[i])
	}
	return idx
}

// buffer is a buffer as the interpreter addresses it.
type buffer struct {
	b       *ir.Buffer
	shape   []int
	strides []int
	global  []float64 // global tensors: shared by all blocks
	local   int       // on-chip buffers: index into state.mem
	size    int
}

// state is one worker's registers and on-chip memory.
type state struct {
	vars []float64
	mem  [][]float64
	err  error
	mu   *sync.Mutex            // guards atomic adds to global tensors
	coop *coop                  // the schedule of a cooperative kernel, else nil
	halt *atomic.Pointer[error] // set when the run must stop (guard.go)
	at   ir.Stmt                // the statement last started, for a recovered panic
	// block is the running block's linear index in the grid of blocks
	// (Spread loops deal their values by it).
	block, blocks int
}

func (c *compiler) newState() *state {
	st := &state{vars: make([]float64, c.nslots), mu: &c.atomicMu, halt: &c.halt}
	for v, n := range c.syms {
		st.vars[c.slot[v]] = float64(n)
	}
	for _, b := range c.bufs {
		if b.global == nil {
			st.mem = append(st.mem, make([]float64, b.size))
		}
	}
	return st
}

// reset poisons on-chip memory with NaN (or a huge int) at each block's
// start, so a program that reads what it never wrote gets a visibly wrong
// answer instead of a stale one.
func (st *state) reset(c *compiler) {
	for _, b := range c.bufs {
		if b.global != nil {
			continue
		}
		m := st.mem[b.local]
		poison := math.NaN()
		if !b.b.DType.IsFloat() {
			poison = b.fromInt(-1 << 30)
		}
		for i := range m {
			m[i] = poison
		}
	}
}

func (st *state) fail(pos ir.Pos, format string, args ...any) {
	if st.err == nil {
		st.err = fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...))
	}
}
