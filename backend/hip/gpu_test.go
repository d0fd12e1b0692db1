//go:build hip

package hip

import (
	"math"
	"testing"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
)

// On an MI300X (go test -tags hip ./backend/hip/): FlashAttention with
// its AMD config at an odd causal GQA shape, outputs poisoned, against
// float64.
func TestMI300X(t *testing.T) {
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := kernels.AttnShape{B: 2, H: 4, HKV: 2, Sq: 300, Skv: 517, Dqk: 128, Dv: 128, Causal: true, BSHD: true, DType: ir.BF16}
	fn, err := kernels.FlashAttention(s, kernels.AttnConfig{M: 64, N: 64, Stages: 1, Threads: 256}).Build(b.Limits())
	if err != nil {
		t.Fatal(err)
	}
	args := kernels.AttentionInputs(s, 3)
	for i, p := range fn.Params {
		if p.Output {
			for j := range args[i].Data {
				args[i].Data[j] = math.NaN()
			}
		}
	}
	if _, err := b.Run(fn, args, backendOpts()); err != nil {
		t.Fatal(err)
	}
	var do, dl ref.Diff
	kernels.CheckAttentionRows(s, args, kernels.AllRows(s), &do, &dl)
	if do.Bad > 0 || do.Rel() > kernels.Tolerance(s.DType) || dl.Rel() > kernels.LSETolerance {
		t.Errorf("O: %s; LSE: %s", &do, &dl)
	}
}

func backendOpts() backend.RunOptions { return backend.RunOptions{Repeats: 1} }
