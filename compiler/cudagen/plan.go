package cudagen

import "github.com/tilego/tilego/ir"

// Plan answers, for a program and a target, whether the program builds and
// what the compiler decided for it, so that a caller choosing among
// programs (the autotuner's config spaces) asks the compiler rather than
// keeps rules of its own.

// Cost is what compiling a program for a target decided.
type Cost struct {
	// Shared is the dynamic shared memory a block launches with
	// (Program.Shared): the tiles as placed, a pipelined loop's once a
	// stage, and the barriers.
	Shared int
	// Threads is the threads a block launches (Program.Threads): the
	// program's, and a producer warpgroup's where one was added.
	Threads int
	// WGMMA and MMA count the program's Gemms lowered to warpgroup MMA
	// (sm_90a) and to mma.sync.
	WGMMA, MMA int
	// TMA counts the pipelined loops whose prefetches are TMA loads.
	TMA int
	// Producer: a producer warpgroup issues a loop's TMA loads (ws.go).
	Producer bool
	// ConsumerRegs is the registers setmaxnreg gives each consumer
	// thread; 0 where the kernel leaves them as launched.
	ConsumerRegs int
	// PingPong: the consumer warpgroups take turns issuing the loop's
	// wgmmas (pingpong.go).
	PingPong bool
}

// Plan compiles f for opts as Compile does and reports what the compiler
// decided rather than the source. Its errors are what Build with
// LimitsFor(opts) refuses once f verifies: Compile's refusals, and shared
// memory after pipelining over what a block of opts.Arch may opt in to
// (then with the cost filled in); each is an ir.ErrorList at the op's
// file:line.
func Plan(f *ir.Func, opts Options) (Cost, error) {
	c, err := run(f, opts, "")
	if err != nil {
		return Cost{}, errorList(f, err)
	}
	cost := Cost{Shared: c.prog.Shared, Threads: c.prog.Threads, TMA: len(c.tma), Producer: c.ws != nil, PingPong: c.prog.PingPong}
	if c.ws != nil {
		cost.ConsumerRegs = c.ws.regs[1]
	}
	ir.Walk(f.Kernel.Body, func(s ir.Stmt) {
		if g, ok := s.(*ir.Gemm); ok {
			if c.wgmma[g] {
				cost.WGMMA++
			} else {
				cost.MMA++
			}
		}
	})
	if lim := sharedLimit(c.opts.Arch); cost.Shared > lim {
		return cost, errorList(f, overShared(f, cost.Shared, c.opts.Arch, lim))
	}
	return cost, nil
}

// overShared is the refusal of a kernel whose shared memory after
// pipelining, shared bytes, is over a block's limit on arch.
func overShared(f *ir.Func, shared int, arch string, limit int) error {
	return errAt("kernel", f.Kernel.P, "shared memory after pipelining is %d bytes, over %s's %d per block; use fewer stages or smaller tiles", shared, arch, limit)
}

// Producers reports whether any program compiled with opts may get a
// producer warpgroup, so that a caller can tell without compiling one: a
// producer issues a pipelined loop's TMA loads, and only sm_90a code with
// TMA on has them (planTMA; wsLoopAhead starts from the same condition).
func Producers(opts Options) bool { return opts.Arch == "sm_90a" && tmaEnabled(opts) }
