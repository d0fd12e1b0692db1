package kernels

import "github.com/tilego/tilego/ir"

// Footprint is the memory a problem's tensors take, counted from its
// shape without making them: the CLI refuses a run the machine cannot
// hold before Inputs allocates (host tensors are float64, 4× a bf16
// GPU's bytes, so a shape a GPU holds can exhaust the host).
type Footprint struct {
	Elems    float64 // elements of the tensors Inputs makes: float64 each on the host
	Bytes    float64 // the same tensors in their dtypes, as a GPU holds them
	OutElems float64 // elements of the outputs Check compares with float64
}

// add counts one tensor of dt with dims; out marks a checked output.
func (f *Footprint) add(dt ir.DType, out bool, dims ...int) {
	n := 1.0
	for _, d := range dims {
		n *= float64(d)
	}
	f.Elems += n
	f.Bytes += n * float64(max(dt.Bytes(), 1))
	if out {
		f.OutElems += n
	}
}

// FootprintOf is p's footprint; ok is false for a problem it does not know
// (then nothing can be said before Inputs runs).
func FootprintOf(p Problem) (f Footprint, ok bool) {
	switch q := p.(type) {
	case *gemmProblem:
		s := q.s
		f.add(s.DType, false, s.M, s.K)
		f.add(s.DType, false, s.K, s.N)
		f.add(s.OutDType, true, s.M, s.N)
		if e := s.Epi; e != nil && e.Bias {
			f.add(s.DType, false, s.N)
		}
		if e := s.Epi; e != nil && e.Residual {
			f.add(s.OutDType, false, s.M, s.N)
		}
	case *gemmSplitProblem:
		s := q.s
		f.add(s.DType, false, s.M, s.K)
		f.add(s.DType, false, s.K, s.N)
		f.add(s.OutDType, true, s.M, s.N)
		f.add(ir.F32, false, q.splits, s.M, s.N) // the partials
	case *kvCacheProblem:
		s := q.s
		f.add(s.DType, false, s.B, s.H, s.Sq, s.Dqk)
		f.add(s.DType, false, s.Pages, s.Page, s.HKV, s.Dqk)
		f.add(s.DType, false, s.Pages, s.Page, s.HKV, s.Dv)
		f.add(s.DType, true, s.B, s.H, s.Sq, s.Dv)
		f.add(ir.F32, true, s.B, s.H, s.Sq)
	case *varlenProblem:
		s := q.s
		tq, tk := s.total(s.LensQ), s.total(s.LensK)
		f.add(s.DType, false, tq, s.H, s.Dqk)
		f.add(s.DType, false, tk, s.HKV, s.Dqk)
		f.add(s.DType, false, tk, s.HKV, s.Dv)
		f.add(s.DType, true, tq, s.H, s.Dv)
		f.add(ir.F32, true, s.H, tq)
	case *attnProblem:
		f.attention(q.s)
	case *attnSplitProblem:
		s := q.s
		f.attention(s)
		if q.splits > 1 {
			c := AttnConfig{M: q.m}
			rows := s.B * s.H * s.Sq // FlashAttentionSplitInputs: every row a split
			if TailSplitFits(s, c, q.sms) {
				rows = tailOf(s, c, q.sms).tail * c.M // the tail's tiles only
			}
			f.add(ir.F32, false, q.splits, rows, s.Dv)
			f.add(ir.F32, false, q.splits, rows)
		}
	case *attnBwdProblem:
		s := q.s
		f.attention(s)                              // Q, K, V, O, LSE (O and LSE are inputs here)
		f.OutElems = 0                              // ... and the gradients the outputs
		f.add(s.DType, false, s.B, s.H, s.Sq, s.Dv) // dO
		f.add(ir.F32, false, s.B, s.H, s.Sq)        // Delta
		f.add(ir.F32, false, s.B, s.H, s.Sq, s.Dqk) // dQ's f32 accumulator
		f.add(s.DType, true, s.B, s.H, s.Sq, s.Dqk)
		f.add(s.DType, true, s.B, s.HKV, s.Skv, s.Dqk)
		f.add(s.DType, true, s.B, s.HKV, s.Skv, s.Dv)
	case *mlaProblem:
		f.mla(q)
	default:
		return Footprint{}, false
	}
	return f, true
}

// attention counts AttentionInputs: Q, K, V, then the outputs O and LSE.
func (f *Footprint) attention(s AttnShape) {
	f.add(s.DType, false, s.B, s.H, s.Sq, s.Dqk)
	f.add(s.DType, false, s.B, s.HKV, s.Skv, s.Dqk)
	f.add(s.DType, false, s.B, s.HKV, s.Skv, s.Dv)
	f.add(s.DType, true, s.B, s.H, s.Sq, s.Dv)
	f.add(ir.F32, true, s.B, s.H, s.Sq)
}

// mla counts MLAInputs (and MLAPartials on the split path).
func (f *Footprint) mla(p *mlaProblem) {
	s := p.s.Full()
	b := len(p.lens)
	total, width := 0, 1
	for _, n := range mlaBlocks(p.lens, s.Page) {
		total, width = total+n, max(width, n)
	}
	f.add(s.DType, false, b, s.Sq, s.Hq, s.Dqk)
	f.add(s.DType, false, total+2, s.Page, s.Dqk) // the pool, two spare blocks
	f.add(ir.I32, false, b, width)
	f.add(ir.I32, false, b)
	f.add(s.DType, true, b, s.Sq, s.Hq, s.Dv)
	f.add(ir.F32, true, b, s.Sq, s.Hq)
	if md := p.md; md != nil {
		chunks := 0
		for _, part := range md.Parts {
			chunks += len(part)
		}
		f.add(ir.I32, false, max(len(md.Parts), 1), 2)
		f.add(ir.I32, false, max(chunks, 1), 4)
		f.add(ir.I32, false, len(md.NumSplits))
		f.add(s.partialDType(), false, b, md.Splits, s.Sq, s.Hq, s.Dv)
		f.add(ir.F32, false, b, md.Splits, s.Sq, s.Hq)
		f.add(ir.I32, false, b, max(2, s.Sq*s.Hq))
	}
}
