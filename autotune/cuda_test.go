package autotune

import (
	"regexp"
	"testing"
	"time"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

func TestCodegenVersion(t *testing.T) {
	t0 := time.Now()
	v90 := CodegenVersion("sm_90a")
	t.Logf("first CodegenVersion: %v", time.Since(t0))
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(v90) {
		t.Errorf("version %q", v90)
	}
	codegenVersions.Delete("sm_90a") // computed afresh, the same
	if again := CodegenVersion("sm_90a"); again != v90 {
		t.Errorf("not deterministic: %s, %s", v90, again)
	}
	if v80 := CodegenVersion("sm_80"); v80 == v90 {
		t.Error("sm_80 and sm_90a share a codegen version")
	}
	t0 = time.Now()
	CodegenVersion("sm_90a")
	if d := time.Since(t0); d > time.Millisecond {
		t.Errorf("cached CodegenVersion took %v", d)
	}
	for _, ref := range []struct {
		kernel string
		cfg    kernels.Config
	}{{"flash-attention", kernels.AttnConfig{M: 64, N: 64, Stages: 2, Threads: 128}}, {"gemm", kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 2, Threads: 128}}} {
		if _, err := fingerprint(ref.kernel, nil, ref.cfg, "sm_90a"); err != nil {
			t.Errorf("reference %s: %v", ref.kernel, err)
		}
	}
}

// BuildAll generates every candidate's CUDA in parallel, with one error
// per config that does not build.
func TestBuildAll(t *testing.T) {
	p := problem(t)
	space := Space(p, "sm_90a")
	if testing.Short() {
		space = space[:20]
	}
	cs := append(space, ac(64, 64, 2, 256), kernels.GemmConfig{})
	progs, errs := BuildAll(p, cs, ir.DefaultLimits, cudagen.Options{Arch: "sm_90a"})
	for i := range space {
		if errs[i] != nil || progs[i] == nil {
			t.Errorf("%+v: %v", cs[i], errs[i])
		}
	}
	n := len(space)
	if errs[n] == nil || errs[n+1] == nil || progs[n] != nil {
		t.Errorf("bad configs built: %v, %v", errs[n], errs[n+1])
	}
	if progs[0].Fingerprint() == progs[1].Fingerprint() {
		t.Error("two configs, one fingerprint")
	}
}
