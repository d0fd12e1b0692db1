package cuda

import (
	"fmt"

	"github.com/tilego/tilego/compiler/cudagen"
	"github.com/tilego/tilego/interp"
	"github.com/tilego/tilego/ir"
	drv "github.com/tilego/tilego/runtime/cuda"
)

// encodeTMA encodes p's tensor maps for its tensors on bufs.
func encodeTMA(b *Backend, p *cudagen.Program, bufs []drv.Buffer, syms map[*ir.Var]int) ([]any, error) {
	var out []any
	for i := range p.TMA {
		spec, err := tiledSpec(p, i, bufs, syms)
		if err == nil {
			var tm drv.TensorMap
			if tm, err = b.dev.EncodeTiled(spec); err == nil {
				out = append(out, tm)
				continue
			}
		}
		return nil, fmt.Errorf("kernel %s, tensor map %d (%s): %w", p.Name, i, p.Func.Params[p.TMA[i].Param].Name, err)
	}
	return out, nil
}

// tiledSpec describes tensor map i of p over its tensor on bufs: the
// tensor's dims and byte strides innermost first, the box, the 128B
// swizzle the shared tiles use (none for a line).
func tiledSpec(p *cudagen.Program, i int, bufs []drv.Buffer, syms map[*ir.Var]int) (drv.TiledSpec, error) {
	s := p.TMA[i]
	prm := p.Func.Params[s.Param]
	n := len(prm.Shape)
	spec := drv.TiledSpec{Global: bufs[s.Param], Box: s.Box, Swizzle: drv.Swizzle128B, L2: drv.L2Promotion128B}
	if s.Line {
		spec.Swizzle = drv.SwizzleNone
	}
	switch prm.DType {
	case ir.F32:
		spec.DType = drv.TensorFloat32
	case ir.I32:
		spec.DType = drv.TensorInt32
	case ir.BF16:
		spec.DType = drv.TensorBFloat16
	case ir.F16:
		spec.DType = drv.TensorFloat16
	case ir.F8E4M3, ir.F8E5M2: // TMA moves bytes
		spec.DType = drv.TensorUint8
	default:
		return spec, fmt.Errorf("TMA of %s", prm.DType)
	}
	eb := uint64(prm.DType.Bytes())
	dims, strides := make([]int, n), make([]int, n)
	for d := n - 1; d >= 0; d-- {
		v, err := interp.EvalInt(prm.Shape[d], syms)
		if err != nil {
			return spec, err
		}
		dims[d] = v
		switch {
		case prm.Strides != nil:
			if strides[d], err = interp.EvalInt(prm.Strides[d], syms); err != nil {
				return spec, err
			}
		case d == n-1:
			strides[d] = 1
		default: // row-major
			strides[d] = strides[d+1] * dims[d+1]
		}
	}
	for d := n - 1; d >= 0; d-- { // innermost first; dim 0's stride is implicit
		spec.Dims = append(spec.Dims, uint64(dims[d]))
		if d < n-1 {
			spec.Strides = append(spec.Strides, uint64(strides[d])*eb)
		}
	}
	return spec, nil
}
