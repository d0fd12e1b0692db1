//go:build gpu

package cuda

import (
	"bytes"
	"testing"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/ir"
	"github.com/tilego/tilego/kernels"
	drv "github.com/tilego/tilego/runtime/cuda"
	"github.com/tilego/tilego/tensor"
)

// toDevice copies args into new device buffers (outputs filled with 0xFF
// bytes) and describes them as DeviceTensors, as a program that keeps its
// tensors on the GPU would; free releases them.
func toDevice(t *testing.T, b *Backend, args []*tensor.Tensor) (ds []DeviceTensor, free func()) {
	t.Helper()
	var bufs []drv.Buffer
	free = func() {
		for _, x := range bufs {
			b.Driver().Free(x)
		}
	}
	for _, a := range args {
		data := a.Bytes()
		buf, err := b.Driver().Alloc(max(len(data), 16))
		if err != nil {
			free()
			t.Fatal(err)
		}
		bufs = append(bufs, buf)
		if err := b.Driver().CopyHtoD(buf, data); err != nil {
			free()
			t.Fatal(err)
		}
		ds = append(ds, DeviceTensor{Buf: buf, DType: a.DType, Shape: a.Shape})
	}
	return ds, free
}

// fromDevice is the bytes of device tensor d.
func fromDevice(t *testing.T, b *Backend, d DeviceTensor, like *tensor.Tensor) []byte {
	t.Helper()
	out := make([]byte, len(like.Bytes()))
	if err := b.Driver().CopyDtoH(out, drv.Buffer{Ptr: d.Buf.Ptr, Size: len(out)}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Bind and BindChain over memory the caller owns (the chain started on a
// stream of its own) give the very bytes that Prepare and PrepareChain
// give over uploaded host tensors (outputs poisoned first either way), and
// leave that memory to the caller.
func TestGPUDeviceTensors(t *testing.T) {
	b := openGPU(t)
	t.Run("gemm", func(t *testing.T) {
		s := kernels.GemmShape{M: 200, N: 136, K: 96, DType: ir.BF16, OutDType: ir.F32}
		f, err := kernels.Gemm(s, kernels.GemmConfig{BM: 64, BN: 64, BK: 32, Stages: 3, Threads: 128}).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := cudagen.Compile(f, cudagen.Options{Arch: b.Arch()})
		if err != nil {
			t.Fatal(err)
		}
		args := kernels.GemmInputs(s, 5)[:3]
		ds, free := toDevice(t, b, args)
		defer free()
		if err := b.Driver().MemsetD8(ds[2].Buf, 0xff); err != nil {
			t.Fatal(err)
		}
		l, err := Bind(b, p, ds)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Once(); err != nil {
			t.Fatal(err)
		}
		l.Free() // the caller's memory stays
		got := fromDevice(t, b, ds[2], args[2])
		runPoisoned(t, b, b.Arch(), f, args)
		if !bytes.Equal(got, args[2].Bytes()) {
			t.Error("Bind's output differs from Prepare's")
		}
	})
	t.Run("mla_split", func(t *testing.T) {
		s := kernels.MLAShape{Hq: 128, Sq: 1, DType: ir.BF16}
		cfg := kernels.MLAConfig{M: 64, Stages: 1, Threads: 256}
		lens := []int32{2000, 3, 700}
		md := kernels.ScheduleMLA(lens, s.Sq, s.Hq, 132)
		args := append(kernels.MLAInputs(s, lens, 4), kernels.MLAPartials(s, md)...)
		steps := kernels.MLASplitSteps(s, cfg)
		progs, idx := compileSteps(t, b, b.Arch(), steps)
		ds, free := toDevice(t, b, args)
		defer free()
		ch, err := BindChain(b, progs, idx, ds)
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Poison(); err != nil {
			t.Fatal(err)
		}
		// Enqueued on a stream of its own, as a server would, then waited for.
		st, err := b.Driver().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := ch.Start(st); err != nil {
			t.Fatal(err)
		}
		if err := st.Synchronize(); err != nil {
			t.Fatal(err)
		}
		ch.Free()
		gotO, gotL := fromDevice(t, b, ds[4], args[4]), fromDevice(t, b, ds[5], args[5])
		runChainPoisoned(t, b, b.Arch(), steps, args)
		if !bytes.Equal(gotO, args[4].Bytes()) || !bytes.Equal(gotL, args[5].Bytes()) {
			t.Error("BindChain's O or LSE differs from PrepareChain's")
		}
		checkMLAGPU(t, s, args, mlaRows(s, len(lens)))
	})
}
