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
// straight from its definition, a query row at a time (rowGrads): dQ =
// scale·dS·K, dK = scale·dSᵀ·Q, dV = Pᵀ·dO. It costs about
// 4·B·H·Sq·Skv·D multiply-adds: small shapes only.
func (p Attn) AttentionGrads(q, k, v, do *tensor.Tensor) Grads {
	B, H, Sq, D := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	HKV, Skv, Dv := k.Shape[1], k.Shape[2], v.Shape[3]
	g := Grads{
		DQ: make([]float64, B*H*Sq*D),
		DK: make([]float64, B*HKV*Skv*D),
		DV: make([]float64, B*HKV*Skv*Dv),
	}
	for b := range B {
		for h := range H {
			hk := h / (H / HKV)
			for i := range Sq {
				P, dS := p.rowGrads(q, k, v, do, b, h, i)
				qi, doi := Vec(q, b, h, i), Vec(do, b, h, i)
				for j, pij := range P {
					ds := dS[j] * p.Scale
					kj := Vec(k, b, hk, j)
					for x := range D {
						g.DQ[((b*H+h)*Sq+i)*D+x] += ds * kj[x]
						g.DK[((b*HKV+hk)*Skv+j)*D+x] += ds * qi[x]
					}
					for x := range Dv {
						g.DV[((b*HKV+hk)*Skv+j)*Dv+x] += pij * doi[x]
					}
				}
			}
		}
	}
	return g
}

// rowGrads is query row i of head h's softmax weights P over the keys it
// sees (as AttentionRow) and dS = P∘(dP − rowsum(P∘dP)), dP = dO·Vᵀ.
func (p Attn) rowGrads(q, k, v, do *tensor.Tensor, b, h, i int) (P, dS []float64) {
	hk := h / (q.Shape[1] / k.Shape[1])
	P, _ = p.probs(q, k, b, h, i)
	dS = make([]float64, len(P))
	var delta float64
	doi := Vec(do, b, h, i)
	for j := range P {
		vj := Vec(v, b, hk, j)
		for x := range v.Shape[3] {
			dS[j] += doi[x] * vj[x]
		}
		delta += P[j] * dS[j]
	}
	for j := range dS {
		dS[j] = P[j] * (dS[j] - delta)
	}
	if p.ScoreGrad != nil { // through the score modifier: its derivative at the scaled score
		qi := Vec(q, b, h, i)
		for j := range dS {
			kj := Vec(k, b, hk, j)
			var x float64
			for d := range qi {
				x += qi[d] * kj[d]
			}
			dS[j] *= p.ScoreGrad(x*p.Scale, b, h, i, j)
		}
	}
	return P, dS
}

// GradQRow is row i of head h of dQ (length D), from that row's P and dP
// alone: about 2·Skv·(D + Dv) multiply-adds, for a sampled check.
func (p Attn) GradQRow(q, k, v, do *tensor.Tensor, b, h, i int) []float64 {
	hk := h / (q.Shape[1] / k.Shape[1])
	dq := make([]float64, q.Shape[3])
	_, dS := p.rowGrads(q, k, v, do, b, h, i)
	for j, ds := range dS {
		kj := Vec(k, b, hk, j)
		for x := range dq {
			dq[x] += ds * p.Scale * kj[x]
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
	kj, vj := Vec(k, b, hk, j), Vec(v, b, hk, j)
	for h := hk * G; h < (hk+1)*G; h++ {
		for i := range Sq {
			if !p.visible(b, h, i, j, Sq, Skv) {
				continue
			}
			qi, doi := Vec(q, b, h, i), Vec(do, b, h, i)
			var s, dp float64
			for x := range D {
				s += qi[x] * kj[x]
			}
			for x := range Dv {
				dp += doi[x] * vj[x]
			}
			x := s * p.Scale
			sx, grad := x, 1.0
			if p.Score != nil {
				sx = p.Score(x, b, h, i, j)
			}
			if p.ScoreGrad != nil {
				grad = p.ScoreGrad(x, b, h, i, j)
			}
			pij := math.Exp(sx - lse(b, h, i))
			ds := pij * (dp - delta(b, h, i)) * grad * p.Scale
			for x := range D {
				dk[x] += ds * qi[x]
			}
			for x := range Dv {
				dv[x] += pij * doi[x]
			}
		}
	}
	return dk, dv
}
