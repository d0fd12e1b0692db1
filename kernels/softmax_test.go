package kernels

import (
	"math"
	"testing"

	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
)

// With the maximum kept (head dim 256), rows whose maximum grows by more
// than the margin in a later KV tile take the new one and rows whose
// maximum grows by less keep the old, their probabilities above one: both
// must match float64. K's key tiles are scaled so that some rows do each
// (the test checks that they do), on the interpreter, with the grid and the
// persistent walk, MHA and causal.
func TestKeptMaximum(t *testing.T) {
	const n = 32
	for _, tc := range []struct {
		name   string
		causal bool
		cfg    AttnConfig
	}{
		{"grid", false, AttnConfig{M: 32, N: n, Stages: 2, Threads: 128}},
		{"grid_causal", true, AttnConfig{M: 32, N: n, Stages: 2, Threads: 128}},
		{"persistent", false, AttnConfig{M: 32, N: n, Stages: 2, Threads: 128, Persistent: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := AttnShape{B: 1, H: 2, HKV: 2, Sq: 64, Skv: 96, Dqk: 256, Dv: 256, DType: ir.BF16, Causal: tc.causal}
			if s.Dv < keepMaxCols {
				t.Fatalf("d%d does not keep the maximum", s.Dv)
			}
			args := AttentionInputs(s, 11)
			q, k := args[0], args[1]
			gain := []float64{0.25, 1.5, 12} // key tiles 0, 1, 2: a small first maximum, then growth past the margin
			for h := range s.HKV {
				for j := range s.Skv {
					for d := range s.Dqk {
						k.Set(k.At(0, h, j, d)*gain[j/n], 0, h, j, d)
					}
				}
			}
			// How each row's maximum (base 2, scaled) grows from tile to tile.
			scale := s.SoftmaxScale() * math.Log2E
			within, past := 0, 0
			rowMax := func(h, i, tile int) float64 {
				m := math.Inf(-1)
				for j := tile * n; j < (tile+1)*n && j < s.Skv; j++ {
					if s.Causal && j > i+s.Skv-s.Sq {
						break
					}
					dot := 0.0
					for d := range s.Dqk {
						dot += q.At(0, h, i, d) * k.At(0, h, j, d)
					}
					m = math.Max(m, dot*scale)
				}
				return m
			}
			for h := range s.H {
				for i := range s.Sq {
					run := rowMax(h, i, 0)
					for tile := 1; tile*n < s.Skv; tile++ {
						m := rowMax(h, i, tile)
						switch g := m - run; {
						case g > maxMargin:
							past++
						case g > 0:
							within++
						}
						run = math.Max(run, m)
					}
				}
			}
			if within == 0 || past == 0 {
				t.Fatalf("inputs grow %d row maxima within the margin and %d past it; want some of each", within, past)
			}
			fn, err := FlashAttention(s, tc.cfg).Build()
			if err != nil {
				t.Fatal(err)
			}
			if err := interp.Run(fn, args); err != nil {
				t.Fatal(err)
			}
			var do, dl ref.Diff
			CheckAttentionRows(s, args, AllRows(s), &do, &dl)
			t.Logf("%d tile maxima grew within the margin, %d past it; O rel %.3g, LSE rel %.3g", within, past, do.Rel(), dl.Rel())
			if do.Bad > 0 || dl.Bad > 0 || do.Rel() > Tolerance(s.DType) || dl.Rel() > 1e-4 {
				t.Errorf("O: %s; LSE: %s", &do, &dl)
			}
		})
	}
}
