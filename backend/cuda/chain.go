package cuda

import (
	"fmt"
	"slices"

	"github.com/tilego/tilego/backend"
	"github.com/tilego/tilego/compiler/cudagen"
	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// Chain is several programs launched in order over one set of device
// tensors: split-KV attention runs its split kernel, then the combine,
// and the partials between them never leave the device. A later step
// whose program starts early (Program.Early: it waits for what it reads
// of the step before by counters) is launched so that it may run beside
// that step's last blocks (programmatic dependent launch; SwitchPDL off
// launches every step after the one before).
type Chain struct {
	b       *Backend
	bufs    []drv.Buffer
	steps   []*Launch
	outputs []int // indices into the chain's tensors of everything a step writes
	owned   bool  // bufs are the chain's to free (PrepareChain), not its caller's (BindChain)
}

// PrepareChain uploads args once and binds program i to the tensors
// args[idx[i][0]], args[idx[i][1]], ... in its parameter order.
func PrepareChain(b *Backend, progs []*cudagen.Program, idx [][]int, args []*tensor.Tensor) (*Chain, error) {
	if len(progs) == 0 || len(progs) != len(idx) {
		return nil, fmt.Errorf("cuda: a chain of %d programs with %d argument lists", len(progs), len(idx))
	}
	bufs, err := b.upload(args)
	if err != nil {
		return nil, err
	}
	return chain(b, progs, idx, args, bufs, true)
}

// chain binds the steps over bufs, which hold args (their shapes bind the
// sizes); owned: the chain frees bufs (on error too).
func chain(b *Backend, progs []*cudagen.Program, idx [][]int, args []*tensor.Tensor, bufs []drv.Buffer, owned bool) (*Chain, error) {
	if len(progs) == 0 || len(progs) != len(idx) {
		return nil, fmt.Errorf("cuda: a chain of %d programs with %d argument lists", len(progs), len(idx))
	}
	c := &Chain{b: b, bufs: bufs, owned: owned}
	for i, p := range progs {
		sub, subBufs := make([]*tensor.Tensor, len(idx[i])), make([]drv.Buffer, len(idx[i]))
		for j, a := range idx[i] {
			if a < 0 || a >= len(args) {
				c.Free()
				return nil, fmt.Errorf("cuda: chain step %d (%s) takes tensor %d of %d", i, p.Name, a, len(args))
			}
			sub[j], subBufs[j] = args[a], bufs[a]
		}
		l, err := bind(b, p, sub, subBufs)
		if err != nil {
			c.Free()
			return nil, fmt.Errorf("chain step %d (%s): %w", i, p.Name, err)
		}
		l.early = i > 0 && p.Early && b.opts.Switches.Choose(cudagen.SwitchPDL, true)
		c.steps = append(c.steps, l)
		for _, o := range l.outputs {
			if a := idx[i][o]; !slices.Contains(c.outputs, a) {
				c.outputs = append(c.outputs, a)
			}
		}
	}
	slices.Sort(c.outputs)
	return c, nil
}

// Free releases the device tensors PrepareChain made (not BindChain's)
// and what each step allocated.
func (c *Chain) Free() {
	for _, l := range c.steps {
		l.Free()
	}
	if !c.owned {
		return
	}
	c.b.free(c.bufs)
	c.bufs = nil
}

// Poison fills every tensor any step writes with 0xFF bytes (NaN).
func (c *Chain) Poison() error { return c.b.poison(c.bufs, c.outputs) }

// Once runs the steps in order and waits for the last.
func (c *Chain) Once() error {
	if err := c.start(); err != nil {
		return err
	}
	last := c.steps[len(c.steps)-1]
	return drv.Sync(last.fn, nil)
}

// Start enqueues every step on stream (nil: the default stream), in
// order, without waiting.
func (c *Chain) Start(stream *drv.Stream) error {
	for _, l := range c.steps {
		if err := l.Start(stream); err != nil {
			return err
		}
	}
	return nil
}

// start is Start on the default stream.
func (c *Chain) start() error { return c.Start(nil) }

func (c *Chain) kernelName() string {
	names := make([]string, len(c.steps))
	for i, l := range c.steps {
		names[i] = l.p.Name
	}
	return fmt.Sprint(names)
}

// Time runs opt.Warmup chains, then times opt.Repeats (at least one) from
// the first step's start to the last step's end, and returns the median.
func (c *Chain) Time(opt backend.RunOptions) (backend.Result, error) {
	if err := c.Once(); err != nil {
		return backend.Result{}, err
	}
	return c.b.timeBackToBack(c, opt)
}

// Download copies every tensor a step writes back into args.
func (c *Chain) Download(args []*tensor.Tensor) error {
	for _, i := range c.outputs {
		if err := download(c.b, c.bufs[i], args[i]); err != nil {
			return err
		}
	}
	return c.b.dumpStamps()
}

// Steps are the chain's launches, in order.
func (c *Chain) Steps() []*Launch { return c.steps }
