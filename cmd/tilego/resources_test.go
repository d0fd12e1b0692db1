package main

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cpu"
	"github.com/tilego/tilego/kernels"
)

// fakeCUDA is a backend that is not the interpreter, for the GPU's checks.
type fakeCUDA struct{ cpu.Backend }

func (fakeCUDA) Name() string   { return "cuda" }
func (fakeCUDA) Device() string { return "Fake GPU" }

// A run is refused, in one line saying how much it needs and how much
// there is, when its tensors do not fit in the host's memory (float64) or
// the GPU's (their dtypes), or its interpreter work is past --max-gflop.
func TestResourceLimits(t *testing.T) {
	const gib = 1 << 30
	savedHost, savedGPU := hostMemory, gpuFree
	t.Cleanup(func() { hostMemory, gpuFree = savedHost, savedGPU })
	for _, tc := range []struct {
		name       string
		kernel     string
		flags      map[string]string
		gpu        bool
		host, free uint64
		maxGFLOP   float64 // the interpreter's bound; 0 none
		want       string  // "" accepts
	}{
		{"issue 50's gemm", "gemm", map[string]string{"m": "1000000", "n": "100000", "k": "64"}, false, 64 * gib, 0, 0,
			"GiB of host memory (its tensors as float64, their copies and the check), 64 GiB available (test)"},
		{"default gemm fits", "gemm", nil, false, 1 * gib, 0, 100, ""},
		{"gemm on a GPU: host copies", "gemm", map[string]string{"m": "65536", "n": "65536", "k": "64"}, true, 16 * gib, 100 * gib, 0,
			"needs about 48.2 GiB of host memory"},
		{"gemm on a GPU: device", "gemm", map[string]string{"m": "65536", "n": "65536", "k": "64"}, true, 64 * gib, 8 * gib, 0,
			"needs about 16.3 GiB of GPU memory (its tensors in their dtypes, and the run's own), 8 GiB free on Fake GPU"},
		{"gemm on a GPU: the upload's copies (killed on an H200 host)", "gemm", map[string]string{"m": "300000", "n": "50000", "k": "64"}, true, 125 * gib, 139 * gib, 0,
			"needs about 168 GiB of host memory"},
		{"gemm on a GPU fits", "gemm", map[string]string{"m": "65536", "n": "65536", "k": "64"}, true, 64 * gib, 20 * gib, 0, ""},
		{"issue 50's attention: work", "flash-attention", map[string]string{"seq-q": "1000000"}, false, 64 * gib, 0, 100,
			"about 1.025e+06 GFLOP of work (its FLOPs, and 1000 a tensor element), over --max-gflop 100"},
		{"attention unbounded: memory", "flash-attention", map[string]string{"seq-q": "1000000", "heads": "16"}, false, 16 * gib, 0, 0,
			"GiB of host memory (its tensors as float64, their copies and the check), 16 GiB available (test)"},
		{"mla splits: elements count as work", "mla-decode", map[string]string{"splits": "65536"}, false, 64 * gib, 0, 100,
			"over --max-gflop 100"},
		{"bwd default fits", "flash-attention-bwd", nil, false, 4 * gib, 0, 100, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostMemory = func() (uint64, string) { return tc.host, "test" }
			gpuFree = func(backend.Backend) (uint64, error) { return tc.free, nil }
			e, err := kernels.Lookup(tc.kernel)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Problem(tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			var be backend.Backend = cpu.Backend{}
			if tc.gpu {
				be = fakeCUDA{}
			} else {
				err = checkInterpWork(p, 1, tc.maxGFLOP)
			}
			if err == nil {
				err = checkMemory(p, be, 0)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// MemAvailable is read from /proc/meminfo's text, and a cgroup's limit
// lowers it.
func TestHostMemoryParsing(t *testing.T) {
	for _, tc := range []struct {
		meminfo string
		want    uint64
		ok      bool
	}{
		{"MemTotal:       32768000 kB\nMemFree:  1000 kB\nMemAvailable:   24108480 kB\n", 24108480 << 10, true},
		{"MemTotal: 1 kB\n", 0, false},
		{"MemAvailable: lots kB\n", 0, false},
		{"MemAvailable: 12 MB\n", 0, false},
		{"", 0, false},
	} {
		if got, ok := memAvailable([]byte(tc.meminfo)); got != tc.want || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.meminfo, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		max, current string
		want         uint64
		ok           bool
	}{
		{"8589934592\n", "1073741824\n", 7 << 30, true},
		{"max\n", "1073741824\n", 0, false},
		{"1024\n", "4096\n", 0, true},
	} {
		if got, ok := cgroupLeft([]byte(tc.max), []byte(tc.current)); got != tc.want || ok != tc.ok {
			t.Errorf("cgroup %q %q: %d %v, want %d %v", tc.max, tc.current, got, ok, tc.want, tc.ok)
		}
	}
	if have, from := hostAvailable(); have == 0 || from == "" {
		t.Errorf("this machine: %d bytes from %q", have, from)
	}
}
