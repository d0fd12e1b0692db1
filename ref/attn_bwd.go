package ref

import (
	"math"

	"github.com/tilego/tilego/tensor"
)

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
				row := P[i*Skv : (i+1)*Skv]
				clear(row)
				s, _ := p.probs(q, k, b, h, i)
				copy(row, s)
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

// GradQRow is row i of head h of dQ (length D), from that row's P and dP
// alone: about 2·Skv·(D + Dv) multiply-adds, for a sampled check.
func (p Attn) GradQRow(q, k, v, do *tensor.Tensor, b, h, i int) []float64 {
	D, Dv := q.Shape[3], v.Shape[3]
	hk := h / (q.Shape[1] / k.Shape[1])
	dq := make([]float64, D)
	P, _ := p.probs(q, k, b, h, i)
	dP := make([]float64, len(P))
	var delta float64
	for j := range dP {
		for x := range Dv {
			dP[j] += do.At(b, h, i, x) * v.At(b, hk, j, x)
		}
		delta += P[j] * dP[j]
	}
	for j := range P {
		ds := P[j] * (dP[j] - delta) * p.Scale
		for x := range D {
			dq[x] += ds * k.At(b, hk, j, x)
		}
	}
	return dq
}

// GradKVRow is row j of KV head hk of dK and of dV (lengths D and Dv),
// summed over the head's query heads, given each query row's
// log-sum-exp and Delta = rowsum(dO∘O): what the forward leaves, so
// that a row costs about 2·G·Sq·(D + Dv) multiply-adds (G query heads a
// KV head), for a sampled check.
func (p Attn) GradKVRow(q, k, v, do *tensor.Tensor, lse, delta func(b, h, i int) float64, b, hk, j int) (dk, dv []float64) {
	H, Sq, D := q.Shape[1], q.Shape[2], q.Shape[3]
	G, Skv, Dv := H/k.Shape[1], k.Shape[2], v.Shape[3]
	dk, dv = make([]float64, D), make([]float64, Dv)
	for h := hk * G; h < (hk+1)*G; h++ {
		for i := range Sq {
			if p.Causal && j > i+Skv-Sq {
				continue
			}
			var s, dp float64
			for x := range D {
				s += q.At(b, h, i, x) * k.At(b, hk, j, x)
			}
			for x := range Dv {
				dp += do.At(b, h, i, x) * v.At(b, hk, j, x)
			}
			pij := math.Exp(s*p.Scale - lse(b, h, i))
			ds := pij * (dp - delta(b, h, i)) * p.Scale
			for x := range D {
				dk[x] += ds * q.At(b, h, i, x)
			}
			for x := range Dv {
				dv[x] += pij * do.At(b, h, i, x)
			}
		}
	}
	return dk, dv
}
