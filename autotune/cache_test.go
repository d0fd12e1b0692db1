package autotune

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// tuned runs the fake tuner to a winner and returns its entry.
func tuned(t *testing.T, p kernels.Problem, f *fake) Entry {
	t.Helper()
	win := ac(128, 80, 2, 256)
	f.outcomes[win] = outcome{ms: 0.25}
	res, err := Tune(context.Background(), f, p, []kernels.Config{ac(128, 128, 2, 256), win, ac(64, 64, 2, 128)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := res.Entry()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestCacheRoundTrip(t *testing.T) {
	p := problem(t)
	f := newFake()
	e := tuned(t, p, f)
	c := Cache{Dir: t.TempDir()}
	path, err := c.Save(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, filepath.Join(c.Dir, "flash-attention")+string(filepath.Separator)) || !strings.HasSuffix(path, ".json") {
		t.Errorf("path %s", path)
	}
	got, cfg, ok := c.Lookup(p, f.Target())
	if !ok {
		t.Fatal("saved winner not found")
	}
	if cfg != ac(128, 80, 2, 256) || got.MS != 0.25 || got.Source == "" || got.Counts[Timed] != 3 || got.ConfigText != "m=128 n=80 stages=2 threads=256" {
		t.Errorf("%+v %+v", cfg, got)
	}
	if got.Key.DType != "bf16" || got.Key.GPU != f.Target().GPU {
		t.Errorf("key %+v", got.Key)
	}
	// The entry is readable JSON.
	data, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m["config_text"] == nil {
		t.Errorf("%v: %s", err, data)
	}
	// Nothing else in the folder: no temporary files left behind.
	if files, _ := filepath.Glob(filepath.Join(c.Dir, "*", "*")); len(files) != 1 {
		t.Errorf("files %v", files)
	}
	// Saving again replaces the entry.
	e.MS = 0.2
	if _, err := c.Save(e); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Lookup(p, f.Target()); got.MS != 0.2 {
		t.Errorf("after a second save: %v", got.MS)
	}
}

// Another GPU, compiler, code generator or shape is another key.
func TestCacheKeys(t *testing.T) {
	p := problem(t)
	f := newFake()
	c := Cache{Dir: t.TempDir()}
	if _, err := c.Save(tuned(t, p, f)); err != nil {
		t.Fatal(err)
	}
	base := f.Target()
	for name, change := range map[string]func(*Target){
		"gpu":      func(t *Target) { t.GPU = "NVIDIA H100 80GB HBM3 (sm_90a, 132 SMs)" },
		"compiler": func(t *Target) { t.Compiler = "nvrtc-13.0" },
		"codegen":  func(t *Target) { t.Codegen = "0123456789abcdef" },
	} {
		tg := base
		change(&tg)
		if _, _, ok := c.Lookup(p, tg); ok {
			t.Errorf("%s changed, still found", name)
		}
	}
	e, _ := kernels.Lookup("flash-attention")
	for _, vals := range []map[string]string{
		{"batch": "4", "heads": "32", "seq-q": "4096", "dim": "64", "layout": "bhsd"},
		{"batch": "4", "heads": "32", "seq-q": "4096", "dim": "64", "layout": "bshd", "dtype": "f16"},
		{"batch": "4", "heads": "32", "seq-q": "4096", "dim": "64", "layout": "bshd", "causal": "true"},
		{"batch": "4", "heads": "32", "seq-q": "4096", "dim": "64", "layout": "bshd", "scale": "0.1"},
	} {
		q, err := e.Problem(vals)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := c.Lookup(q, base); ok {
			t.Errorf("%v: found the entry of another shape", vals)
		}
	}
	same, _ := e.Problem(map[string]string{"batch": "4", "heads": "32", "heads-kv": "32", "seq-q": "4096", "seq-kv": "4096", "dim": "64", "dim-v": "64", "layout": "bshd"})
	if _, _, ok := c.Lookup(same, base); !ok {
		t.Error("the same shape spelled out is not found")
	}
	if KeyFor(p, base).ID() == KeyFor(same, Target{}).ID() {
		t.Error("key ignores the target")
	}
}

// A damaged entry is ignored, as if absent; a good save repairs it.
func TestCacheCorrupt(t *testing.T) {
	p := problem(t)
	f := newFake()
	good := tuned(t, p, f)
	other := good
	other.Key.Kernel = "gemm"
	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"garbage", func(b []byte) []byte { return []byte("\x00\x01 not json") }},
		{"empty", func(b []byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"other key", func(b []byte) []byte { d, _ := json.Marshal(other); return d }},
		{"other format", func(b []byte) []byte { return []byte(strings.Replace(string(b), `"format": 1`, `"format": 99`, 1)) }},
		{"unknown config field", func(b []byte) []byte { return []byte(strings.Replace(string(b), `"M": 128`, `"Q": 128`, 1)) }},
		{"config now rejected", func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"Threads": 256`, `"Threads": 384`, 1))
		}},
		{"config of another kernel", func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"M": 128`, `"BM": 128`, 1))
		}},
		{"no time", func(b []byte) []byte { return []byte(strings.Replace(string(b), `"ms": 0.25`, `"ms": 0`, 1)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			path, err := c.Save(good)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			d := tt.damage(b)
			if string(d) == string(b) {
				t.Fatal("damage changed nothing")
			}
			if err := os.WriteFile(path, d, 0o644); err != nil {
				t.Fatal(err)
			}
			if e, cfg, ok := c.Lookup(p, f.Target()); ok {
				t.Errorf("damaged entry used: %+v %+v", e, cfg)
			}
			if _, err := c.Save(good); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := c.Lookup(p, f.Target()); !ok {
				t.Error("not repaired by a save")
			}
		})
	}
	// A folder in the entry's place, and no cache at all.
	c := Cache{Dir: t.TempDir()}
	os.MkdirAll(c.Path(KeyFor(p, f.Target())), 0o755)
	if _, _, ok := c.Lookup(p, f.Target()); ok {
		t.Error("a folder read as an entry")
	}
	if _, _, ok := (Cache{}).Lookup(p, f.Target()); ok {
		t.Error("found in no cache")
	}
	if _, err := (Cache{}).Save(good); err == nil || !strings.Contains(err.Error(), "cache is off") {
		t.Errorf("save with no cache: %v", err)
	}
}

// Lookup reads one small file: well under 50 ms, with no GPU.
func TestLookupFast(t *testing.T) {
	p := problem(t)
	f := newFake()
	c := Cache{Dir: t.TempDir()}
	if _, err := c.Save(tuned(t, p, f)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, _, ok := c.Lookup(p, f.Target())
	first := time.Since(t0)
	if !ok {
		t.Fatal("not found")
	}
	const n = 100
	t0 = time.Now()
	for range n {
		c.Lookup(p, f.Target())
	}
	avg := time.Since(t0) / n
	t.Logf("Lookup: first %v, then %v on average", first, avg)
	if first > 50*time.Millisecond || avg > 5*time.Millisecond {
		t.Errorf("Lookup took %v (first), %v (average)", first, avg)
	}
}

func TestDefaultCacheAndDecode(t *testing.T) {
	t.Setenv("TILEGO_CACHE", "/some/where")
	if d := DefaultCache().Dir; d != "/some/where/tune" {
		t.Errorf("DefaultCache %q", d)
	}
	t.Setenv("TILEGO_CACHE", "off")
	if d := DefaultCache().Dir; d != "" {
		t.Errorf("DefaultCache with off %q", d)
	}
	e, _ := kernels.Lookup("gemm")
	p, _ := e.Problem(nil)
	want := kernels.GemmConfig{BM: 128, BN: 256, BK: 64, Stages: 3, Threads: 256, Policy: ir.FullRow, Raster: 8}
	raw, _ := json.Marshal(want)
	got, err := DecodeConfig(p, raw)
	if err != nil || got != want {
		t.Errorf("%v %+v", err, got)
	}
	if _, err := DecodeConfig(p, json.RawMessage(`{"M": 64}`)); err == nil {
		t.Error("an attention config decoded as a GEMM one")
	}
	if _, err := DecodeConfig(p, nil); err == nil {
		t.Error("nothing decoded")
	}
}

// A tuning folder others can write is refused as the kernel cache's is:
// nothing saved to it, nothing planted in it used.
func TestCacheRefusesSharedFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	p := problem(t)
	f := newFake()
	e := tuned(t, p, f)
	c := Cache{Dir: t.TempDir()}
	if _, err := c.Save(e); err != nil {
		t.Fatal(err)
	}
	os.Chmod(c.Dir, 0o777) // as if another user could have written the entry
	if _, _, ok := c.Lookup(p, f.Target()); ok {
		t.Error("an entry in a world-writable folder was used")
	}
	if _, err := c.Save(e); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("save into a world-writable folder: %v", err)
	}
}

// Saving removes the temporary files a killed saver left in the kernel's
// folder, once they are older than a save could take.
func TestSaveRemovesOrphans(t *testing.T) {
	p := problem(t)
	f := newFake()
	e := tuned(t, p, f)
	c := Cache{Dir: t.TempDir()}
	dir := filepath.Dir(c.Path(e.Key))
	os.MkdirAll(dir, 0o700)
	killed, writing := filepath.Join(dir, ".tmp-123"), filepath.Join(dir, ".tmp-456")
	os.WriteFile(killed, []byte("{"), 0o600)
	os.WriteFile(writing, []byte("{"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(killed, old, old)
	if _, err := c.Save(e); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); err == nil {
		t.Error("a killed saver's temporary file is still there")
	}
	if _, err := os.Stat(writing); err != nil {
		t.Error("a fresh temporary file (a saver at work) was removed")
	}
}
