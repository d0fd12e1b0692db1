package codeobj

import "testing"

// The hot loop is the backward branch's span with the most MFMAs: here
// the inner loop (two MFMAs, one VALU) of an outer one, not the outer one
// (same MFMAs, more instructions) nor the straight-line code before it.
func TestParseLoops(t *testing.T) {
	text := `
0000000000001000 <k>:
	s_load_dwordx2 s[0:1], s[4:5], 0x0                         // 000000001000: C0060002 00000000
	v_mov_b32_e32 v0, 0                                         // 000000001008: 7E000280
	v_add_u32_e32 v1, v0, v0                                    // 00000000100C: 68020100
	ds_read_b64 v[2:3], v0                                      // 000000001010: D8EC0000 02000000
	v_mfma_f32_16x16x16_f16 a[0:3], v[2:3], v[2:3], 0           // 000000001018: D3CD8000 02020502
	v_mfma_f32_16x16x16_f16 a[0:3], v[2:3], v[2:3], a[0:3]      // 000000001020: D3CD8000 04020502
	v_add_f32_e32 v4, v4, v4                                    // 000000001028: 02080904
	s_cbranch_scc1 65530                                        // 00000000102C: BF85FFFA <k+0x18>
	s_add_u32 s2, s2, 1                                         // 000000001030: 8002810 2
	s_cbranch_scc1 65528                                        // 000000001034: BF85FFF8 <k+0x10>
	s_endpgm                                                    // 000000001038: BF810000
`
	loops := parseLoops(text)
	h, ok := loops["k"]
	if !ok {
		t.Fatalf("no loop found: %v", loops)
	}
	want := Histogram{Total: 4, MFMA: 2, VALU: 1}
	if h != want {
		t.Errorf("hot loop %+v, want %+v", h, want)
	}
	k := Kernel{Loop: h}
	lo, hi := k.MFMABusy(16)
	if want := 32.0 / (32 + 4 + 1); lo != want || hi != 1 {
		t.Errorf("MFMABusy = %v, %v; want %v, 1", lo, hi, want)
	}
}
