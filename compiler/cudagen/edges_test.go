package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/testprog"
)

// Every edge program builds with each target's limits, so compiles.
func TestEdgeProgramsBuild(t *testing.T) {
	for name, prog := range testprog.Edges {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			if _, err := prog().Build(Limits(arch)); err != nil {
				t.Errorf("%s on %s: %v", name, arch, err)
			}
		}
	}
}

// The examples the GPU tests run at odd sizes build and compile for both
// CUDA targets (8-bit GEMMs for sm_90a only).
func TestExampleProgramsCompile(t *testing.T) {
	for name, ex := range testprog.Examples {
		for _, arch := range []string{"sm_80", "sm_90a"} {
			if name == "gemm_fp8" && arch == "sm_80" {
				continue
			}
			fn, err := ex.Prog().Build(Limits(arch))
			if err != nil {
				t.Fatalf("%s on %s: %v", name, arch, err)
			}
			if _, err := Compile(fn, Options{Arch: arch}); err != nil {
				t.Errorf("%s on %s: %v", name, arch, err)
			}
		}
	}
}

// Two GEMMs of one iteration are in flight together on wgmma: the first
// waited for (leaving one group) before its result is read, the second
// before its own, every group at the iteration's end; with a producer
// warpgroup, before the consumers free the tiles' ring slot.
func TestGemmsWaitedWhereUsed(t *testing.T) {
	for _, name := range []string{"gemms_waited_where_used", "gemms_waited_where_used_ws"} {
		fn, err := testprog.Edges[name]().Build(Limits("sm_90a"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(fn, Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		src := p.Source
		first, second := strings.Index(src, "tl::wgmma_commit();"), strings.LastIndex(src, "tl::wgmma_commit();")
		w1, w0 := strings.Index(src, "tl::wgmma_wait<1>();"), strings.LastIndex(src, "tl::wgmma_wait<0>();")
		if first < 0 || second == first || w1 < second || w0 < w1 {
			t.Errorf("%s: want two commits, then wait<1>, then wait<0>:\n%s", name, src)
		}
		if free := strings.LastIndex(src, "tl::mbar_arrive(tl::smem_addr"); strings.HasSuffix(name, "_ws") && (free < 0 || free < w0) {
			t.Errorf("%s: the consumers free the ring slot (at %d) before waiting for the GEMMs (at %d):\n%s", name, free, w0, src)
		}
	}
}

// The emitted source of the programs the fuzzer found: no bulk store
// between types, no "--" of a negated negative constant.
func TestFuzzFoundSources(t *testing.T) {
	for _, c := range []struct{ prog, arch, not string }{
		{"tma_store_other_type", "sm_90a", "tl::tma_store"},
		{"negated_negative_constant", "sm_80", "--3"},
		{"gemm_transb_second_panel", "sm_90a", "db_base + (64)"},
		{"deferred_reads_body_load", "sm_80", "cp_async_wait<1>"},
	} {
		fn, err := testprog.Edges[c.prog]().Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(fn, Options{Arch: c.arch})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.Source, c.not) {
			t.Errorf("%s on %s: %q in\n%s", c.prog, c.arch, c.not, p.Source)
		}
	}
}
