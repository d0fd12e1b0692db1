package bench

// Cold-cache timing. A small problem's inputs stay in the L2 cache from
// one launch to the next, so back-to-back launches time a kernel reading
// from L2, not from memory as it does in a model. Between timed launches
// the profiler therefore either writes a buffer larger than the L2
// (FlushL2, as triton's do_bench does) or cycles through device copies of
// the inputs (FlushRotate); either way the events bracket the kernel
// alone.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/tensor"
)

// Flush is how timed launches keep the L2 cache cold.
type Flush int

const (
	// FlushAuto flushes (FlushL2) when the inputs take less than twice the
	// L2, and times back to back (FlushNone) otherwise, where the cache
	// cannot hold them anyway.
	FlushAuto   Flush = iota
	FlushNone         // back-to-back launches: cuda.Launch.Time
	FlushL2           // memset a FlushBytes buffer before every launch
	FlushRotate       // cycle through RotateCopies device copies of the inputs
)

var flushNames = [...]string{"auto", "none", "l2", "rotate"}

func (f Flush) String() string {
	if f < 0 || int(f) >= len(flushNames) {
		return fmt.Sprintf("Flush(%d)", int(f))
	}
	return flushNames[f]
}

// ParseFlush reads auto, none (or off), l2 or rotate.
func ParseFlush(s string) (Flush, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "off" {
		return FlushNone, nil
	}
	for i, n := range flushNames {
		if n == s {
			return Flush(i), nil
		}
	}
	return FlushAuto, fmt.Errorf("unknown flush %q (want auto, none, l2 or rotate)", s)
}

// Resolve turns FlushAuto into FlushL2 or FlushNone for inputs of
// inputBytes on a device with an L2 of l2Bytes; other modes are kept.
func (f Flush) Resolve(inputBytes, l2Bytes int) Flush {
	if f != FlushAuto {
		return f
	}
	if inputBytes < 2*l2Bytes {
		return FlushL2
	}
	return FlushNone
}

// minFlushBytes is the size of the flush buffer (256 MiB, as triton's
// do_bench), larger than any L2 so far; a device with more L2 gets twice it.
const minFlushBytes = 256 << 20

// FlushBytes is the flush buffer's size for an L2 of l2Bytes.
func FlushBytes(l2Bytes int) int { return max(minFlushBytes, 2*l2Bytes) }

// RotateCopies is how many copies of inputBytes of inputs to cycle through
// so that the other copies, touched since a copy's last launch, fill at
// least twice the L2: from 2 to 16.
func RotateCopies(inputBytes, l2Bytes int) int {
	if inputBytes <= 0 {
		return 16
	}
	n := 1 + (2*l2Bytes+inputBytes-1)/inputBytes
	return min(max(n, 2), 16)
}

// InputBytes is the size of the arguments f reads (its parameters that
// are not outputs).
func InputBytes(f *ir.Func, args []*tensor.Tensor) int {
	n := 0
	for i, t := range args {
		if i < len(f.Params) && f.Params[i].Output {
			continue
		}
		n += len(t.Data) * t.DType.Bytes()
	}
	return n
}

// Stats summarizes timed launches.
type Stats struct {
	Median time.Duration
	Spread time.Duration // max - min
	N      int           // timed launches
	Flush  Flush         // how the L2 was kept cold (resolved: never auto)
	// Times are the timed launches in the order they ran, where the timing
	// kept them (a launch that cycles through input copies, or one slow
	// now and then, shows in their order, not in the median).
	Times []time.Duration
}

// MS is the median in milliseconds.
func (s Stats) MS() float64 { return s.Median.Seconds() * 1e3 }

// Summarize is the median (the upper one of an even count, as
// cuda.Launch.Time) and spread of ts.
func Summarize(ts []time.Duration, f Flush) Stats {
	if len(ts) == 0 {
		return Stats{Flush: f}
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	return Stats{Median: s[len(s)/2], Spread: s[len(s)-1] - s[0], N: len(s), Flush: f, Times: slices.Clone(ts)}
}

// msList is ts in milliseconds, nil for none.
func msList(ts []time.Duration) []float64 {
	if len(ts) == 0 {
		return nil
	}
	ms := make([]float64, len(ts))
	for i, t := range ts {
		ms[i] = t.Seconds() * 1e3
	}
	return ms
}
