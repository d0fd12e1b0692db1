package kernels_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// The MLA programs generate CUDA on both code paths at the registry's GPU
// configs for each architecture, split or not (no GPU needed: the source
// is not compiled here).
func TestMLAEmitCUDA(t *testing.T) {
	e, err := kernels.Lookup("mla-decode")
	if err != nil {
		t.Fatal(err)
	}
	for _, hq := range []int{16, 32, 128} {
		for _, sq := range []int{1, 2} {
			for _, splits := range []string{"1", "3"} {
				vals := map[string]string{"heads": fmt.Sprint(hq), "seq-q": fmt.Sprint(sq), "splits": splits, "mean-kv": "300"}
				p, err := e.Problem(vals)
				if err != nil {
					t.Fatal(err)
				}
				for _, arch := range []string{"sm_80", "sm_90a"} {
					steps, err := p.(kernels.Chain).Steps(kernels.GPUConfigFor(p, arch))
					if err != nil {
						t.Fatal(err)
					}
					for _, st := range steps {
						fn, err := st.Func.Build(ir.DefaultLimits)
						if err != nil {
							t.Fatalf("%v: %v", vals, err)
						}
						prog, err := cudagen.Compile(fn, cudagen.Options{Arch: arch})
						if err != nil {
							t.Errorf("%v %s %s: %v", vals, fn.Name, arch, err)
							continue
						}
						if !strings.Contains(prog.Source, "__global__") {
							t.Errorf("%v %s %s: no kernel in the source", vals, fn.Name, arch)
						}
						// The split kernel's producer (sm_90a, 64-row blocks)
						// walks pieces with Q as the walk's tile: its second
						// page waits for Q and the first at the start (ws.go's
						// firstFill); no other program has that wait.
						want := 0
						if arch == "sm_90a" && fn.Name == "mla_decode" && hq == 128 && splits == "3" {
							want = 1
						}
						if got := strings.Count(prog.Source, "the first tiles first"); got != want && (want == 1 || arch == "sm_80" || fn.Name == "mla_combine") {
							t.Errorf("%v %s %s: %d first-fill waits, want %d", vals, fn.Name, arch, got, want)
						}
					}
				}
			}
		}
	}
}

// Merge's split kernel is one program whose blocks wait for each other:
// compiled cooperative, with one wait (the merger's) and one count (the
// other pieces'); Early's split kernel counts its pieces but never waits,
// and launches plainly.
func TestMLAMergeEmit(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	handoff := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true}
	merge, early := handoff, handoff
	merge.Merge, early.Early = true, true
	for _, tc := range []struct {
		name         string
		c            kernels.MLAConfig
		coop         bool
		waits, count int
	}{
		{"merge", merge, true, 1, 1},
		{"early", early, false, 0, 1},
	} {
		fn, err := kernels.MLADecodeSplit(s, tc.c).Build(ir.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if prog.Cooperative != tc.coop {
			t.Errorf("%s: Cooperative %v, want %v", tc.name, prog.Cooperative, tc.coop)
		}
		if w, n := strings.Count(prog.Source, "tl::wait_count("), strings.Count(prog.Source, "tl::signal("); w != tc.waits || n != tc.count {
			t.Errorf("%s: %d waits and %d signals, want %d and %d", tc.name, w, n, tc.waits, tc.count)
		}
	}
	if got := len(kernels.MLASplitSteps(s, merge)); got != 1 {
		t.Errorf("Merge runs %d programs, want the split kernel alone", got)
	}
}

// The hand-off kernel's proxy fences: warpgroup 0 fences P and the row
// factors right before it hands them over, and waits for warpgroup 1's
// hand-back without another (it wrote nothing in between: the fence there
// cost 0.6% at b64 h_q 128 kv8k, docs/perf.md).
func TestMLAHandoffFences(t *testing.T) {
	s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
	c := kernels.MLAConfig{M: 64, Stages: 2, Threads: 256, WS: true, SplitN: true, Roles: true, Handoff: true, Early: true}
	fn, err := kernels.MLADecodeSplit(s, c).Build(ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(prog.Source, "\n")
	handoffs, backs := 0, 0
	for i, l := range lines {
		prev := ""
		if i > 0 {
			prev = strings.TrimSpace(lines[i-1])
		}
		switch {
		case strings.Contains(l, "// hand-off to the other warpgroup"):
			handoffs++
			if prev != "tl::fence_proxy_async();" {
				t.Errorf("line %d: hand-off without a fence before it: %q", i+1, prev)
			}
		case strings.Contains(l, "bar_sync_apart") && strings.Contains(l, "// the other warpgroup's hand-off"):
			backs++
			if prev == "tl::fence_proxy_async();" {
				t.Errorf("line %d: a fence before the hand-back wait, with nothing written since the last", i+1)
			}
		}
	}
	if handoffs != 1 || backs != 1 {
		t.Errorf("%d hand-offs and %d hand-back waits, want 1 and 1", handoffs, backs)
	}
}
