package cudagen

import (
	"fmt"
	"strings"

	"github.com/tilego/tilego/ir"
)

// The TILEGO_DUMP views of the planning steps: what each decided, one
// line a decision, in program order.

// loopsWhere lists, in program order, the loops for which has is true.
func loopsWhere(c *compilation, has func(*ir.For) bool) []*ir.For {
	var out []*ir.For
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		if f, ok := s.(*ir.For); ok && has(f) {
			out = append(out, f)
		}
	})
	return out
}

func lines(out []string, none string) string {
	if len(out) == 0 {
		return none
	}
	return strings.Join(out, "\n")
}

func dumpSplit(c *compilation) string {
	var out []string
	for _, f := range loopsWhere(c, func(f *ir.For) bool { return c.split[f] != nil }) {
		out = append(out, fmt.Sprintf("loop %s: K and V on rings of their own", f.Var.Name))
	}
	return lines(out, "no loop splits its rings")
}

func dumpTMA(c *compilation) string {
	var out []string
	for _, f := range loopsWhere(c, func(f *ir.For) bool { return c.tma[f] != nil }) {
		out = append(out, fmt.Sprintf("loop %s: %d prefetched copies by TMA", f.Var.Name, len(c.tma[f].copies)))
	}
	return lines(out, "no loop loads by TMA")
}

func dumpTMAStores(c *compilation) string {
	var out []string
	ir.Walk(c.f.Kernel.Body, func(s ir.Stmt) {
		if cp, ok := s.(*ir.Copy); ok && c.tmaStores[cp] != nil {
			out = append(out, fmt.Sprintf("%s -> %s: TMA stores of %d panels", cp.Src.Buf.Name, cp.Dst.Buf.Name, c.tmaStores[cp].panels))
		}
	})
	return lines(out, "no copy stores by TMA")
}

func dumpWS(c *compilation) string {
	if c.ws == nil {
		return "no producer warpgroup"
	}
	s := fmt.Sprintf("a producer warpgroup issues loop %s's loads for %d consumer threads", c.ws.loop.Var.Name, c.ws.consumers)
	if c.ws.walk != nil {
		s += fmt.Sprintf(", walking loop %s", c.ws.walk.loop.Var.Name)
	}
	return s
}

func dumpCluster(c *compilation) string {
	if !c.cluster {
		return "no clusters"
	}
	return "blocks in clusters of two multicast the producer's ring tiles"
}

func dumpWarpgroupEpilogue(c *compilation) string {
	if c.halves == nil {
		return "no epilogue by halves"
	}
	return "the consumer warpgroups store their halves of the output apart"
}

func dumpHandoff(c *compilation) string {
	if c.handoff == nil {
		return "no hand-offs"
	}
	return fmt.Sprintf("loop %s: %d warpgroup blocks hand shared tiles to each other", c.ws.loop.Var.Name, len(c.handoff.blocks))
}

func dumpPingPong(c *compilation) string {
	if !c.turns {
		return "no turns"
	}
	return fmt.Sprintf("loop %s: the consumer warpgroups take turns issuing its wgmmas", c.ws.loop.Var.Name)
}

func dumpPersistentRelease(c *compilation) string {
	if c.walkEarly == nil {
		return "no early release of the walk's tiles"
	}
	return fmt.Sprintf("loop %s: the walk's tiles are released after their last read in the last iteration", c.walkEarly.v)
}
