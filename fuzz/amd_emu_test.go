package fuzz

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tilego/tilego/backend/hip/emu"
)

// Fuzzed programs emitted for gfx942 compute what the interpreter does
// when the HIP source itself runs, in backend/hip/emu's emulation of the
// device: the checker's GPU path (poisoned outputs, accumulated outputs'
// start values, the program's tolerance) with the emulator for the GPU.
// The waves are staggered, so a barrier missing between waves shows.
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
	c := &Checker{Archs: []string{"gfx942"}}
	var (
		mu            sync.Mutex
		ran, refused  int
		wg            sync.WaitGroup
		sem           = make(chan struct{}, 2)
		slowest       time.Duration
		slowestSeed   uint64
		unsupportedBy []uint64
		overLimit     []uint64
	)
	for s := uint64(1); s <= uint64(n); s++ {
		tr := c.cpu(Generate(s, Defaults()))
		switch {
		case tr.out.Kind == Refused:
			refused++
			continue
		case tr.out.Failed():
			t.Errorf("seed %d: %s", s, tr.out.Summary())
			continue
		}
		if err := emu.Fits(tr.progs[0]); err != nil {
			// Compile does not hold gfx942's limits (Build with its Limits
			// would): the device would refuse the launch. Still emulated.
			overLimit = append(overLimit, s)
			t.Logf("seed %d: a gfx942 device would not launch it: %v", s, err)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			got := clone(tr.args)
			err := emu.RunWith(tr.progs[0], got, emu.Options{Stagger: 100 * time.Microsecond})
			d := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if d > slowest {
				slowest, slowestSeed = d, s
			}
			switch {
			case emu.IsKind(err, emu.Unsupported):
				unsupportedBy = append(unsupportedBy, s)
				t.Logf("seed %d: %v", s, err)
				return
			case err != nil:
				t.Errorf("seed %d: %v", s, err)
				return
			}
			ran++
			if msg := compareOutputs(tr.fn, got, tr.want, tr.p.Tolerance()); msg != "" {
				t.Errorf("seed %d: emulated gfx942 mismatch: %s", s, msg)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d programs ran in the emulator (%d refused for gfx942, %d not emulated %v, %d over gfx942's limits %v); slowest: seed %d, %s",
		ran, n, refused, len(unsupportedBy), unsupportedBy, len(overLimit), overLimit, slowestSeed, slowest.Round(time.Millisecond))
	if ran < n/3 {
		t.Errorf("only %d of %d programs ran", ran, n)
	}
}
