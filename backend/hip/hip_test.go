package hip

import (
	"errors"
	"testing"

	rt "github.com/tilego/tilego/runtime/hip"
)

// Where the HIP runtime is absent, Open fails with the runtime's plain
// error (a machine with ROCm runs gpu_test.go, -tags hip, instead).
func TestOpenWithoutRuntime(t *testing.T) {
	if rt.Available() == nil {
		t.Skip("a HIP runtime is installed")
	}
	b, err := Open(0)
	if b != nil || !errors.Is(err, rt.ErrNoRuntime) {
		t.Fatalf("Open = %v, %v; want ErrNoRuntime", b, err)
	}
}
