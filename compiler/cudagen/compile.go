// Package cuda compiles tile programs to CUDA C++ for NVIDIA GPUs from
// sm_80 on (mma.sync, ldmatrix, cp.async) and runs them through the pure-Go
// driver in runtime/cuda.
package cudagen

import (
	"fmt"
	"os"
	"strings"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// Options select the target and code generation choices.
type Options struct {
	Arch string // "sm_80", "sm_90a", ...; sm_90a turns on wgmma
	// Rounding of f32 to f16/bf16 stores: "rn" (nearest even, default),
	// "rz" (toward zero) or "ra" (ties away from zero).
	Rounding string
	// NoTMA keeps pipelined loops' prefetches on cp.async on sm_90a,
	// which otherwise loads them by TMA where it can: see tma.go.
	NoTMA bool
	// WarpSpecialize adds a producer warpgroup that issues a TMA loop's
	// loads to every program, not only those that ask: see ws.go.
	WarpSpecialize bool
	// Switches force schedule choices on or off (switches.go); they win
	// over NoTMA and WarpSpecialize.
	Switches Switches
}

// Program is a compiled kernel: its source and how to launch it.
type Program struct {
	Func    *ir.Func
	Name    string // the kernel's symbol
	Arch    string // the target it was emitted for (Options.Arch)
	Source  string
	Threads int
	Shared  int // dynamic shared memory bytes
	Layouts map[*ir.Buffer]*layout.Fragment
	TMA     []TMASpec // tensor maps passed after the other parameters
	// PingPong: the consumer warpgroups take turns issuing the loop's
	// wgmmas (pingpong.go).
	PingPong bool
	// Counter: the kernel takes, after the tensor maps, a zeroed int that
	// its walk draws tiles from and leaves zeroed (grid_loop.go); each launch
	// allocates its own.
	Counter bool
	// Early: the kernel may start while the one before it on the stream
	// still runs (ir.Kernel.StartEarly, sm_90 on); a chain launches it so
	// (chain.go).
	Early bool
	// Cooperative: every block runs at once (ir.Kernel.Cooperative), so
	// its blocks may wait for each other; launched cooperatively.
	Cooperative bool
	smem        *smemPlan
}

// pass is one step of compilation; passes run in the order of the table.
type pass struct {
	name string
	run  func(*compilation) error
	dump func(*compilation) string // what TILEGO_DUMP prints after the pass, if anything
}

// passes is the whole pipeline from verified IR to CUDA C++.
var passes = []pass{
	{"verify", verifyPass, func(c *compilation) string { return c.f.String() }},
	{"check-target", checkTarget, nil},
	{"assign-warpgroups", assignRoles, dumpRoles},
	{"infer-layouts", inferLayouts, dumpLayouts},
	{"check-registers", checkRegisters, nil},
	{"plan-split", step(planSplit), dumpSplit},
	{"place-shared", placeSharedTiles, dumpShared},
	{"plan-tma", step(planTMA), dumpTMA},
	{"plan-tma-stores", step(planTMAStores), dumpTMAStores},
	{"plan-tma-reduces", step(planTMAReduces), nil},
	{"plan-ws", step(planWS), dumpWS},
	{"plan-persistent-loads", step(planPersistentLoads), nil},
	{"plan-hand-bars", step(planHandBars), nil},
	{"plan-handoff", planHandoffs, dumpHandoff},
	{"plan-pingpong", step(planPingPong), dumpPingPong},
	{"plan-persistent-release", step(planPersistentRelease), dumpPersistentRelease},
	{"plan-cluster", step(planCluster), dumpCluster},
	{"plan-warpgroup-epilogue", step(planWarpgroupEpilogue), dumpWarpgroupEpilogue},
	{"check-split", checkSplit, nil},
	{"emit", emitSafeNames, func(c *compilation) string { return c.prog.Source }},
}

type compilation struct {
	f         *ir.Func
	opts      Options
	layouts   map[*ir.Buffer]*layout.Fragment
	warps     map[*ir.Gemm]layout.Warps
	wgmma     map[*ir.Gemm]bool // lowered to Hopper's warpgroup MMA
	smem      *smemPlan
	tma       map[*ir.For]*tmaLoop // pipelined loops whose prefetches are TMA loads
	tmaSpecs  []TMASpec
	tmaStores map[*ir.Copy]*tmaCopy // epilogue copies stored by TMA
	// tmaReduces are the atomic adds from shared tiles reduced by TMA.
	tmaReduces map[*ir.AtomicAdd]*tmaCopy
	mfma       map[*ir.Gemm]mfmaPlan  // AMD: each Gemm's MFMA instruction and waves
	ws         *wsPlan                // the producer warpgroup's plan, or nil
	roleBars   int                    // without a producer, the shared offset of the warpgroup blocks' own mbarriers, or -1 (planHandBars)
	wv         *walkVars              // a persistent walk's variables (persistent_vars.go), found on first use
	split      map[*ir.For]*splitRing // loops whose K and V rings are apart (split_rings.go)
	pingPong   bool                   // the consumer warpgroups take turns (pingpong.go)
	roles      map[*ir.Buffer]int     // fragments owned by one warpgroup (roles.go)
	halves     *halves                // a walk whose epilogue stores by warpgroup halves (warpgroup_epilogue.go), or nil
	cluster    bool                   // blocks in pairs multicast the producer's ring tiles (cluster.go)
	handoff    *handoff               // the producer's loop's warpgroup blocks hand tiles to each other (handoff.go), or nil
	turns      bool                   // the producer's loop's consumer warpgroups take turns (plan-pingpong)
	walkEarly  *walkEarly             // the walk's tiles freed in the producer's loop's last iteration (persistent_loads.go), or nil
	prog       *Program
	pass       string  // the pass running, for an internal error (ice.go)
	at         ir.Stmt // the statement being lowered, if known, for the same
}

// Compile translates f to CUDA C++. Set TILEGO_DUMP to the program's name
// (or "all") to print the program after every pass on stderr. It does not
// panic: a panic in a pass is an internal compiler error (ice.go).
func Compile(f *ir.Func, opts Options) (*Program, error) {
	return compile(f, opts, os.Getenv("TILEGO_DUMP"))
}

// compile runs the passes, dumping after each where dump names f (or is
// "all").
func compile(f *ir.Func, opts Options, dump string) (*Program, error) {
	c, err := run(f, opts, dump)
	if err != nil {
		return nil, err
	}
	return c.prog, nil
}

// run is compile's work: the compilation with every pass run, for what
// the passes decided (Plan) as well as the program.
func run(f *ir.Func, opts Options, dump string) (c *compilation, err error) {
	if opts.Arch == "" {
		opts.Arch = "sm_80"
	}
	if opts.Rounding == "" {
		opts.Rounding = "rn"
	}
	switch opts.Rounding {
	case "rn", "rz", "ra":
	default:
		return nil, fmt.Errorf("cuda: rounding %q: want rn, rz or ra", opts.Rounding)
	}
	c = &compilation{f: f, opts: opts, layouts: map[*ir.Buffer]*layout.Fragment{}, warps: map[*ir.Gemm]layout.Warps{}, wgmma: map[*ir.Gemm]bool{}, mfma: map[*ir.Gemm]mfmaPlan{}}
	var prog *Program
	defer c.recoverICE(&prog, &err)
	for _, p := range passes {
		c.pass, c.at = p.name, nil
		if err := p.run(c); err != nil {
			return nil, c.placed(err)
		}
		if p.dump != nil && (dump == f.Name || dump == "all") {
			fmt.Fprintf(os.Stderr, "=== %s after %s ===\n%s\n", f.Name, p.name, p.dump(c))
		}
	}
	return c, nil
}

func verifyPass(c *compilation) error { return ir.Verify(c.f, ir.DefaultLimits) }

// step is a planning step that cannot fail, as a pass.
func step(plan func(*compilation)) func(*compilation) error {
	return func(c *compilation) error { plan(c); return nil }
}

func dumpLayouts(c *compilation) string {
	var b strings.Builder
	for _, buf := range c.f.Kernel.Allocs {
		if l, ok := c.layouts[buf]; ok {
			fmt.Fprintf(&b, "%s: %s\n", buf.Name, l)
		}
	}
	return b.String()
}

func errAt(op string, pos ir.Pos, format string, args ...any) error {
	return &ir.Error{Op: op, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
