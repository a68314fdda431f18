package decode

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/demo"
)

// refForward is the decoder written out in float64 loops, apart from
// the graph builder: the logits [len(ids), Vocab] of a causal forward
// pass over ids from position 0, in the Hugging Face Llama conventions
// (RMSNorm x/√(mean x² + eps)·scale; rotate-half rotary embeddings with
// angle p·theta^(-2i/HeadDim); query head h reads key/value head
// h/(Heads/KVHeads); SwiGLU silu(x·Wgate)·(x·Wup)·Wdown; with QKVBias,
// the q, k and v projections' biases added before rotation). Weights are
// [in, out] row-major, as the graph's MatMul takes them.
func refForward(c demo.DecoderConfig, w map[string][]float32, ids []int64) []float32 {
	s, hid, hd := len(ids), c.Hidden, c.HeadDim()
	x := make([][]float64, s)
	for p, id := range ids {
		x[p] = widen(w["embeddings.word"][int(id)*hid:][:hid])
	}
	for l := range c.Layers {
		pre := fmt.Sprintf("layer%d.", l)
		q, k, v := make([][]float64, s), make([][]float64, s), make([][]float64, s)
		proj := func(h []float64, name string, n int) []float64 {
			y := refMatVec(h, w[pre+name+".weight"], n)
			if c.QKVBias {
				for i, b := range w[pre+name+".bias"] {
					y[i] += float64(b)
				}
			}
			return y
		}
		for p := range s {
			h := refRMSNorm(x[p], w[pre+"attn_norm.scale"], c.Eps)
			q[p] = refRope(c, proj(h, "q", c.Heads*hd), p)
			k[p] = refRope(c, proj(h, "k", c.KVHeads*hd), p)
			v[p] = proj(h, "v", c.KVHeads*hd)
		}
		for p := range s {
			a := make([]float64, c.Heads*hd)
			for h := range c.Heads {
				kh := h / (c.Heads / c.KVHeads)
				sc := make([]float64, p+1) // causal: keys 0..p
				best := math.Inf(-1)
				for j := range sc {
					for d := range hd {
						sc[j] += q[p][h*hd+d] * k[j][kh*hd+d]
					}
					sc[j] /= math.Sqrt(float64(hd))
					best = max(best, sc[j])
				}
				var sum float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - best)
					sum += sc[j]
				}
				for j := range sc {
					for d := range hd {
						a[h*hd+d] += sc[j] / sum * v[j][kh*hd+d]
					}
				}
			}
			o := refMatVec(a, w[pre+"o.weight"], hid)
			for i := range o {
				x[p][i] += o[i]
			}
			h := refRMSNorm(x[p], w[pre+"mlp_norm.scale"], c.Eps)
			gate, up := refMatVec(h, w[pre+"gate.weight"], c.FFN), refMatVec(h, w[pre+"up.weight"], c.FFN)
			for i, g := range gate {
				gate[i] = g / (1 + math.Exp(-g)) * up[i]
			}
			down := refMatVec(gate, w[pre+"down.weight"], hid)
			for i := range down {
				x[p][i] += down[i]
			}
		}
	}
	out := make([]float32, 0, s*c.Vocab)
	for p := range s {
		for _, z := range refMatVec(refRMSNorm(x[p], w["final_norm.scale"], c.Eps), w["lm_head.weight"], c.Vocab) {
			out = append(out, float32(z))
		}
	}
	return out
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func refRMSNorm(x []float64, scale []float32, eps float32) []float64 {
	var ms float64
	for _, v := range x {
		ms += v * v
	}
	r := 1 / math.Sqrt(ms/float64(len(x))+float64(eps))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * r * float64(scale[i])
	}
	return out
}

// refMatVec is x·W for W [len(x), n] row-major.
func refMatVec(x []float64, wt []float32, n int) []float64 {
	out := make([]float64, n)
	for i, xi := range x {
		for j := range n {
			out[j] += xi * float64(wt[i*n+j])
		}
	}
	return out
}

// refRope rotates every head of x (heads of HeadDim) for position p:
// (a, b) = (x[i], x[i+half]) → (a·cos − b·sin, b·cos + a·sin).
func refRope(c demo.DecoderConfig, x []float64, p int) []float64 {
	hd := c.HeadDim()
	half := hd / 2
	for h := 0; h < len(x); h += hd {
		for i := range half {
			ang := float64(p) * math.Pow(c.RopeTheta, -float64(2*i)/float64(hd))
			a, b := x[h+i], x[h+i+half]
			x[h+i], x[h+i+half] = a*math.Cos(ang)-b*math.Sin(ang), b*math.Cos(ang)+a*math.Sin(ang)
		}
	}
	return x
}

func refArgmax(v []float32) int64 {
	at := 0
	for i, x := range v {
		if x > v[at] {
			at = i
		}
	}
	return int64(at)
}
