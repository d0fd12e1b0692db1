package examples_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tilego/tilego/backend/hip/emu"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/examples"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/kernels"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// example is one kernel at an odd size, its inputs and its float64 answer.
type example struct {
	name string
	fn   *tl.Func
	args []*tensor.Tensor // inputs, then the output
	want []float64        // the output, in float64
	tol  float64
}

func rmsnorm() example {
	const rows, cols, eps = 37, 96, 1e-6
	x := tensor.New(tl.BF16, rows, cols).Rand(1, 2)
	w := tensor.New(tl.BF16, cols).Rand(2, 1)
	want := make([]float64, rows*cols)
	for i := range rows {
		ss := 0.0
		for j := range cols {
			ss += x.At(i, j) * x.At(i, j)
		}
		r := 1 / math.Sqrt(ss/cols+eps)
		for j := range cols {
			want[i*cols+j] = x.At(i, j) * r * w.At(j)
		}
	}
	return example{"rmsnorm", examples.RMSNorm(rows, cols, tl.BF16, 4, 128, eps), []*tensor.Tensor{x, w, tensor.New(tl.BF16, rows, cols)}, want, kernels.Tolerance(tl.BF16)}
}

func layernorm() example {
	const rows, cols, eps = 29, 160, 1e-5
	x := tensor.New(tl.F16, rows, cols).Rand(3, 2)
	g, b := tensor.New(tl.F16, cols).Rand(4, 1), tensor.New(tl.F16, cols).Rand(5, 1)
	want := make([]float64, rows*cols)
	for i := range rows {
		mean, v := 0.0, 0.0
		for j := range cols {
			mean += x.At(i, j)
		}
		mean /= cols
		for j := range cols {
			v += (x.At(i, j) - mean) * (x.At(i, j) - mean)
		}
		r := 1 / math.Sqrt(v/cols+eps)
		for j := range cols {
			want[i*cols+j] = (x.At(i, j)-mean)*r*g.At(j) + b.At(j)
		}
	}
	return example{"layernorm", examples.LayerNorm(rows, cols, tl.F16, 4, 128, eps), []*tensor.Tensor{x, g, b, tensor.New(tl.F16, rows, cols)}, want, kernels.Tolerance(tl.F16)}
}

func softmax() example {
	const rows, cols = 13, 640
	x := tensor.New(tl.F32, rows, cols).Rand(6, 2)
	want := make([]float64, rows*cols)
	for i := range rows {
		m, s := math.Inf(-1), 0.0
		for j := range cols {
			m = math.Max(m, x.At(i, j))
		}
		for j := range cols {
			s += math.Exp(x.At(i, j) - m)
		}
		for j := range cols {
			want[i*cols+j] = math.Exp(x.At(i, j)-m) / s
		}
	}
	return example{"softmax", examples.Softmax(rows, cols, tl.F32, 4, 128, 128), []*tensor.Tensor{x, tensor.New(tl.F32, rows, cols)}, want, 1e-5}
}

func gemmGELU() example {
	const m, n, k = 100, 72, 48
	a, b := tensor.New(tl.BF16, m, k).Rand(7, 1), tensor.New(tl.BF16, k, n).Rand(8, 1)
	bias := tensor.New(tl.BF16, n).Rand(9, 1)
	want := make([]float64, m*n)
	for i := range m {
		for j := range n {
			x := bias.At(j)
			for p := range k {
				x += a.At(i, p) * b.At(p, j)
			}
			want[i*n+j] = 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}
	}
	return example{"gemm_bias_gelu", examples.GemmBiasGELU(m, n, k, tl.BF16, 64, 64, 32, 2, 128), []*tensor.Tensor{a, b, bias, tensor.New(tl.BF16, m, n)}, want, kernels.Tolerance(tl.BF16)}
}

func gemmFP8() example {
	const m, n, k = 100, 72, 160
	a, b := tensor.New(tl.F8E4M3, m, k).Rand(10, 2), tensor.New(tl.F8E4M3, n, k).Rand(11, 2)
	sa, sb := tensor.New(tl.F32, m).Rand(12, 1), tensor.New(tl.F32, n).Rand(13, 1)
	want := make([]float64, m*n)
	for i := range m {
		for j := range n {
			x := 0.0
			for p := range k {
				x += a.At(i, p) * b.At(j, p)
			}
			want[i*n+j] = x * sa.At(i) * sb.At(j)
		}
	}
	return example{"gemm_fp8", examples.GemmFP8(m, n, k, tl.F8E4M3, 64, 64, 64, 2, 128), []*tensor.Tensor{a, b, sa, sb, tensor.New(tl.BF16, m, n)}, want, kernels.Tolerance(tl.BF16)}
}

func all() []example { return []example{rmsnorm(), layernorm(), softmax(), gemmGELU(), gemmFP8()} }

// check compares the output (the last argument) with the float64 answer.
func check(e example, out *tensor.Tensor) error {
	var d ref.Diff
	for i, w := range e.want {
		d.Add(out.Data[i], w)
	}
	if d.Bad > 0 || d.Rel() > e.tol {
		return fmt.Errorf("%s: %s (tolerance %g)", e.name, &d, e.tol)
	}
	return nil
}

func poison(t *tensor.Tensor) {
	for i := range t.Data {
		t.Data[i] = math.NaN()
	}
}

// Every example builds for every target: the interpreter's answer and the
// gfx942 code's, emulated, match float64; the CUDA targets emit it.
func TestExamples(t *testing.T) {
	for _, e := range all() {
		t.Run(e.name, func(t *testing.T) {
			fn, err := e.fn.Build()
			if err != nil {
				t.Fatal(err)
			}
			out := e.args[len(e.args)-1]
			poison(out)
			if err := interp.Run(fn, e.args); err != nil {
				t.Fatal(err)
			}
			if err := check(e, out); err != nil {
				t.Errorf("interpreter: %v", err)
			}
			for _, arch := range []string{"sm_80", "sm_90a"} {
				if arch == "sm_80" && e.name == "gemm_fp8" {
					continue // sm_80's mma.sync takes no 8-bit floats
				}
				fn, err := e.fn.Build(cudagen.Limits(arch))
				if err != nil {
					t.Fatalf("%s: %v", arch, err)
				}
				if _, err := cudagen.Compile(fn, cudagen.Options{Arch: arch}); err != nil {
					t.Errorf("%s: %v", arch, err)
				}
			}
			amd, err := e.fn.Build(cudagen.Limits("gfx942"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := cudagen.Compile(amd, cudagen.Options{Arch: "gfx942"})
			if err != nil {
				t.Fatal(err)
			}
			poison(out)
			if err := emu.Run(p, e.args); err != nil {
				t.Fatal(err)
			}
			if err := check(e, out); err != nil {
				t.Errorf("gfx942, emulated: %v", err)
			}
		})
	}
}

// The examples run on the interpreter and match float64 (tilego run and
// emit take any of them through the Go API: tl.Func's Build, then a
// backend's Run or cudagen.Compile).
func Example() {
	for _, e := range all() {
		fn, err := e.fn.Build()
		if err != nil {
			fmt.Println(err)
			continue
		}
		if err := interp.Run(fn, e.args); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(e.name, check(e, e.args[len(e.args)-1]) == nil)
	}
	// Output:
	// rmsnorm true
	// layernorm true
	// softmax true
	// gemm_bias_gelu true
	// gemm_fp8 true
}
