package kernels

// The registry lists the library's kernels for the CLI, the tests, the
// benchmarks and the autotuner: each entry turns shape flags into a
// Problem, which builds the program for a config, makes inputs, checks the
// outputs against float64 and counts FLOPs. The CLI only parses flags and
// prints.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/ref"
	"github.com/tilego/tilego/tensor"
	"github.com/tilego/tilego/tl"
)

// Flag is one shape flag of a kernel.
type Flag struct {
	Name    string
	Default string // "" when the value derives from another flag (Help says which)
	Help    string
	Arg     string // the value's placeholder in help: N, X, NAME; none for Bool
	Bool    bool   // a switch: --causal alone means true
}

// Entry is one kernel of the library.
type Entry struct {
	Name  string
	Doc   string // one line
	Flags []Flag
	parse func(v values) (Problem, error)
}

// Entries lists the kernels in the order `tilego list` shows them.
var Entries = []*Entry{attentionEntry, attentionBwdEntry, attentionVarlenEntry, attentionVarlenBwdEntry, attentionKVCacheEntry, gemmEntry, mlaEntry, rmsnormEntry, layernormEntry, softmaxEntry}

// Lookup finds a kernel by name.
func Lookup(name string) (*Entry, error) {
	var names []string
	for _, e := range Entries {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("unknown kernel %q (have %s)", name, strings.Join(names, ", "))
}

// NewProblem is the problem of the kernel named kernel at the flag values
// (Lookup, then Problem).
func NewProblem(kernel string, vals map[string]string) (Problem, error) {
	e, err := Lookup(kernel)
	if err != nil {
		return nil, err
	}
	return e.Problem(vals)
}

// Problem makes the problem the flag values describe. Values are keyed by
// flag name without dashes; missing flags take their defaults.
func (e *Entry) Problem(vals map[string]string) (Problem, error) {
	v := values{entry: e, m: map[string]string{}}
	for _, f := range e.Flags {
		v.m[f.Name] = f.Default
	}
	for k, x := range vals {
		if _, ok := v.m[k]; !ok {
			return nil, fmt.Errorf("%s: unknown flag --%s", e.Name, k)
		}
		v.m[k] = x
	}
	p, err := e.parse(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	return p, nil
}

// Config is a kernel's tiling: AttnConfig for flash-attention, GemmConfig
// for gemm.
type Config any

// Problem is one kernel at one shape.
type Problem interface {
	Kernel() string
	Shape() Fields
	// DefaultConfig is a config that builds for this shape (small tiles,
	// chosen for the interpreter; the autotuner picks GPU configs).
	DefaultConfig() Config
	// GPUConfig is a config that runs well on a GPU for this shape.
	GPUConfig() Config
	// Program builds the tile program for a config; build it with
	// tl.Func.Build and a backend's limits.
	Program(c Config) (*tl.Func, error)
	// Inputs are fresh arguments in the program's parameter order: seeded
	// random inputs, outputs filled with NaN so unwritten elements show.
	Inputs(seed uint64) []*tensor.Tensor
	// Check compares the outputs in args with float64: every element when
	// the problem is small, else a seeded random sample.
	Check(args []*tensor.Tensor, seed uint64) Report
	// FLOPs is the conventional operation count, for TFLOP/s.
	FLOPs() float64
}

// GPUConfigFor is p's GPU config for one CUDA architecture (sm_80,
// sm_90a): problems whose best tiling differs between the code paths say
// so by a GPUConfigFor method; for the others it is p.GPUConfig().
func GPUConfigFor(p Problem, arch string) Config {
	if a, ok := p.(interface{ GPUConfigFor(arch string) Config }); ok {
		return a.GPUConfigFor(arch)
	}
	return p.GPUConfig()
}

// Build makes p's program for c and verifies it against lim (a backend's
// limits). A program that does not verify gives every problem, one a line,
// each at the file:line of the kernel code that built the op.
func Build(p Problem, c Config, lim ir.Limits) (*ir.Func, error) {
	tf, err := p.Program(c)
	if err != nil {
		return nil, err
	}
	fn, err := tf.Build(lim)
	if err != nil {
		return nil, fmt.Errorf("%s (%s) does not build:\n%w", p.Kernel(), ConfigFields(c), err)
	}
	return fn, nil
}

// Derived is a problem some of whose inputs are another problem's outputs
// (the backward's O and LSE are the forward's). Its Inputs makes them with
// the float64 reference on the host, minutes of cores at 16k tokens; a
// runner with a device may run Source there instead, on Source's Inputs
// with the same seed, and pass its arguments to Finish.
type Derived interface {
	Problem
	Source() Problem
	Finish(src []*tensor.Tensor, seed uint64) []*tensor.Tensor
}

// Check budget: a problem is checked whole when it has at most
// fullCheckElems output elements and its float64 reference costs at most
// fullCheckMACs multiply-adds; else a sample costing about sampleMACs.
// (The reference runs at about 1.4e8 multiply-adds per second per core.)
const (
	fullCheckElems = 1 << 22
	fullCheckMACs  = 1e9
	sampleMACs     = 1e8
)

// Measure is the error of one output against float64.
type Measure struct {
	Name string // "o", "lse", "c"
	Diff ref.Diff
	Tol  float64 // bound on Diff.Rel()
}

// OK reports whether the error is within tolerance (and nothing is NaN or
// a mismatched infinity).
func (m Measure) OK() bool { return m.Diff.Bad == 0 && m.Diff.Rel() <= m.Tol }

// Report is the result of a Check.
type Report struct {
	Measures []Measure
	Checked  string // "all" or "sampled N rows" / "sampled N elements"
}

// OK reports whether every output is within tolerance.
func (r Report) OK() bool {
	for _, m := range r.Measures {
		if !m.OK() {
			return false
		}
	}
	return len(r.Measures) > 0
}

// Errors are the measures keyed name_rel and name_max_abs (and name_bad
// when some elements are NaN or mismatched infinities). Rel is +Inf when
// any element is bad.
func (r Report) Errors() map[string]float64 {
	out := map[string]float64{}
	for _, m := range r.Measures {
		out[m.Name+"_rel"] = m.Diff.Rel()
		out[m.Name+"_max_abs"] = m.Diff.MaxAbs
		if m.Diff.Bad > 0 {
			out[m.Name+"_bad"] = float64(m.Diff.Bad)
		}
	}
	return out
}

func (m Measure) String() string {
	verdict := "ok"
	if !m.OK() {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s rel %.3g (tol %.0e, %s), max abs %.3g", strings.ToUpper(m.Name), m.Diff.Rel(), m.Tol, verdict, m.Diff.MaxAbs)
	if m.Diff.Bad > 0 {
		s += fmt.Sprintf(", %d bad of %d", m.Diff.Bad, m.Diff.N)
	}
	return s
}

func (r Report) String() string {
	parts := make([]string, len(r.Measures))
	for i, m := range r.Measures {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ") + " [checked " + r.Checked + "]"
}

// Tolerances, as bounds on ‖got − ref‖ / ‖ref‖ over the checked elements:
//
//	bf16 output  1e-2  (rounding to bf16 alone is ~1e-3; P is bf16 before P·V)
//	f16 output   2e-3  (rounding to f16 alone is ~1.4e-4)
//	f32 output   1e-4  (GEMM C: f32 accumulation over K in any order)
//	LSE (f32)    1e-4
//
// The inputs are rounded to their dtype before the reference reads them,
// so input rounding is not error; f8 GEMM inputs are judged by C's type.
func Tolerance(out ir.DType) float64 {
	switch out {
	case ir.BF16:
		return 1e-2
	case ir.F16:
		return 2e-3
	}
	return 1e-4
}

// LSETolerance bounds the relative error of the log-sum-exp output.
const LSETolerance = 1e-4

// Field is one named value of a shape or config.
type Field struct {
	Name  string
	Value any
}

// Fields is an ordered list of named values; it prints as name=value
// pairs and encodes as a JSON object in its order.
type Fields []Field

func (fs Fields) String() string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s=%v", f.Name, f.Value)
	}
	return strings.Join(parts, " ")
}

func (fs Fields) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// ConfigFields lists a config struct's fields, lower-cased; values with a
// String method (dtypes, policies) show as their names. A false bool (a
// choice not taken, such as WS) is left out, and so is the zero value of a
// field tagged `config:"omitzero"`.
func ConfigFields(c Config) Fields {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Struct {
		return Fields{{"config", fmt.Sprint(c)}}
	}
	var fs Fields
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		x := v.Field(i).Interface()
		if b, ok := x.(bool); ok && !b {
			continue
		}
		if sf.Tag.Get("config") == "omitzero" && v.Field(i).IsZero() { // a later field: records without it read the same
			continue
		}
		if s, ok := x.(fmt.Stringer); ok {
			x = s.String()
		}
		fs = append(fs, Field{strings.ToLower(sf.Name), x})
	}
	return fs
}

// values reads parsed flag values with clear errors.
type values struct {
	entry *Entry
	m     map[string]string
}

func (v values) str(name string) string { return strings.TrimSpace(v.m[name]) }

// maxDim bounds every size flag.
const maxDim = 1 << 24

// int reads a positive integer; def is used when the flag is empty.
func (v values) int(name string, def int) (int, error) {
	s := v.str(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("--%s %s: %s (at most %d)", name, s, tooFar(s), maxDim)
	}
	if err != nil {
		return 0, fmt.Errorf("--%s: %q is not an integer", name, s)
	}
	if n < 1 {
		return 0, fmt.Errorf("--%s must be at least 1, got %d", name, n)
	}
	if n > maxDim {
		return 0, fmt.Errorf("--%s %d is too large (at most %d)", name, n, maxDim)
	}
	return n, nil
}

// splits reads --splits: 0 for the default's choice (zero says whose),
// else a count of splits, at most 2^16.
func (v values) splits(zero string) (int, error) {
	const hi = 1 << 16
	s := v.str("splits")
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) || err == nil && n > hi {
		return 0, fmt.Errorf("--splits %s: %s (at most %d)", s, tooFar(s), hi)
	}
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--splits: %q is not 0 (%s) or a count of splits", s, zero)
	}
	return n, nil
}

func (v values) bool(name string) (bool, error) {
	s := v.str(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("--%s: %q is not true or false", name, s)
	}
	return b, nil
}

func (v values) float(name string) (float64, error) {
	s := v.str(name)
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("--%s: %q is not a finite number", name, s)
	}
	return x, nil
}

// scale reads --scale: a softmax scale, 0 for the default; a negative one
// would turn the softmax's row maximum into its minimum.
func (v values) scale() (float64, error) {
	x, err := v.float("scale")
	if err == nil && x < 0 {
		err = fmt.Errorf("--scale: %v is negative; want a positive softmax scale, or 0 for the default", x)
	}
	return x, err
}

// dtype reads a dtype that must be one of allowed.
func (v values) dtype(name string, allowed ...ir.DType) (ir.DType, error) {
	s := v.str(name)
	names := make([]string, len(allowed))
	for i, d := range allowed {
		names[i] = d.String()
		if d.String() == s {
			return d, nil
		}
	}
	return ir.Invalid, fmt.Errorf("--%s: unknown dtype %q (want %s)", name, s, strings.Join(names, ", "))
}

// elems multiplies dims and fails past 2^40 elements, well before int
// overflow or an allocation the machine cannot make.
func elems(what string, dims ...int) (int, error) {
	n := 1
	for _, d := range dims {
		if d > 0 && n > (1<<40)/d {
			return 0, fmt.Errorf("%s has more than 2^40 elements (%v)", what, dims)
		}
		n *= d
	}
	return n, nil
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// parallelFor calls fn(0..n-1) spread over the machine's cores.
func parallelFor(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				fn(i)
			}
		})
	}
	wg.Wait()
}
