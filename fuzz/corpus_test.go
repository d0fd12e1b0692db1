package fuzz

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestCorpus runs FUZZ_CORPUS_N programs (skipped when unset) through the
// CPU checks: a corpus for measuring which emitter code the fuzzer reaches,
//
//	FUZZ_CORPUS_N=2000 go test ./fuzz -run TestCorpus -coverpkg=./compiler/cudagen/ -coverprofile=cov.out
//	go tool cover -func=cov.out
func TestCorpus(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FUZZ_CORPUS_N"))
	if n <= 0 {
		t.Skip("FUZZ_CORPUS_N unset")
	}
	var ps []*Prog
	for i := range n {
		ps = append(ps, Generate(uint64(7_000_000+i), Defaults()))
	}
	for _, o := range (&Checker{}).CheckAll(ps, runtime.GOMAXPROCS(0)) {
		if o.Failed() {
			t.Error(o.Summary())
		}
	}
}
