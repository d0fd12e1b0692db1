package cudagen_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/tl"
)

// f8Gemm is a block's 128×128 product of 8-bit A (M×K) and B (N×K, or
// K×N when kxn) tiles 128 deep over a pipelined K loop, f32 out.
func f8Gemm(dt tl.DType, kxn bool) *tl.Func {
	const M, N, K = 128, 128, 512
	f := tl.NewFunc("f8_gemm")
	A := f.In("A", dt, M, K)
	var B *tl.Tensor
	if kxn {
		B = f.In("B", dt, K, N)
	} else {
		B = f.In("B", dt, N, K)
	}
	C := f.Out("C", tl.F32, M, N)
	f.Kernel(tl.Grid(1), 256, func(k *tl.Block) {
		as, c := k.Shared(dt, M, 128), k.Fragment(tl.F32, M, N)
		bs := k.Shared(dt, N, 128)
		if kxn {
			bs = k.Shared(dt, 128, N)
		}
		k.Clear(c)
		k.Pipelined(K/128, 2, func(j tl.Expr) {
			k.Copy(A.Sub(tl.All, tl.Tile(j, 128)), as)
			if kxn {
				k.Copy(B.Sub(tl.Tile(j, 128), tl.All), bs)
				k.Gemm(as, bs, c)
			} else {
				k.Copy(B.Sub(tl.All, tl.Tile(j, 128)), bs)
				k.Gemm(as, bs, c, tl.TransB)
			}
		})
		k.Copy(c, C)
	})
	return f
}

// 8-bit floats multiply on wgmma on sm_90a when A and B are both K-major:
// each instruction takes 32 of K (32 bytes, as 16-bit's 16), with no
// transpose operands (wgmma takes none for 8-bit types), and the tiles
// load by TMA in 128-element panels moved as bytes. B stored K×N (not
// K-major) is refused with the reason, here and by mma.sync.
func TestWgmmaF8(t *testing.T) {
	for _, dt := range []tl.DType{tl.F8E4M3, tl.F8E5M2} {
		fn, err := f8Gemm(dt, false).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"})
		if err != nil {
			t.Fatal(err)
		}
		ty := map[tl.DType]string{tl.F8E4M3: "e4m3", tl.F8E5M2: "e5m2"}[dt]
		for _, want := range []string{
			"wgmma.mma_async.sync.aligned.m64n128k32.f32." + ty + "." + ty + " {",
			"}, %64, %65, p, 1, 1;", // scale-d, scale-a, scale-b: no transposes
			"tl::desc(da_base + (wg * 64 + 0) * 128 + 96, 16, 1024, 1)", // K step 3: 96 bytes into the 128-byte panel
		} {
			if !strings.Contains(p.Source, want) {
				t.Errorf("%s: no %q in:\n%s", dt, want, p.Source)
			}
		}
		if n := strings.Count(p.Source, "_ss_"+ty+"<0, 0>("); n != 4 { // a warpgroup's 4 K steps of 32, one 128-column instruction each
			t.Errorf("%s: %d wgmma calls, want 4:\n%s", dt, n, p.Source)
		}
		if len(p.TMA) != 2 || !slices.Equal(p.TMA[0].Box, []uint32{128, 128}) {
			t.Errorf("%s: tensor maps %+v, want two of 128-byte boxes of 128 rows", dt, p.TMA)
		}
	}
	fn, err := f8Gemm(tl.F8E4M3, true).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cudagen.Compile(fn, cudagen.Options{Arch: "sm_90a"}); err == nil || !strings.Contains(err.Error(), "8-bit operands must both be K-major") {
		t.Errorf("B stored K×N: %v", err)
	}
}
