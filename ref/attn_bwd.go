package ref

import "github.com/tilego/tilego/tensor"

// Grads are attention's gradients in float64, laid out [B, heads, S, D]
// row-major: dQ over the query heads, dK and dV over the KV heads (a GQA
// group's query heads summed).
type Grads struct {
	DQ, DK, DV []float64
}

// AttentionGrads is the backward of O = softmax(scale·Q·Kᵀ)·V given dO,
// straight from its definition: per query head, P (masked as
// AttentionRow), dP = dO·Vᵀ, dS = P∘(dP − rowsum(P∘dP)), dQ = scale·dS·K,
// dK = scale·dSᵀ·Q, dV = Pᵀ·dO. It costs about 4·B·H·Sq·Skv·D
// multiply-adds: small shapes only.
func (p Attn) AttentionGrads(q, k, v, do *tensor.Tensor) Grads {
	B, H, Sq, D := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	HKV, Skv, Dv := k.Shape[1], k.Shape[2], v.Shape[3]
	g := Grads{
		DQ: make([]float64, B*H*Sq*D),
		DK: make([]float64, B*HKV*Skv*D),
		DV: make([]float64, B*HKV*Skv*Dv),
	}
	P := make([]float64, Sq*Skv)
	dS := make([]float64, Sq*Skv)
	for b := range B {
		for h := range H {
			hk := h / (H / HKV)
			for i := range Sq {
				last := Skv - 1
				if p.Causal {
					last = min(last, i+Skv-Sq)
				}
				row := P[i*Skv : (i+1)*Skv]
				clear(row)
				if last < 0 {
					continue
				}
				s := row[:last+1]
				for j := range s {
					var d float64
					for x := range D {
						d += q.At(b, h, i, x) * k.At(b, hk, j, x)
					}
					s[j] = d * p.Scale
				}
				Softmax(s)
			}
			for i := range Sq {
				var delta float64
				for j := range Skv {
					dp := 0.0
					if pij := P[i*Skv+j]; pij != 0 {
						for x := range Dv {
							dp += do.At(b, h, i, x) * v.At(b, hk, j, x)
						}
						delta += pij * dp
					}
					dS[i*Skv+j] = dp
				}
				for j := range Skv {
					dS[i*Skv+j] = P[i*Skv+j] * (dS[i*Skv+j] - delta)
				}
			}
			for i := range Sq {
				for j := range Skv {
					ds, pij := dS[i*Skv+j]*p.Scale, P[i*Skv+j]
					if ds == 0 && pij == 0 {
						continue
					}
					for x := range D {
						g.DQ[((b*H+h)*Sq+i)*D+x] += ds * k.At(b, hk, j, x)
						g.DK[((b*HKV+hk)*Skv+j)*D+x] += ds * q.At(b, h, i, x)
					}
					for x := range Dv {
						g.DV[((b*HKV+hk)*Skv+j)*Dv+x] += pij * do.At(b, h, i, x)
					}
				}
			}
		}
	}
	return g
}
