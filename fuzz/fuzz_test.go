package fuzz

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Programs run through build, the interpreter and both emitters on the CPU:
// fixed seeds, and a fresh one each run, printed so that a failure can be
// reproduced (tilego fuzz --n 100 --seed S). A program the verifier
// refuses is a generator bug and fails the test too.
func TestFuzzCPU(t *testing.T) {
	fresh := uint64(time.Now().UnixNano())
	t.Logf("fresh seed: %d (reproduce: go run ./cmd/tilego fuzz --n 100 --seed %d)", fresh, fresh)
	cases := []struct {
		name  string
		first uint64
		n     int
	}{
		{"fixed-1", 1, 100},
		{"fixed-1000000", 1_000_000, 100},
		{"fresh", fresh, 100},
	}
	if testing.Short() {
		for i := range cases {
			cases[i].n = 20
		}
	}
	c := &Checker{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ps []*Prog
			for i := range tc.n {
				ps = append(ps, Generate(tc.first+uint64(i), Defaults()))
			}
			for _, o := range c.CheckAll(ps, runtime.GOMAXPROCS(0)) {
				if o.Failed() && o.Kind != Refused {
					t.Errorf("%s\n%s", o.Summary(), o.Msg)
				}
			}
		})
	}
	t.Logf("emit: %v a program a target", c.EmitTime())
}

// Every op kind and scope the generator knows shows up in a few hundred
// programs (a generator that stopped drawing one would test less).
func TestGeneratorCoverage(t *testing.T) {
	kinds := map[Kind]int{}
	loops := map[LoopKind]int{}
	scopes := map[Scope]int{}
	var sym, strided, deferred, transA, transB, fragA, spread, region int
	for seed := range uint64(300) {
		p := Generate(seed, Defaults())
		if p.SymRows {
			sym++
		}
		if p.Spread > 0 {
			spread++
		}
		for _, b := range p.Bufs {
			scopes[b.Scope]++
			if b.Perm != nil {
				strided++
			}
			if b.Operand {
				fragA++
			}
		}
		walkOps(p.Body, func(o *Op) {
			kinds[o.Kind]++
			if o.Kind == OpLoop {
				loops[o.Loop]++
			}
			if o.Kind == OpDefer {
				deferred++
			}
			if o.Kind == OpCopy && (o.Src.Spec != nil && !p.Bufs[o.Src.Buf].Scope.global() || o.Dst.Spec != nil && !p.Bufs[o.Dst.Buf].Scope.global()) {
				region++
			}
			if o.Kind == OpGemm {
				if o.TransA {
					transA++
				}
				if o.TransB {
					transB++
				}
			}
		})
	}
	for k := OpCopy; k <= OpWarpgroup; k++ {
		if kinds[k] == 0 {
			t.Errorf("no op of kind %d", k)
		}
	}
	for l := Serial; l <= Pipelined; l++ {
		if loops[l] == 0 {
			t.Errorf("no loop of kind %d", l)
		}
	}
	for s := In; s <= Local; s++ {
		if scopes[s] == 0 {
			t.Errorf("no buffer of scope %d", s)
		}
	}
	for name, n := range map[string]int{"sym": sym, "strided": strided, "defer": deferred, "transA": transA, "transB": transB, "A fragment": fragA, "spread": spread, "shared region": region} {
		if n == 0 {
			t.Errorf("no program with %s", name)
		}
	}
}

// FuzzSeeds lets Go's fuzzing engine pick the seeds
// (go test ./fuzz -fuzz FuzzSeeds); as a plain test it runs its corpus.
func FuzzSeeds(f *testing.F) {
	for _, s := range []uint64{0, 42, 1 << 40} {
		f.Add(s)
	}
	c := &Checker{}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if o := c.Check(Generate(seed, Defaults())); o.Failed() && o.Kind != Refused {
			t.Fatalf("%s\n%s", o.Summary(), o.Msg)
		}
	})
}

// The generator draws loops whose body is two warpgroups' blocks handing
// a TMA-loaded tile over (handoffLoop), and on sm_90a they compile to
// hand-offs between the warpgroups, which no other generated program
// reaches.
func TestHandoffLoops(t *testing.T) {
	found := 0
	for seed := uint64(0); seed < 20000 && found < 2; seed++ {
		p := Generate(seed, Defaults())
		if !p.WS || !slices.ContainsFunc(p.Body, func(o Op) bool {
			return o.Kind == OpLoop && len(o.Body) == 3 && o.Body[1].Kind == OpWarpgroup
		}) {
			continue
		}
		found++
		fn, err := p.IR()
		if err != nil {
			t.Fatal(err)
		}
		prog, msg, _ := Emit(fn, "sm_90a")
		if msg != "" || !strings.Contains(prog.Source, "hand-off to the other warpgroup") {
			t.Errorf("seed %d: no hand-off (%s)", seed, msg)
		}
	}
	if found == 0 {
		t.Fatal("no hand-off loop in 20000 programs")
	}
}
