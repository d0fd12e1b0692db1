package main

import (
	"fmt"
	"runtime"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/backend/cuda"
	"github.com/tilego/tilego/kernels"
)

// Resource guards. Shape flags allow sizes far past what a machine holds
// (host tensors are float64: 4× a bf16 GPU's bytes), and the interpreter
// runs at about a GFLOP/s a core; a run that cannot fit or finish is
// refused in one line, before Inputs allocates, rather than dying with an
// out-of-memory trace or running for hours.

const (
	// interpBytesPerCore is the interpreter's working set a worker: a
	// block's tiles as float64 (bounded by shared memory and registers)
	// and its ops' temporaries, with room to spare.
	interpBytesPerCore = 64 << 20
	// refElems bounds the outputs the float64 reference holds at once:
	// a large problem is checked on a sample (kernels' check budget).
	refElems = 3 << 22
	// deviceSlack is the GPU memory a run takes beside its tensors: the
	// context's and the modules' (a guess on the safe side).
	deviceSlack = 256 << 20
	// defaultMaxGFLOP bounds the interpreter's work (--max-gflop): about
	// two minutes on a 1-core budget, less on more cores.
	defaultMaxGFLOP = 100
	// elemFLOPs is what a tensor element costs the interpreter, in FLOPs.
	elemFLOPs = 1000
	// interpGFLOPS is the interpreter's speed a core, for the estimate in
	// the message (GEMM and attention measured at 0.5-1).
	interpGFLOPS = 0.5
)

// resourceNeed is what one run takes.
type resourceNeed struct {
	host, device float64 // bytes
}

// runNeed is the memory p takes on be (nil: the host's only), with
// flushBytes of L2 flush buffer on a GPU; ok is false when p's footprint
// is unknown.
func runNeed(p kernels.Problem, be backend.Backend, flushBytes int) (resourceNeed, bool) {
	f, ok := kernels.FootprintOf(p)
	if !ok {
		return resourceNeed{}, false
	}
	n := resourceNeed{host: 8 * (f.Elems + min(f.OutElems, refElems))}
	switch {
	case be == nil:
	case be.Name() == "cpu":
		n.host += float64(runtime.NumCPU()) * interpBytesPerCore
	case be.Name() == "hip-emu": // the emulated device's memory is the host's
		n.host += 2 * f.Bytes
	default:
		n.device = f.Bytes + float64(flushBytes) + deviceSlack
		// Uploads and downloads go through byte copies of the tensors
		// (tensor.Bytes), which the garbage collector frees late: a
		// 300000×50000 GEMM fitting as float64 alone was killed at 128 GiB.
		n.host += f.Bytes
	}
	return n, true
}

// checkMemory refuses p on be (nil: the host's memory only) when its host
// or GPU memory is past what is available.
func checkMemory(p kernels.Problem, be backend.Backend, flushBytes int) error {
	n, ok := runNeed(p, be, flushBytes)
	if !ok {
		return nil
	}
	if have, from := hostMemory(); n.host > float64(have) {
		return fmt.Errorf("%s %s needs about %s of host memory (its tensors as float64, their copies and the check), %s available (%s); try a smaller shape",
			p.Kernel(), p.Shape(), bytesText(n.host), bytesText(float64(have)), from)
	}
	if n.device == 0 {
		return nil
	}
	free, err := gpuFree(be)
	if err != nil {
		return fmt.Errorf("free GPU memory: %w", err)
	}
	if n.device > float64(free) {
		return fmt.Errorf("%s %s needs about %s of GPU memory (its tensors in their dtypes, and the run's own), %s free on %s; try a smaller shape",
			p.Kernel(), p.Shape(), bytesText(n.device), bytesText(float64(free)), be.Device())
	}
	return nil
}

// hostMemory and gpuFree say what memory there is; tests replace them.
var (
	hostMemory = hostAvailable
	gpuFree    = func(be backend.Backend) (uint64, error) {
		b, ok := be.(*cuda.Backend)
		if !ok {
			return 0, fmt.Errorf("%s is not a CUDA device", be.Device())
		}
		free, _, err := b.Driver().MemInfo()
		return free, err
	}
)

// interpSeconds estimates how long the interpreter takes for p, repeats
// times, on this machine's cores.
func interpSeconds(p kernels.Problem, repeats int) float64 {
	work := p.FLOPs()
	if f, ok := kernels.FootprintOf(p); ok {
		work += elemFLOPs * f.Elems
	}
	return work * float64(repeats) / 1e9 / (interpGFLOPS * float64(runtime.NumCPU()))
}

// checkInterpWork refuses a run whose work over repeats exceeds maxGFLOP
// (0: no bound) on the interpreter: its FLOPs, and elemFLOPs for each
// tensor element (moving one costs the interpreter more than its
// arithmetic: MLA's split path over 4096 splits, 3.4e7 elements and few
// FLOPs, took 54 s on 2 cores).
func checkInterpWork(p kernels.Problem, repeats int, maxGFLOP float64) error {
	work := p.FLOPs()
	if f, ok := kernels.FootprintOf(p); ok {
		work += elemFLOPs * f.Elems
	}
	gflop := work * float64(repeats) / 1e9
	if maxGFLOP <= 0 || gflop <= maxGFLOP {
		return nil
	}
	minutes := gflop / (interpGFLOPS * float64(runtime.NumCPU())) / 60
	return fmt.Errorf("%s on the interpreter: about %.4g GFLOP of work (its FLOPs, and %d a tensor element), over --max-gflop %g (about %.0f minutes on %d cores); use a GPU, a smaller shape, or --max-gflop 0 for no bound",
		p.Kernel(), gflop, elemFLOPs, maxGFLOP, minutes, runtime.NumCPU())
}

// bytesText prints a byte count for people: 1.5 GiB, 300 MiB.
func bytesText(b float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}} {
		if b >= u.size {
			return fmt.Sprintf("%.3g %s", b/u.size, u.name)
		}
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}
