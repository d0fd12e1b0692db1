package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
)

// TestSourceFor: TILEGO_SOURCE replaces only the programs it names, with
// the device library inlined as for a generated one; a missing file is
// an error, not a silent fallback to the generated source.
func TestSourceFor(t *testing.T) {
	file := filepath.Join(t.TempDir(), "k.cu")
	if err := os.WriteFile(file, []byte("#include \"tilego.cuh\"\n// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &cudagen.Program{Name: "k", Source: "#include \"tilego.cuh\"\n// generated\n"}
	for _, tc := range []struct {
		env, want, err string
	}{
		{"", "// generated", ""},
		{"other=" + file, "// generated", ""},
		{"k", "// generated", ""}, // no file given
		{"k=" + file, "// edited", ""},
		{"other=x.cu,k=" + file, "// edited", ""}, // several, comma-separated
		{"k=" + file + ",other=x.cu", "// edited", ""},
		{"k=" + file + ".missing", "", "TILEGO_SOURCE"},
	} {
		t.Setenv("TILEGO_SOURCE", tc.env)
		got, err := sourceFor(p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one about %s", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || !strings.Contains(got, tc.want) || strings.Contains(got, "#include \"tilego.cuh\"") || !strings.Contains(got, "namespace tl") {
			t.Errorf("%q: err %v, source %.80q…, want %q with the library inlined", tc.env, err, got, tc.want)
		}
	}
}

// A program emitted for an older major architecture than the device's
// compiles to that target's PTX; others to the device's own.
func TestNVRTCArch(t *testing.T) {
	for _, tc := range []struct{ target, dev, want string }{
		{"sm_80", "sm_90a", "compute_80"},
		{"sm_86", "sm_90a", "compute_86"},
		{"sm_90", "sm_90a", "sm_90a"},
		{"sm_90a", "sm_90a", "sm_90a"},
		{"sm_80", "sm_80", "sm_80"},
		{"sm_80", "sm_86", "sm_86"},
		{"", "sm_90a", "sm_90a"},
		{"gfx942", "sm_90a", "sm_90a"},
	} {
		if got := nvrtcArch(tc.target, tc.dev); got != tc.want {
			t.Errorf("nvrtcArch(%q, %q) = %q, want %q", tc.target, tc.dev, got, tc.want)
		}
	}
}
