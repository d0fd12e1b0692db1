package clangcuda

import (
	"strings"
	"testing"
)

// The assembler refuses an instruction newer than the target, which clang
// passes through in inline asm: the check Compile adds where ptxas is.
func TestAssemblerChecksInlineAsm(t *testing.T) {
	if err := Available(); err != nil {
		t.Fatal(err)
	}
	if !Assembles("sm_80") {
		t.Fatalf("no %s on the PATH that assembles sm_80 (.ci/run installs Debian's)", Ptxas)
	}
	const kernel = `__global__ void k(float* x, unsigned short* y) {
  unsigned short r;
  asm("%s" : "=h"(r) : "f"(x[threadIdx.x]));
  y[threadIdx.x] = r;
}
`
	for _, tc := range []struct {
		asm, fails string
	}{
		{`cvt.rn.f16.f32 %0, %1;`, ""},
		{`cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;`, "e4m3x2"},
	} {
		err := Compile(strings.Replace(kernel, "%s", tc.asm, 1), "sm_80")
		switch {
		case tc.fails == "" && err != nil:
			t.Errorf("%s: %v", tc.asm, err)
		case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
			t.Errorf("%s for sm_80: got %v, want an assembler error naming %s", tc.asm, err, tc.fails)
		}
	}
}
