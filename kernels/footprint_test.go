package kernels

import "testing"

// FootprintOf counts, without allocating, what Inputs makes: every kernel
// and path of the registry, its element count and its GPU bytes exact.
func TestFootprintMatchesInputs(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		flags  map[string]string
	}{
		{"gemm", map[string]string{"m": "40", "n": "24", "k": "50", "trans-a": "true"}},
		{"gemm", map[string]string{"m": "16", "out-dtype": "bf16", "dtype": "f8e4m3"}},
		{"flash-attention", map[string]string{"heads": "4", "heads-kv": "2", "seq-q": "40", "seq-kv": "70", "dim-v": "32"}},
		{"flash-attention", map[string]string{"heads": "2", "seq-q": "128", "seq-kv": "1024", "splits": "3", "sms": "4"}},
		{"flash-attention", map[string]string{"heads": "5", "seq-q": "128", "seq-kv": "1024", "splits": "3", "sms": "4"}},
		{"flash-attention-bwd", map[string]string{"heads": "4", "heads-kv": "1", "seq-q": "40", "seq-kv": "24"}},
		{"mla-decode", map[string]string{"batch": "3", "seq-q": "2"}},
		{"mla-decode", map[string]string{"batch": "2", "mean-kv": "2000", "splits": "3"}},
	} {
		e, err := Lookup(tc.kernel)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Problem(tc.flags)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.kernel, tc.flags, err)
		}
		f, ok := FootprintOf(p)
		if !ok {
			t.Fatalf("%s: no footprint", tc.kernel)
		}
		var want Footprint
		for _, x := range p.Inputs(1) {
			want.add(x.DType, false, len(x.Data))
		}
		if f.Elems != want.Elems || f.Bytes != want.Bytes {
			t.Errorf("%s %v: footprint %v elements, %v bytes; Inputs made %v, %v", tc.kernel, tc.flags, f.Elems, f.Bytes, want.Elems, want.Bytes)
		}
		if f.OutElems <= 0 || f.OutElems >= f.Elems {
			t.Errorf("%s %v: %v output elements of %v", tc.kernel, tc.flags, f.OutElems, f.Elems)
		}
	}
	// Shapes past what memory holds are counted (issue 50's: 800 GB as
	// float64 on the host).
	p, err := gemmEntry.Problem(map[string]string{"m": "1000000", "n": "100000", "k": "64"})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := FootprintOf(p); f.Elems != 1e11+64e6+64e5 || f.Bytes != 4e11+2*(64e6+64e5) {
		t.Errorf("gemm 1e6×1e5×64: %v elements, %v bytes", f.Elems, f.Bytes)
	}
}
