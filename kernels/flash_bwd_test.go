package kernels

import (
	"fmt"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
)

// The backward's three programs on the interpreter against
// ref.AttentionGrads, every element of dQ, dK and dV, on inputs whose O
// and LSE are the float64 forward's (O rounded to the inputs' type).
func TestAttnBwdInterp(t *testing.T) {
	base := AttnShape{B: 2, H: 2, HKV: 2, Sq: 80, Skv: 80, Dqk: 32, Dv: 32, DType: ir.BF16}
	cfg := AttnConfig{M: 32, N: 32, Stages: 1, Threads: 128}
	cases := []struct {
		name string
		edit func(*AttnShape)
		conf func(*AttnConfig) // nil: cfg
	}{
		{"mha", func(*AttnShape) {}, nil},
		{"causal", func(s *AttnShape) { s.Causal = true }, nil},
		{"gqa_bshd", func(s *AttnShape) { s.H, s.HKV, s.BSHD = 4, 2, true }, nil},
		{"causal_sq<skv_dv", func(s *AttnShape) { s.Sq, s.Skv, s.Dv, s.Causal = 50, 97, 16, true }, nil},
		{"causal_sq>skv", func(s *AttnShape) { s.Sq, s.Skv, s.Causal = 97, 50, true }, nil}, // rows that see no key
		{"f16_scale", func(s *AttnShape) { s.DType, s.Scale = ir.F16, 0.3 }, nil},
		{"mqa_stages2", func(s *AttnShape) { s.Causal, s.H, s.HKV = true, 4, 1 }, func(c *AttnConfig) { c.Stages = 2 }},
		{"sharedp_causal_gqa", func(s *AttnShape) { s.Causal, s.H, s.HKV, s.Sq = true, 4, 2, 70 }, func(c *AttnConfig) { c.SharedP = true }},
		// whole tiles unmasked: below the diagonal, past the edges, rows that see no key
		{"whole_causal", func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 130, 130 }, func(c *AttnConfig) { c.WholeTiles = true }},
		{"whole_causal_sq<skv", func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 50, 97 }, func(c *AttnConfig) { c.WholeTiles = true }},
		{"whole_causal_sq>skv", func(s *AttnShape) { s.Causal, s.Sq, s.Skv = true, 97, 50 }, func(c *AttnConfig) { c.WholeTiles = true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := base, cfg
			tc.edit(&s)
			if tc.conf != nil {
				tc.conf(&c)
			}
			args := AttnBwdInputs(s, 5)
			if err := RunSteps(AttnBwdSteps(s, c), args, ir.DefaultLimits, interp.Run); err != nil {
				t.Fatal(err)
			}
			// Every element, within the forward's bound (bf16: 0.0023-0.0026
			// measured, about the outputs' own rounding; f16 0.0003-0.0004).
			if r := AttnBwdCheck(s, args, 1); r.Checked != "all" || !r.OK() {
				t.Errorf("%s (checked %s)", r, r.Checked)
			}
		})
	}
}

// A wrong gradient fails: the check above is not vacuous.
func TestAttnBwdInterpCatchesError(t *testing.T) {
	s := AttnShape{B: 1, H: 2, HKV: 1, Sq: 40, Skv: 40, Dqk: 32, Dv: 32, DType: ir.BF16}
	args := AttnBwdInputs(s, 5)
	if err := RunSteps(AttnBwdSteps(s, AttnConfig{M: 32, N: 32, Stages: 1, Threads: 128}), args, ir.DefaultLimits, interp.Run); err != nil {
		t.Fatal(err)
	}
	want := ref.Attn{Scale: s.SoftmaxScale() * 1.05}.AttentionGrads(args[bwdQ], args[bwdK], args[bwdV], args[bwdDO])
	var d ref.Diff
	n := 0
	args[bwdDK].Each(func(idx []int) {
		d.Add(args[bwdDK].At(idx...), want.DK[n])
		n++
	})
	if d.Rel() <= Tolerance(s.DType) {
		t.Errorf("a 5%% wrong scale passed: %s", fmt.Sprint(&d))
	}
}

// The registry's flash-attention-bwd runs its steps on the interpreter and
// passes its own check, whole and sampled; a dK off by 3% fails both.
func TestAttnBwdProblemCheck(t *testing.T) {
	p := mustProblem(t, "flash-attention-bwd", map[string]string{"heads": "4", "heads-kv": "2", "seq-q": "70", "seq-kv": "90", "causal": "true", "layout": "bshd"})
	ch := p.(Chain)
	steps, err := ch.Steps(p.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	args := p.Inputs(3)
	if err := RunSteps(steps, args, ir.DefaultLimits, interp.Run); err != nil {
		t.Fatal(err)
	}
	bp := p.(*attnBwdProblem)
	checks := map[string]func() Report{
		"whole":   func() Report { return p.Check(args, 1) },
		"sampled": func() Report { return bp.checkSampled(args, 1) },
	}
	for name, check := range checks {
		if r := check(); !r.OK() {
			t.Errorf("%s: %s", name, r)
		}
	}
	_, _, _, _, _, dk, _ := AttnBwdTensors(args)
	for i := range dk.Data {
		dk.Data[i] *= 1.03
	}
	for name, check := range checks {
		if r := check(); r.OK() {
			t.Errorf("%s passed a dK off by 3%%: %s", name, r)
		}
	}
	if got := p.FLOPs(); got != 2*4*70*90*(3*64+2*64)/2 {
		t.Errorf("FLOPs %g", got)
	}
}

// A Derived backward's inputs from its Source (the forward kernel, here on
// the interpreter) match Inputs' float64 O and LSE within the forward's
// tolerance, and the backward run on them passes its float64 check: the
// padded backward with a score modifier and GQA, and the varlen one.
func TestAttnBwdInputsFromForward(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		vals   map[string]string
	}{
		{"flash-attention-bwd", map[string]string{"batch": "1", "heads": "4", "heads-kv": "2", "seq-q": "70", "dim": "32",
			"causal": "true", "layout": "bshd", "softcap": "20"}},
		{"flash-attention-varlen-bwd", map[string]string{"lens": "17,40,1", "heads": "4", "heads-kv": "2", "dim": "32", "causal": "true"}},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			e, err := Lookup(tc.kernel)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Problem(tc.vals)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := p.(Derived)
			if !ok {
				t.Fatalf("%T is not Derived", p)
			}
			src := d.Source()
			sargs := src.Inputs(3)
			runInterp(t, src, sargs)
			got, want := d.Finish(sargs, 3), p.Inputs(3)
			if len(got) != len(want) {
				t.Fatalf("%d tensors from the forward, %d from Inputs", len(got), len(want))
			}
			for _, i := range []int{bwdQ, bwdK, bwdDO, bwdO, bwdLSE} {
				var diff ref.Diff
				want[i].Each(func(idx []int) { diff.Add(got[i].At(idx...), want[i].At(idx...)) })
				if diff.Rel() > Tolerance(ir.BF16) {
					t.Errorf("tensor %d: the forward's differs from the float64 one: %s", i, &diff)
				}
			}
			runInterp(t, p, got)
			if r := p.Check(got, 1); !r.OK() {
				t.Errorf("backward on the forward's O and LSE: %s", r)
			}
		})
	}
}

// runInterp runs p at its default config on the interpreter over args (a
// Chain's every step).
func runInterp(t *testing.T, p Problem, args []*tensor.Tensor) {
	t.Helper()
	c := p.DefaultConfig()
	if ch, ok := p.(Chain); ok {
		steps, err := ch.Steps(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := RunSteps(steps, args, ir.DefaultLimits, interp.Run); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := Build(p, c, ir.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if err := interp.Run(f, args); err != nil {
		t.Fatal(err)
	}
}
