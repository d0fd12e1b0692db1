package autotune

// The tuning cache: one JSON file per key under $TILEGO_CACHE/tune (or the
// user cache folder's tilego/tune). Writes go to a temporary file in the
// same folder and are renamed into place, so a reader never sees half an
// entry; an entry that does not parse, is for another key or holds a
// config the kernel no longer accepts is ignored, as if absent.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/tilego/tilego/internal/atomicfile"
	"github.com/tilego/tilego/jit"
	"github.com/tilego/tilego/kernels"
)

// entryFormat changes when the layout or meaning of entries does.
const entryFormat = 1

// Key identifies a tuning result: the kernel at one shape on one device
// with one toolchain.
type Key struct {
	Kernel   string          `json:"kernel"`
	Shape    json.RawMessage `json:"shape"` // the problem's Shape fields, in order
	DType    string          `json:"dtype"`
	GPU      string          `json:"gpu"`
	Compiler string          `json:"compiler"`
	Codegen  string          `json:"codegen"`
}

// KeyFor is the key of p on t.
func KeyFor(p kernels.Problem, t Target) Key {
	shape, err := json.Marshal(p.Shape())
	if err != nil { // a shape value JSON cannot hold: key on its text
		shape, _ = json.Marshal(p.Shape().String())
	}
	k := Key{Kernel: p.Kernel(), Shape: shape, GPU: t.GPU, Compiler: t.Compiler, Codegen: t.Codegen}
	for _, f := range p.Shape() {
		if f.Name == "dtype" {
			k.DType = fmt.Sprint(f.Value)
		}
	}
	return k
}

// canonical is the key's compact JSON: equal keys, equal bytes.
func (k Key) canonical() []byte {
	b, _ := json.Marshal(k)
	return b
}

// ID is the key's file name stem: a SHA-256 of its canonical form.
func (k Key) ID() string {
	sum := sha256.Sum256(k.canonical())
	return hex.EncodeToString(sum[:16])
}

// Entry is a saved winner.
type Entry struct {
	Format     int             `json:"format"`
	Key        Key             `json:"key"`
	Config     json.RawMessage `json:"config"`      // the config struct as encoding/json writes it
	ConfigText string          `json:"config_text"` // the same, for people
	MS         float64         `json:"ms"`
	SpreadMS   float64         `json:"spread_ms"`
	TFLOPs     float64         `json:"tflops"`
	Regs       int             `json:"regs"`
	LocalBytes int             `json:"local_bytes"`
	Source     string          `json:"source"` // fingerprint of the winner's CUDA source
	Counts     map[Status]int  `json:"counts"`
	Stop       string          `json:"stop"`
	Tuned      time.Time       `json:"tuned"`
}

// Entry is the result's winner as a cache entry.
func (r *Result) Entry() (Entry, error) {
	if r.Best == nil {
		return Entry{}, errors.New("no winner to save")
	}
	b := r.Best
	cfg, err := json.Marshal(b.Config)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{
		Format: entryFormat, Key: KeyFor(r.problem, r.Target), Config: cfg,
		ConfigText: kernels.ConfigFields(b.Config).String(),
		MS:         b.Time.MS(), SpreadMS: b.Time.Spread.Seconds() * 1e3, TFLOPs: b.TFLOPs,
		Regs: b.Regs, LocalBytes: b.Local, Source: b.Source,
		Counts: map[Status]int{}, Stop: r.Stop, Tuned: time.Now().UTC().Truncate(time.Second),
	}
	for _, s := range []Status{Timed, Pruned, Failed, Wrong, Skipped} {
		e.Counts[s] = r.Count(s)
	}
	return e, nil
}

// Cache is a folder of tuning results; an empty Dir is no cache (nothing
// found, nothing saved).
type Cache struct{ Dir string }

// DefaultCache is $TILEGO_CACHE/tune, or the user cache folder's
// tilego/tune; none with TILEGO_CACHE=off.
func DefaultCache() Cache {
	d := jit.DefaultDir()
	if d == "" {
		return Cache{}
	}
	return Cache{Dir: filepath.Join(d, "tune")}
}

// Path is where k's entry lives.
func (c Cache) Path(k Key) string {
	return filepath.Join(c.Dir, safeName(k.Kernel), k.ID()+".json")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// Save writes e atomically and returns its path.
func (c Cache) Save(e Entry) (string, error) {
	if c.Dir == "" {
		return "", errors.New("the tuning cache is off (TILEGO_CACHE=off, or no cache folder)")
	}
	if err := jit.CheckDir(c.Dir); err != nil { // as the kernel cache's: nobody else may write it
		return "", err
	}
	e.Format = entryFormat
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", err
	}
	path := c.Path(e.Key)
	jit.RemoveOrphans(filepath.Dir(path)) // killed savers' temporary files
	return path, atomicfile.Write(path, append(data, '\n'))
}

// Lookup returns the saved winner for p on t and its config, decoded. It
// reads one small file: no compiling, no GPU. A missing, damaged or stale
// entry (another key, a config that no longer decodes or that
// Reject now refuses), or one in a folder jit.CheckDir refuses, is
// reported as not found.
func (c Cache) Lookup(p kernels.Problem, t Target) (*Entry, kernels.Config, bool) {
	if c.Dir == "" || jit.CheckDir(c.Dir) != nil { // a folder others can write may hold their configs
		return nil, nil, false
	}
	k := KeyFor(p, t)
	data, err := os.ReadFile(c.Path(k))
	if err != nil {
		return nil, nil, false
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil || e.Format != entryFormat || e.MS <= 0 {
		return nil, nil, false
	}
	if !bytes.Equal(e.Key.canonical(), k.canonical()) {
		return nil, nil, false
	}
	cfg, err := DecodeConfig(p, e.Config)
	if err != nil || Reject(p, cfg, t.Arch) != "" {
		return nil, nil, false
	}
	return &e, cfg, true
}

// DecodeConfig reads a config of p's kernel from JSON (as json.Marshal
// writes the config struct); unknown fields are an error.
func DecodeConfig(p kernels.Problem, raw json.RawMessage) (kernels.Config, error) {
	typ := reflect.TypeOf(p.DefaultConfig())
	if typ == nil || len(raw) == 0 {
		return nil, errors.New("no config")
	}
	v := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return nil, err
	}
	return v.Elem().Interface(), nil
}
