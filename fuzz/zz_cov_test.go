package fuzz

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestCovCorpus(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FUZZ_COV_N"))
	if n == 0 {
		t.Skip()
	}
	var ps []*Prog
	for i := range n {
		ps = append(ps, Generate(uint64(7_000_000+i), Switches{}))
	}
	for _, o := range (&Checker{}).CheckAll(ps, runtime.GOMAXPROCS(0)) {
		if o.Failed() {
			t.Log(o.Summary())
		}
	}
}
