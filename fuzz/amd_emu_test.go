package fuzz

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
)

// Fuzzed programs emitted for gfx942 compute what the interpreter does
// when the HIP source itself runs, in backend/hip/emu's emulation of the
// device: the checker's emulated path (Checker.Emulate: poisoned outputs,
// accumulated outputs' start values, the program's tolerance, waves
// staggered so that a barrier missing between waves shows).
// TILEGO_AMD_EMU_SEEDS=n runs the first n seeds.
func TestAMDEmulated(t *testing.T) {
	if _, err := exec.LookPath(emu.Clang); err != nil {
		t.Fatalf("%s not found (apt-get install clang-19): %v", emu.Clang, err)
	}
	n := 40
	if testing.Short() {
		n = 12
	}
	if v := os.Getenv("TILEGO_AMD_EMU_SEEDS"); v != "" { // a longer run: seeds 1..v
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("TILEGO_AMD_EMU_SEEDS=%q: %v", v, err)
		}
	}
	var ps []*Prog
	for s := uint64(1); s <= uint64(n); s++ {
		ps = append(ps, Generate(s, Defaults()))
	}
	c := &Checker{Archs: []string{"gfx942"}, Emulate: true}
	ran, refused, skipped := 0, 0, 0
	for i, o := range c.CheckAll(ps, 2) {
		switch {
		case o.Kind == Refused:
			refused++
		case o.Failed():
			t.Errorf("seed %d: %s", ps[i].Seed, o.Summary())
		case o.Skipped:
			skipped++
		default:
			ran++
		}
	}
	t.Logf("%d of %d programs ran in the emulator (%d refused for gfx942, %d not emulated)", ran, n, refused, skipped)
	if ran < n/3 {
		t.Errorf("only %d of %d programs ran", ran, n)
	}
}
