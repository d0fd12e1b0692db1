package kernels

import (
	"math"
	"slices"
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

// MLA keeps the maximum at every config: with the cache's pages scaled so
// that each request's maximum grows within the margin on its second page
// and past it on the third (gains 0.25, 1.5, 12), the single program's
// schedules (plain, warpgroup roles, hand-offs)
// match float64 on every row.
func TestKeptMaximumMLA(t *testing.T) {
	lens := []int32{200, 190}
	gain := []float64{0.25, 1.5, 12, 12}
	for _, name := range []string{"sq1_bf16", "hq16_padded_roles", "hq128_sq2_handoff"} {
		i := slices.IndexFunc(mlaCases(), func(c mlaCase) bool { return c.name == name })
		tc := mlaCases()[i]
		t.Run(name, func(t *testing.T) {
			fn, err := MLADecode(tc.s, tc.c).Build()
			if err != nil {
				t.Fatal(err)
			}
			args := MLAInputs(tc.s, lens, 5)
			pool, table := args[1], args[2]
			page, d := pool.Shape[1], pool.Shape[2]
			for b, n := range lens {
				for j := 0; j*page < int(n); j++ {
					blk := int(table.At(b, j))
					for r := range page {
						for c := range d {
							pool.Set(pool.At(blk, r, c)*gain[j], blk, r, c)
						}
					}
				}
			}
			// Request 0's first token: how its heads' maxima grow page by page.
			q, scale := args[0], tc.s.SoftmaxScale()*math.Log2E
			pageMax := func(h, j int) float64 {
				m, blk := math.Inf(-1), int(table.At(0, j))
				for r := range min(page, int(lens[0])-j*page) {
					dot := 0.0
					for c := range d {
						dot += q.At(0, 0, h, c) * pool.At(blk, r, c)
					}
					m = math.Max(m, dot*scale)
				}
				return m
			}
			within, past := 0, 0
			for h := range tc.s.Hq {
				m0, m1, m2 := pageMax(h, 0), pageMax(h, 1), pageMax(h, 2)
				if m1 > m0 && m1-m0 <= maxMargin {
					within++
				}
				if m2-math.Max(m0, m1) > maxMargin {
					past++
				}
			}
			if within == 0 || past == 0 {
				t.Fatalf("%d heads' maxima grew within the margin on page 1 and %d past it on page 2; want some of each", within, past)
			}
			if err := interp.Run(fn, args); err != nil {
				t.Fatal(err)
			}
			checkMLA(t, tc.s, args, lens)
		})
	}
}
