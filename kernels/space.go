package kernels

// Config spaces for the autotuner: every tiling worth considering for a
// problem (Candidates), and what the problem alone says of one before
// anything is compiled: whether it fits the problem's sizes (Unfit) and
// about how many registers its threads hold (Regs, a heuristic: only
// ptxas knows). Whether a config lowers for a target, and in how much
// shared memory, is the compiler's to say: autotune.Space builds each
// config's program and asks compiler/cudagen's Plan.

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/tilego/tilego/ir"
)

// Register limits: 255 a thread, beyond which ptxas spills to local
// memory, and the margin the rough estimate keeps below a budget.
const (
	MaxRegs   = 255
	RegMargin = 16
)

// Register estimate overheads: addresses, loop counters, row statistics
// and operand fragments, beyond the accumulator-sized fragments. Fitted to
// the H200 run of 2026-11-22 (FA: 98 registers at M128 N64 T256 d64; GEMM:
// 174 at 128×256 over 256 threads).
const (
	attnRegOverhead = 40
	gemmRegOverhead = 48
)

// The axes of the spaces.
var (
	attnMs      = []int{64, 128, 192}
	attnNs      = stepRange(32, 256, 16)
	attnStages  = []int{1, 2, 3}
	attnThreads = []int{128, 256, 384}

	gemmBMs     = []int{64, 128, 256}
	gemmBNs     = []int{64, 128, 256}
	gemmBKs     = []int{32, 64}
	gemmStages  = []int{2, 3, 4}
	gemmThreads = []int{128, 256}
	gemmRasters = []int{0, 8}
)

func stepRange(lo, hi, step int) []int {
	var out []int
	for x := lo; x <= hi; x += step {
		out = append(out, x)
	}
	return out
}

// Candidates lists the whole space of p's kernel, before pruning: the
// cross product of every axis. It is nil for a kernel with no space.
func Candidates(p Problem) []Config {
	var cs []Config
	switch p.(type) {
	case *attnProblem:
		for _, m := range attnMs {
			for _, n := range attnNs {
				for _, st := range attnStages {
					for _, t := range attnThreads {
						for _, ws := range []bool{false, true} {
							cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: ws})
						}
						if t == 256 { // two consumer warpgroups to take turns
							cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, PingPong: true},
								AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, PingPong: true, Overlap: true})
						}
						cs = append(cs, AttnConfig{M: m, N: n, Stages: st, Threads: t, WS: true, Overlap: true})
					}
				}
			}
		}
		// Persistent walks of the producer configs (the short sequences'
		// winners, bench's shortAttnConfigs), with the output staged or
		// stored from registers.
		for _, c := range slices.Clone(cs) {
			if a := c.(AttnConfig); a.WS {
				a.Persistent = true
				cs = append(cs, a)
				a.Direct = true
				cs = append(cs, a)
			}
		}
	case *gemmProblem:
		for _, bm := range gemmBMs {
			for _, bn := range gemmBNs {
				for _, bk := range gemmBKs {
					for _, st := range gemmStages {
						for _, t := range gemmThreads {
							for _, r := range gemmRasters {
								for _, ws := range []bool{false, true} {
									cs = append(cs, GemmConfig{BM: bm, BN: bn, BK: bk, Stages: st, Threads: t, Policy: ir.Square, Raster: r, WS: ws})
								}
							}
						}
					}
				}
			}
		}
	}
	return cs
}

// ConfigDistance is the distance between two configs of one type: the
// Euclidean distance of the log2 of their numeric fields (a zero counts
// as 1). Configs of different types are infinitely far apart.
func ConfigDistance(a, b Config) float64 {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || va.Kind() != reflect.Struct {
		return math.Inf(1)
	}
	var d float64
	for i := range va.NumField() {
		x, y := va.Field(i), vb.Field(i)
		if !x.CanInt() && !x.CanUint() {
			continue
		}
		lx, ly := log2Field(x), log2Field(y)
		d += (lx - ly) * (lx - ly)
	}
	return math.Sqrt(d)
}

func log2Field(v reflect.Value) float64 {
	var f float64
	if v.CanInt() {
		f = float64(v.Int())
	} else {
		f = float64(v.Uint())
	}
	return math.Log2(max(f, 1))
}

// Unfit says why c is not worth compiling for p, "" when it is: a config
// of another kernel, a field outside its domain (ParseConfig's rules), or
// a tile or stage count that p's sizes leave partly empty where a smaller
// one covers them. It asks nothing of a compiler; whether c lowers, and
// in how much shared memory, is the compiler's to say (cudagen.Plan).
func Unfit(p Problem, c Config) string {
	switch p := p.(type) {
	case *attnProblem:
		cfg, ok := c.(AttnConfig)
		if !ok {
			return fmt.Sprintf("config is %T, want kernels.AttnConfig", c)
		}
		return firstReason(outOfDomain(cfg), attnUnfit(p.s, cfg))
	case *gemmProblem:
		cfg, ok := c.(GemmConfig)
		if !ok {
			return fmt.Sprintf("config is %T, want kernels.GemmConfig", c)
		}
		return firstReason(outOfDomain(cfg), gemmUnfit(p.s, cfg))
	}
	return fmt.Sprintf("%s has no config space", p.Kernel())
}

// outOfDomain says which of c's fields is outside its domain, as
// ParseConfig would refuse it.
func outOfDomain(c Config) string {
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanInt() || hasStringer(f) {
			continue
		}
		name := strings.ToLower(v.Type().Field(i).Name)
		if why := checkField(v.Type(), name, int(f.Int())); why != "" {
			return fmt.Sprintf("%s = %d: %s", name, f.Int(), why)
		}
	}
	if err := checkPairs(c); err != nil {
		return err.Error()
	}
	return ""
}

func attnUnfit(s AttnShape, c AttnConfig) string {
	return firstReason(
		bad(c.M > 64 && c.M-64 >= s.Sq, "M = %d: a smaller tile covers the %d query rows", c.M, s.Sq),
		bad(c.N > 32 && c.N-16 >= s.Skv, "N = %d: a smaller tile covers the %d keys", c.N, s.Skv),
		bad(c.Stages > 1 && c.N*(c.Stages-1) >= roundUp(s.Skv, 16), "%d stages: the %d keys take fewer tiles", c.Stages, s.Skv),
	)
}

func gemmUnfit(s GemmShape, c GemmConfig) string {
	return firstReason(
		bad(c.BM > 64 && c.BM/2 >= s.M, "BM = %d: a smaller tile covers the %d rows", c.BM, s.M),
		bad(c.BN > 64 && c.BN/2 >= s.N, "BN = %d: a smaller tile covers the %d columns", c.BN, s.N),
		bad(c.BK > 32 && c.BK/2 >= s.K, "BK = %d: a smaller tile covers K = %d", c.BK, s.K),
		bad(c.Stages > 1 && c.BK*(c.Stages-1) >= roundUp(s.K, 16), "%d stages: K = %d takes fewer tiles", c.Stages, s.K),
	)
}

// Regs estimates the registers a thread of c's program holds for p: the
// f32 fragments' elements a thread (of c's threads, a producer's aside)
// plus a fixed overhead; 0 for a config it does not know. Only ptxas
// knows the count, so this is a heuristic, fitted on an H200.
func Regs(p Problem, c Config) int {
	switch c := c.(type) {
	case AttnConfig:
		p, ok := p.(*attnProblem)
		if !ok || c.Threads <= 0 {
			return 0
		}
		r := (c.M*c.N+c.M*p.s.Dv)/c.Threads + attnRegOverhead // S and acc (P takes S's registers)
		if c.Overlap {                                        // P of tile j-1 lives beside S of tile j (two 16-bit values a register)
			r += c.M * c.N / 2 / c.Threads
		}
		return r
	case GemmConfig:
		if _, ok := p.(*gemmProblem); !ok || c.Threads <= 0 {
			return 0
		}
		return c.BM*c.BN/c.Threads + gemmRegOverhead
	}
	return 0
}

// RegBudget is the registers a thread may hold without spilling when a
// block launches threads: 255, or fewer where the block's threads would
// outgrow the SM's 64K (384 threads get 168).
func RegBudget(threads int) int {
	if threads <= 0 {
		return MaxRegs
	}
	return min(MaxRegs, 65536/threads/8*8)
}

// RegsOver says why an estimate of regs registers a thread (Regs) is too
// many for a budget of registers a thread (RegBudget, or what setmaxnreg
// gives): within RegMargin of the budget such configs spill (the wgmma
// accumulators among them), and on an H100 a FlashAttention config at M
// 192, N 128, 384 threads (168 registers) even faulted. "" when it fits.
func RegsOver(regs, budget int) string {
	lim := budget - RegMargin
	return bad(regs > lim, "about %d registers per thread, over %d", regs, lim)
}

// bad returns the formatted reason when cond holds, else "".
func bad(cond bool, format string, args ...any) string {
	if !cond {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func firstReason(reasons ...string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}

// ---- bytes moved, for bench's GB/s ----

// Bytes is the traffic an ideal attention kernel has: Q, K and V read
// once, O and the LSE written once.
func (p *attnProblem) Bytes() float64 {
	s := p.s
	eb := float64(s.DType.Bytes())
	q := float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Dqk)
	kv := float64(s.B) * float64(s.HKV) * float64(s.Skv) * float64(s.Dqk+s.Dv)
	o := float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Dv)
	return (q+kv+o)*eb + float64(s.B)*float64(s.H)*float64(s.Sq)*4
}

// Bytes is the traffic an ideal GEMM has: A and B read once, C written
// once.
func (p *gemmProblem) Bytes() float64 {
	s := p.s
	m, n, k := float64(s.M), float64(s.N), float64(s.K)
	return (m*k+k*n)*float64(s.DType.Bytes()) + m*n*float64(s.OutDType.Bytes())
}
