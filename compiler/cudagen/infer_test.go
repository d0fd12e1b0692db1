package cudagen

import (
	"strings"
	"testing"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/layout"
)

// TestChooseWarps checks the warp split of a Gemm's output and that a
// split that cannot be made names the dimension at fault.
func TestChooseWarps(t *testing.T) {
	cases := []struct {
		name       string
		p          ir.Policy
		m, n, w    int
		aInRegs    bool
		want       layout.Warps
		wantErrSub string
	}{
		{"fullrow", ir.FullRow, 64, 64, 4, false, layout.Warps{M: 4, N: 1}, ""},
		{"fullrow_rows", ir.FullRow, 48, 64, 4, false, layout.Warps{}, "4 warps cannot each own 16-row slices of 48 rows"},
		{"fullrow_columns", ir.FullRow, 64, 7, 4, false, layout.Warps{}, "7 columns cannot be cut in 8-column pieces"},
		{"fullcol", ir.FullCol, 64, 64, 4, false, layout.Warps{M: 1, N: 4}, ""},
		{"fullcol_columns", ir.FullCol, 64, 16, 4, false, layout.Warps{}, "4 warps cannot each own 8-column slices of 16 columns"},
		{"fullcol_rows", ir.FullCol, 24, 64, 4, false, layout.Warps{}, "24 rows cannot be cut in 16-row pieces"},
		{"a_in_registers_forces_fullrow", ir.FullCol, 64, 64, 4, true, layout.Warps{M: 4, N: 1}, ""},
		{"squarest", ir.Square, 128, 128, 8, false, layout.Warps{M: 2, N: 4}, ""},
		{"none_fits", ir.Square, 8, 8, 4, false, layout.Warps{}, "4 warps cannot tile a 8×8 output"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseWarps(tc.p, tc.m, tc.n, tc.w, tc.aInRegs)
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
