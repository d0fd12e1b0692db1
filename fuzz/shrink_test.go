package fuzz

import (
	"strings"
	"testing"
)

// countOps counts the ops of a tree.
func countOps(ops []Op) int {
	n := 0
	walkOps(ops, func(*Op) { n++ })
	return n
}

// A synthetic failure (any program with a sum reduction fails "the same
// way") shrinks to a valid program with far fewer ops, still failing.
func TestShrinkSynthetic(t *testing.T) {
	hasSum := func(p *Prog) bool {
		found := false
		walkOps(p.Body, func(o *Op) { found = found || o.Kind == OpReduce && o.Reduce == 0 })
		return found
	}
	check := func(p *Prog) Outcome {
		if _, err := p.IR(); err != nil {
			return Outcome{Seed: p.Seed, Kind: Rejected, Msg: err.Error()}
		}
		if hasSum(p) {
			return Outcome{Seed: p.Seed, Kind: EmitError, Arch: "sm_80", Msg: "synthetic: a sum"}
		}
		return Outcome{Seed: p.Seed}
	}
	shrunk := 0
	for seed := uint64(0); seed < 200 && shrunk < 3; seed++ {
		p := Generate(seed, Defaults())
		want := check(p)
		if !want.Failed() {
			continue
		}
		small, tries := Shrink(p, want, check, 2000)
		if got := check(small); !got.same(want) {
			t.Fatalf("seed %d: the shrunk program no longer fails: %+v\n%s", seed, got, small.GoSource())
		}
		before, after := countOps(p.Body), countOps(small.Body)
		t.Logf("seed %d: %d ops, %d buffers -> %d ops, %d buffers in %d tries", seed, before, len(p.Bufs), after, len(small.Bufs), tries)
		if after >= before || after > 6 || len(small.Bufs) >= len(p.Bufs) {
			t.Errorf("seed %d: shrunk only to %d ops (from %d), %d buffers (from %d):\n%s", seed, after, before, len(small.Bufs), len(p.Bufs), small.GoSource())
		}
		if !strings.Contains(small.GoSource(), "k.ReduceSum(") {
			t.Errorf("seed %d: the reproducer lost its sum:\n%s", seed, small.GoSource())
		}
		shrunk++
	}
	if shrunk == 0 {
		t.Fatal("no seed drew a sum")
	}
}

// A tile the body never names gets "_ = name", so the reproducer compiles.
func TestUseTiles(t *testing.T) {
	src := "\ts3 := k.Shared(tl.F32, 4).Named(\"s3\")\n\ts4 := k.Shared(tl.F32, 4).Named(\"s4\")\n\tk.Fill(s4, 0)"
	got := useTiles(src, []Buf{{Name: "s3", Scope: Shared}, {Name: "s4", Scope: Shared}})
	want := "\ts3 := k.Shared(tl.F32, 4).Named(\"s3\")\n\t_ = s3\n\ts4 := k.Shared(tl.F32, 4).Named(\"s4\")\n\tk.Fill(s4, 0)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
