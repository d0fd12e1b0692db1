package main

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/internal/srcline"
)

// emit --target builds with the target's limits and rules (cudagen.Limits):
// what the CUDA compiler cannot lower is refused at Build, naming the op's
// file:line and the rule, and what once panicked emits (issue 50).
func TestEmitTargetRules(t *testing.T) {
	cases := []struct {
		code int
		want string // in stdout when code is 0, else in stderr
		args []string
	}{
		{2, "config splitn with threads=64", []string{"emit", "mla-decode", "--target", "sm_90a", "--config", "threads=64 splitn=true m=64"}}, // once a divide by zero in the emitter
		{1, srcline.Find("kernels/attn_loop.go", "k.Gemm(P, vs, acc") + ": gemm: policy fullrow: 100 columns cannot be cut in 8-column pieces; nor can wgmma: N = 100 is not a multiple of 8", []string{"emit", "flash-attention", "--target", "sm_90a", "--dim", "100"}},
		{2, "config bk=8: must be a positive multiple of 16", []string{"emit", "gemm", "--target", "sm_90a", "--k", "8", "--config", "bk=8"}}, // the Gemm's K: refused at Build by cudagen.Limits too (TestLimitsBuild)
		{1, "over sm_80's 166912 per block", []string{"emit", "flash-attention", "--target", "sm_80", "--dim", "256", "--causal", "--config", "n=64"}},
		{0, "__global__", []string{"emit", "flash-attention", "--target", "sm_80", "--dim", "256", "--causal"}}, // the sm_8x default fits
	}
	for _, c := range cases {
		out, stderr := tilegoOut(t, c.code, c.args...)
		if c.code == 0 {
			stderr = out
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("tilego %s: %q, want %q", strings.Join(c.args, " "), stderr, c.want)
		}
	}
}
