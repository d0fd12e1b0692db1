package cudagen_test

import (
	"testing"

	"github.com/tilego/tilego/bench"
	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
)

// libraryPrograms builds a library kernel's programs (a chain's every
// step) at the flags for arch, at its GPU config for arch with the fields
// edit names changed ("" for none: kernels.ParseConfig).
func libraryPrograms(t *testing.T, kernel string, flags map[string]string, arch, edit string) []*ir.Func {
	t.Helper()
	p, err := kernels.NewProblem(kernel, flags)
	if err != nil {
		t.Fatalf("%s %v: %v", kernel, flags, err)
	}
	c := kernels.GPUConfigFor(p, arch)
	if edit != "" {
		if c, err = kernels.ParseConfig(c, edit); err != nil {
			t.Fatal(err)
		}
	}
	fns, _, err := bench.Programs(p, c, cudagen.Limits(arch))
	if err != nil {
		t.Fatal(err)
	}
	return fns
}
