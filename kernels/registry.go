package kernels

// The registry lists the library's kernels for the CLI, the tests, the
// benchmarks and the autotuner: each entry turns shape flags into a
// Problem, which builds the program for a config, makes inputs, checks the
// outputs against float64 and counts FLOPs. The CLI only parses flags and
// prints.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
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
var Entries = []*Entry{attentionEntry, gemmEntry, mlaEntry}

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

// int reads a positive integer; def is used when the flag is empty.
func (v values) int(name string, def int) (int, error) {
	s := v.str(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("--%s: %q is not an integer", name, s)
	}
	if n < 1 {
		return 0, fmt.Errorf("--%s must be at least 1, got %d", name, n)
	}
	if n > 1<<24 {
		return 0, fmt.Errorf("--%s %d is too large (at most %d)", name, n, 1<<24)
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

// ---- flash-attention ----

var attentionEntry = &Entry{
	Name: "flash-attention",
	Doc:  "FlashAttention forward: O = softmax(scale·Q·Kᵀ)·V and the LSE of each query row (MHA/GQA/MQA, causal)",
	Flags: []Flag{
		{Name: "batch", Default: "1", Help: "batch size"},
		{Name: "heads", Default: "4", Help: "query heads"},
		{Name: "heads-kv", Help: "key/value heads; must divide --heads (GQA/MQA) (default: --heads)"},
		{Name: "seq-q", Default: "256", Help: "query sequence length"},
		{Name: "seq-kv", Help: "key/value sequence length (default: --seq-q)"},
		{Name: "dim", Default: "64", Help: "head dimension of Q and K"},
		{Name: "dim-v", Help: "head dimension of V and O (default: --dim)"},
		{Name: "causal", Default: "false", Help: "causal mask, bottom-right aligned: query i sees keys j <= i + seq-kv - seq-q", Bool: true},
		{Name: "dtype", Default: "bf16", Help: "element type of Q, K, V and O: bf16 or f16"},
		{Name: "layout", Default: "bhsd", Help: "memory layout of Q, K, V and O: bhsd or bshd"},
		{Name: "scale", Default: "0", Arg: "X", Help: "softmax scale; 0 means 1/sqrt(dim)"},
		{Name: "splits", Default: "1", Arg: "N", Help: "KV splits: 1 runs the single program; 0 lets the cost model (kernels.TailSplits) decide for --sms, N >= 2 cuts the keys of the last wave's blocks (of every block, when the grid fills at most one wave) in N; more than one split is two programs (split kernel, then combine), with 128-row tiles: run runs and times them together, emit prints one (--step), tune takes one program"},
		{Name: "sms", Default: "132", Help: "SM count the split is planned for (--splits other than 1)"},
	},
	parse: parseAttention,
}

func parseAttention(v values) (Problem, error) {
	var s AttnShape
	var err error
	get := func(dst *int, name string, def int) {
		if err == nil {
			*dst, err = v.int(name, def)
		}
	}
	get(&s.B, "batch", 0)
	get(&s.H, "heads", 0)
	get(&s.HKV, "heads-kv", s.H)
	get(&s.Sq, "seq-q", 0)
	get(&s.Skv, "seq-kv", s.Sq)
	get(&s.Dqk, "dim", 0)
	get(&s.Dv, "dim-v", s.Dqk)
	if err != nil {
		return nil, err
	}
	if s.H%s.HKV != 0 {
		return nil, fmt.Errorf("--heads %d is not a multiple of --heads-kv %d", s.H, s.HKV)
	}
	if s.Causal, err = v.bool("causal"); err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	switch l := v.str("layout"); l {
	case "bhsd":
	case "bshd":
		s.BSHD = true
	default:
		return nil, fmt.Errorf("--layout: unknown layout %q (want bhsd or bshd)", l)
	}
	if s.Scale, err = v.scale(); err != nil {
		return nil, err
	}
	for _, t := range [][]int{{s.B, s.H, s.Sq, max(s.Dqk, s.Dv)}, {s.B, s.HKV, s.Skv, max(s.Dqk, s.Dv)}} {
		if _, err := elems("a tensor", t...); err != nil {
			return nil, err
		}
	}
	splits, err := strconv.Atoi(v.str("splits"))
	if err != nil || splits < 0 || splits > 1<<16 {
		return nil, fmt.Errorf("--splits: %q is not 0 (the cost model) or a count of splits", v.str("splits"))
	}
	sms, err := v.int("sms", 0)
	if err != nil {
		return nil, err
	}
	return attnSplits(s, splits, sms), nil
}

type attnProblem struct {
	s    AttnShape
	note string // why --splits 0 runs the single program
}

// SplitNote says why --splits 0 left the single program running; ""
// otherwise.
func (p *attnProblem) SplitNote() string { return p.note }

func (p *attnProblem) Kernel() string { return attentionEntry.Name }

func (p *attnProblem) Shape() Fields {
	s := p.s
	layout := "bhsd"
	if s.BSHD {
		layout = "bshd"
	}
	return Fields{
		{"batch", s.B}, {"heads", s.H}, {"heads_kv", s.HKV}, {"seq_q", s.Sq}, {"seq_kv", s.Skv},
		{"dim", s.Dqk}, {"dim_v", s.Dv}, {"causal", s.Causal}, {"dtype", s.DType.String()},
		{"layout", layout}, {"scale", s.SoftmaxScale()},
	}
}

// DefaultConfig: 64×64 tiles (fewer rows for short sequences, rounded up
// to 16), 2 stages, 128 threads.
func (p *attnProblem) DefaultConfig() Config {
	return AttnConfig{M: min(64, roundUp(p.s.Sq, 16)), N: min(64, roundUp(p.s.Skv, 16)), Stages: 2, Threads: 128}
}

// GPUConfig: 128 query rows per block over two warpgroups, 128 keys per
// tile up to head dim 128 and 64 beyond (registers bound it).
func (p *attnProblem) GPUConfig() Config {
	if max(p.s.Dqk, p.s.Dv) <= 128 {
		return AttnConfig{M: 128, N: 128, Stages: 2, Threads: 256}
	}
	return AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256}
}

// GPUConfigFor: on sm_90a, for head dims 64, 128 and 256 (Q, K and V
// alike), the configs that won the FlashAttention-3 sweep on an H100 or
// came within 7% of the winner at every point (docs/perf.md, 2026-11-24):
// d64 one warpgroup a block (64-row tiles, causal up to 1k keys); d128 a
// persistent walk with ping-pong and the overlap up to 2k keys (causal up
// to 512 drawing its tiles), then
// FlashAttention-3's 128×176 tiles; d256 up to 1k keys a walk with
// ping-pong, the overlap and the output stored from registers (sixteenth
// session), then the overlap with 80 keys a tile, in clusters of two from
// 8k keys non-causal (tenth session). Other shapes, and sm_80, get
// GPUConfig.
func (p *attnProblem) GPUConfigFor(arch string) Config {
	s := p.s
	if arch != "sm_90a" || s.Dqk != s.Dv {
		return p.GPUConfig()
	}
	var c AttnConfig
	switch s.Dqk {
	case 64:
		c = AttnConfig{M: 128, N: 128, Stages: 2, Threads: 128}
		if s.Causal && s.Skv <= 1024 {
			c.M, c.N = 64, 64
		}
	case 128:
		c = AttnConfig{M: 128, N: 176, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true}
		if s.Skv <= 2048 {
			c.N, c.Persistent = 128, true
		}
		if s.Causal && s.Skv <= 512 { // tiles drawn (headsThenLongest): 1.03-1.05× the pairs at 512 back to back, the sweep's pick (twenty-fourth session)
			c.Draw = true
		}
	case 256:
		c = AttnConfig{M: 128, N: 80, Stages: 2, Threads: 256, WS: true, Overlap: true}
		if s.Skv <= 1024 { // a walk, the output stored from registers: within 2% of the best at 512-1k (sixteenth session)
			c = AttnConfig{M: 128, N: 64, Stages: 2, Threads: 256, WS: true, PingPong: true, Overlap: true, Persistent: true, Direct: true}
		}
		if !s.Causal && s.Skv >= 8192 { // K/V multicast to pairs of query tiles: 1.005-1.05× there over two runs (docs/perf.md)
			c.Cluster = 2
		}
	default:
		return p.GPUConfig()
	}
	if _, err := FlashAttention(s, c).Build(); err != nil {
		return p.GPUConfig()
	}
	return c
}

func (p *attnProblem) Program(c Config) (*tl.Func, error) {
	cfg, ok := c.(AttnConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.AttnConfig", p.Kernel(), c)
	}
	if cfg.M < 1 || cfg.N < 1 || cfg.Stages < 1 || cfg.Threads < 1 {
		return nil, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	return FlashAttention(p.s, cfg), nil
}

func (p *attnProblem) Inputs(seed uint64) []*tensor.Tensor { return AttentionInputs(p.s, seed) }

// rowsToCheck is every query row when the problem is small, else a
// seeded sample costing about sampleMACs.
func (p *attnProblem) rowsToCheck(seed uint64) ([]Row, string) {
	s := p.s
	nRows := s.B * s.H * s.Sq
	if nRows*s.Dv <= fullCheckElems && float64(nRows)*p.rowMACs() <= fullCheckMACs {
		return AllRows(s), "all"
	}
	n := int(min(max(sampleMACs/p.rowMACs(), 16), 1024))
	if n >= nRows {
		return AllRows(s), "all"
	}
	return SampleRows(s, n, seed), fmt.Sprintf("sampled %d rows", n)
}

// rowMACs is the reference's cost of one query row (all keys; causal rows
// see fewer, so this over-estimates).
func (p *attnProblem) rowMACs() float64 { return float64(p.s.Skv) * float64(p.s.Dqk+p.s.Dv) }

func (p *attnProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	rows, checked := p.rowsToCheck(seed)
	o := Measure{Name: "o", Tol: Tolerance(s.DType)}
	lse := Measure{Name: "lse", Tol: LSETolerance}
	// As CheckAttentionRows, with the references computed on every core.
	ra := ref.Attn{Causal: s.Causal, Scale: s.SoftmaxScale()}
	wantO, wantL := make([][]float64, len(rows)), make([]float64, len(rows))
	parallelFor(len(rows), func(i int) {
		r := rows[i]
		wantO[i], wantL[i] = ra.AttentionRow(args[0], args[1], args[2], r.B, r.H, r.I)
	})
	for i, r := range rows {
		for d, w := range wantO[i] {
			o.Diff.Add(args[3].At(r.B, r.H, r.I, d), w)
		}
		lse.Diff.Add(args[4].At(r.B, r.H, r.I), wantL[i])
	}
	return Report{Measures: []Measure{o, lse}, Checked: checked}
}

// FLOPs counts the two matrix multiplies, 2·B·H·Sq·Skv·(Dqk+Dv), halved
// when causal. As FlashAttention's benchmarks, the causal count is halved
// even when Sq ≠ Skv.
func (p *attnProblem) FLOPs() float64 {
	s := p.s
	f := 2 * float64(s.B) * float64(s.H) * float64(s.Sq) * float64(s.Skv) * float64(s.Dqk+s.Dv)
	if s.Causal {
		f /= 2
	}
	return f
}

// ---- gemm ----

var gemmEntry = &Entry{
	Name: "gemm",
	Doc:  "matrix multiply C = op(A)·op(B), f32 accumulation",
	Flags: []Flag{
		{Name: "m", Default: "512", Help: "rows of C"},
		{Name: "n", Default: "512", Help: "columns of C"},
		{Name: "k", Default: "512", Help: "the reduced dimension"},
		{Name: "trans-a", Default: "false", Help: "A is stored K×M", Bool: true},
		{Name: "trans-b", Default: "false", Help: "B is stored N×K", Bool: true},
		{Name: "dtype", Default: "bf16", Help: "element type of A and B: bf16, f16, f8e4m3 or f8e5m2"},
		{Name: "out-dtype", Default: "f32", Help: "element type of C: f32, bf16 or f16"},
	},
	parse: parseGemm,
}

func parseGemm(v values) (Problem, error) {
	var s GemmShape
	var err error
	get := func(dst *int, name string) {
		if err == nil {
			*dst, err = v.int(name, 0)
		}
	}
	get(&s.M, "m")
	get(&s.N, "n")
	get(&s.K, "k")
	if err != nil {
		return nil, err
	}
	if s.TransA, err = v.bool("trans-a"); err != nil {
		return nil, err
	}
	if s.TransB, err = v.bool("trans-b"); err != nil {
		return nil, err
	}
	if s.DType, err = v.dtype("dtype", ir.BF16, ir.F16, ir.F8E4M3, ir.F8E5M2); err != nil {
		return nil, err
	}
	if s.OutDType, err = v.dtype("out-dtype", ir.F32, ir.BF16, ir.F16); err != nil {
		return nil, err
	}
	for _, t := range [][]int{{s.M, s.K}, {s.K, s.N}, {s.M, s.N}} {
		if _, err := elems("a matrix", t...); err != nil {
			return nil, err
		}
	}
	return &gemmProblem{s: s}, nil
}

type gemmProblem struct{ s GemmShape }

func (p *gemmProblem) Kernel() string { return gemmEntry.Name }

func (p *gemmProblem) Shape() Fields {
	s := p.s
	return Fields{{"m", s.M}, {"n", s.N}, {"k", s.K}, {"trans_a", s.TransA}, {"trans_b", s.TransB},
		{"dtype", s.DType.String()}, {"out_dtype", s.OutDType.String()}}
}

// DefaultConfig: 64×64×32 tiles (smaller for small matrices, rounded up to
// 16), 2 stages, 128 threads, warps tiling the output square.
func (p *gemmProblem) DefaultConfig() Config {
	s := p.s
	return GemmConfig{BM: min(64, roundUp(s.M, 16)), BN: min(64, roundUp(s.N, 16)), BK: min(32, roundUp(s.K, 16)),
		Stages: 2, Threads: 128, Policy: ir.Square}
}

// GPUConfig: 128×256×64 tiles over 8 warps, 3 stages, panels of 8 blocks
// for L2 reuse; small matrices take the default.
func (p *gemmProblem) GPUConfig() Config {
	s := p.s
	if s.M < 128 || s.N < 128 || s.K < 32 {
		return p.DefaultConfig()
	}
	return GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 256, Policy: ir.Square, Raster: 8}
}

func (p *gemmProblem) Program(c Config) (*tl.Func, error) {
	cfg, ok := c.(GemmConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want kernels.GemmConfig", p.Kernel(), c)
	}
	if cfg.BM < 1 || cfg.BN < 1 || cfg.BK < 1 || cfg.Stages < 1 || cfg.Threads < 1 {
		return nil, fmt.Errorf("%s: bad config %+v", p.Kernel(), cfg)
	}
	return Gemm(p.s, cfg), nil
}

// Inputs are A, B (normal, std 1) and C poisoned with NaN.
func (p *gemmProblem) Inputs(seed uint64) []*tensor.Tensor { return GemmInputs(p.s, seed) }

func (p *gemmProblem) Check(args []*tensor.Tensor, seed uint64) Report {
	s := p.s
	a, b, c := args[0], args[1], args[2]
	dot := func(i, j int) float64 {
		var sum float64
		for kk := range s.K {
			var x, y float64
			if s.TransA {
				x = a.At(kk, i)
			} else {
				x = a.At(i, kk)
			}
			if s.TransB {
				y = b.At(j, kk)
			} else {
				y = b.At(kk, j)
			}
			sum += x * y
		}
		return sum
	}
	at, checked := p.elemsToCheck(seed)
	want := make([]float64, len(at))
	parallelFor(len(at), func(x int) { want[x] = dot(at[x][0], at[x][1]) })
	m := Measure{Name: "c", Tol: Tolerance(s.OutDType)}
	for x, ij := range at {
		m.Diff.Add(c.At(ij[0], ij[1]), want[x])
	}
	return Report{Measures: []Measure{m}, Checked: checked}
}

// elemsToCheck lists every element of C when the problem is small, else a
// seeded sample costing about sampleMACs.
func (p *gemmProblem) elemsToCheck(seed uint64) ([][2]int, string) {
	s := p.s
	var at [][2]int
	n := int(min(max(sampleMACs/float64(s.K), 256), 1<<16))
	if n >= s.M*s.N || s.M*s.N <= fullCheckElems && float64(s.M)*float64(s.N)*float64(s.K) <= fullCheckMACs {
		for i := range s.M {
			for j := range s.N {
				at = append(at, [2]int{i, j})
			}
		}
		return at, "all"
	}
	r := rand.New(rand.NewPCG(seed, 77))
	for range n {
		at = append(at, [2]int{r.IntN(s.M), r.IntN(s.N)})
	}
	return at, fmt.Sprintf("sampled %d elements", n)
}

// FLOPs is 2·M·N·K.
func (p *gemmProblem) FLOPs() float64 { return 2 * float64(p.s.M) * float64(p.s.N) * float64(p.s.K) }
