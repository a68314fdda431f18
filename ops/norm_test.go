package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestLayerNormCases(t *testing.T) {
	const eps = 1e-5
	e := float64(float32(eps)) // the attribute is a float32
	r1 := math.Sqrt(1.25 + e)  // row [1 2 3 4]: mean 2.5, biased variance 1.25
	r3 := math.Sqrt(3 + e)     // row [0 0 0 4]: mean 1, biased variance 3 (unbiased would be 4)
	x := []float64{1, 2, 3, 4, 2, 2, 2, 2, 0, 0, 0, 4}
	plain := []float64{
		-1.5 / r1, -0.5 / r1, 0.5 / r1, 1.5 / r1,
		0, 0, 0, 0, // constant row: 0/sqrt(eps)
		-1 / r3, -1 / r3, -1 / r3, 3 / r3,
	}
	scale, bias := []float64{1, 2, 3, 4}, []float64{0, 1, 0, -1}
	affine := func(withScale, withBias bool) []float64 {
		out := make([]float64, len(plain))
		for i, v := range plain {
			if withScale {
				v *= scale[i%4]
			}
			if withBias {
				v += bias[i%4]
			}
			out[i] = v
		}
		return out
	}
	for _, dt := range hcDTypes {
		for _, c := range []struct {
			name        string
			scale, bias bool
		}{{"plain", false, false}, {"scale", true, false}, {"scale+bias", true, true}, {"bias only", false, true}} {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				ins := []tensor.Tensor{hcT(t, dt, tensor.Shape{3, 4}, x...)}
				var sn, bn *graph.Node
				if c.scale {
					sn = g.Input("s", dt, 4)
					ins = append(ins, hcT(t, dt, tensor.Shape{4}, scale...))
				}
				if c.bias {
					bn = g.Input("b", dt, 4)
					if !c.scale { // the builder supplies a constant scale of ones
						ins = append(ins, hcT(t, dt, tensor.Shape{4}, 1, 1, 1, 1))
					}
					ins = append(ins, hcT(t, dt, tensor.Shape{4}, bias...))
				}
				n := g.LayerNorm(g.Input("x", dt, 3, 4), sn, bn, -1, eps)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				hcClose(t, "layernorm", hcRun(t, n, ins...), affine(c.scale, c.bias), hcTol(dt))
			})
		}
		t.Run(dt.String()+"/axis 1 of 3", func(t *testing.T) {
			// x [2 2 2]: each batch row of 4 is normalised as a whole, scale is [2 2].
			g := graph.New()
			n := g.LayerNorm(g.Input("x", dt, 2, 2, 2), g.Input("s", dt, 2, 2), nil, 1, eps)
			got := hcRun(t, n, hcT(t, dt, tensor.Shape{2, 2, 2}, 1, 2, 3, 4, 0, 0, 0, 4), hcT(t, dt, tensor.Shape{2, 2}, scale...))
			want := affine(true, false)
			hcClose(t, "layernorm", got, append(want[:4:4], want[8:]...), hcTol(dt))
		})
		t.Run(dt.String()+"/whole tensor", func(t *testing.T) {
			g := graph.New()
			n := g.LayerNorm(g.Input("x", dt, 2, 2), nil, nil, 0, 0)
			got := hcRun(t, n, hcT(t, dt, tensor.Shape{2, 2}, 0, 0, 0, 4))
			s := math.Sqrt(3)
			hcClose(t, "layernorm", got, []float64{-1 / s, -1 / s, -1 / s, 3 / s}, hcTol(dt))
		})
	}
}

func TestRMSNormCases(t *testing.T) {
	for _, dt := range hcDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// [2 -2 2 -2]: mean square 4, rms 2. [3 4] with eps 3.5: mean square 12.5, rms 4.
			g := graph.New()
			n := g.RMSNorm(g.Input("x", dt, 2, 4), nil, -1, 0)
			hcClose(t, "rms", hcRun(t, n, hcT(t, dt, tensor.Shape{2, 4}, 2, -2, 2, -2, 1, 1, 1, 1)),
				[]float64{1, -1, 1, -1, 1, 1, 1, 1}, hcTol(dt))
			n = g.RMSNorm(g.Input("x2", dt, 2, 4), g.Input("s", dt, 4), 1, 0)
			hcClose(t, "rms scale", hcRun(t, n, hcT(t, dt, tensor.Shape{2, 4}, 2, -2, 2, -2, 0, 0, 0, 6), hcT(t, dt, tensor.Shape{4}, 1, 2, 3, 4)),
				[]float64{1, -2, 3, -4, 0, 0, 0, 4 * 6 / 3}, hcTol(dt)) // [0 0 0 6]: rms sqrt(36/4) = 3
			n = g.RMSNorm(g.Input("x3", dt, 1, 2), nil, 1, 3.5)
			hcClose(t, "rms eps", hcRun(t, n, hcT(t, dt, tensor.Shape{1, 2}, 3, 4)), []float64{0.75, 1}, hcTol(dt))
			// Axis 0 of [2 2]: one row of four.
			n = g.RMSNorm(g.Input("x4", dt, 2, 2), g.Input("s4", dt, 2, 2), 0, 0)
			hcClose(t, "rms axis 0", hcRun(t, n, hcT(t, dt, tensor.Shape{2, 2}, 1, -1, 1, -1), hcT(t, dt, tensor.Shape{2, 2}, 1, 2, 3, 4)),
				[]float64{1, -2, 3, -4}, hcTol(dt))
		})
	}
}

func TestBatchNormCases(t *testing.T) {
	for _, dt := range hcDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			// Channel 0: (x-1)/2; channel 1: (x+1)/0.5·2 + 10 = 4(x+1) + 10.
			params := func(g *graph.Graph, suffix string) (s, b, m, v *graph.Node) {
				return g.Input("s"+suffix, dt, 2), g.Input("b"+suffix, dt, 2), g.Input("m"+suffix, dt, 2), g.Input("v"+suffix, dt, 2)
			}
			pv := []tensor.Tensor{
				hcT(t, dt, tensor.Shape{2}, 1, 2), hcT(t, dt, tensor.Shape{2}, 0, 10),
				hcT(t, dt, tensor.Shape{2}, 1, -1), hcT(t, dt, tensor.Shape{2}, 4, 0.25),
			}
			g := graph.New()
			s, b, m, v := params(g, "")
			// x [2 2 2]: n0c0 [1 3], n0c1 [0 1], n1c0 [5 -1], n1c1 [-1 -3].
			n := g.BatchNorm(g.Input("x", dt, 2, 2, 2), s, b, m, v, 0)
			got := hcRun(t, n, append([]tensor.Tensor{hcT(t, dt, tensor.Shape{2, 2, 2}, 1, 3, 0, 1, 5, -1, -1, -3)}, pv...)...)
			hcClose(t, "rank 3", got, []float64{0, 1, 14, 18, 2, -1, 10, 2}, hcTol(dt))
			// Rank 2 [N C]: one value per channel.
			n = g.BatchNorm(g.Input("x2", dt, 2, 2), s, b, m, v, 0)
			got = hcRun(t, n, append([]tensor.Tensor{hcT(t, dt, tensor.Shape{2, 2}, 3, 1, -1, -3)}, pv...)...)
			hcClose(t, "rank 2", got, []float64{1, 18, -1, 2}, hcTol(dt))
			// Rank 4 [1 2 1 2] with eps: variance 3.75 + 0.25 = 4 in channel 0, 0 + 0.25 in channel 1.
			g2 := graph.New()
			s, b, m, v = params(g2, "")
			n = g2.BatchNorm(g2.Input("x", dt, 1, 2, 1, 2), s, b, m, v, 0.25)
			pe := append([]tensor.Tensor{hcT(t, dt, tensor.Shape{1, 2, 1, 2}, 1, 3, 0, 1)}, pv[:3]...)
			got = hcRun(t, n, append(pe, hcT(t, dt, tensor.Shape{2}, 3.75, 0))...)
			hcClose(t, "rank 4 eps", got, []float64{0, 1, 14, 18}, hcTol(dt))
		})
	}
}

// TestNormRandom checks LayerNorm against moments computed the other way
// round (E[x²] - E[x]², fine for data near zero) and RMSNorm against the
// same raw second moment, on random shapes.
func TestNormRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		rows, d := 1+r.IntN(4), 1+r.IntN(9)
		x := hcRand(r, rows*d)
		sc, bi := hcRand(r, d), hcRand(r, d)
		for _, dt := range hcDTypes {
			g := graph.New()
			n := g.LayerNorm(g.Input("x", dt, rows, d), g.Input("s", dt, d), g.Input("b", dt, d), 1, 1e-3)
			got := hcRun(t, n, hcT(t, dt, tensor.Shape{rows, d}, x...), hcT(t, dt, tensor.Shape{d}, sc...), hcT(t, dt, tensor.Shape{d}, bi...))
			xr := hcT(t, dt, tensor.Shape{rows, d}, x...).Float64s() // x as the kernel sees it
			want := make([]float64, 0, rows*d)
			rmsWant := make([]float64, 0, rows*d)
			for i := range rows {
				row := xr[i*d : (i+1)*d]
				var s1, s2 float64
				for _, v := range row {
					s1 += v
					s2 += v * v
				}
				mean, meanSq := s1/float64(d), s2/float64(d)
				eps := float64(float32(1e-3)) // the attribute is a float32
				inv := 1 / math.Sqrt(meanSq-mean*mean+eps)
				rinv := 1 / math.Sqrt(meanSq+eps)
				for j, v := range row {
					want = append(want, (v-mean)*inv*hcStored(dt, sc[j])+hcStored(dt, bi[j]))
					rmsWant = append(rmsWant, v*rinv*hcStored(dt, sc[j]))
				}
			}
			hcClose(t, "layernorm", got, want, 10*hcTol(dt))
			n = g.RMSNorm(g.Input("x2", dt, rows, d), g.Input("s2", dt, d), 1, 1e-3)
			got = hcRun(t, n, hcT(t, dt, tensor.Shape{rows, d}, x...), hcT(t, dt, tensor.Shape{d}, sc...))
			hcClose(t, "rmsnorm", got, rmsWant, 10*hcTol(dt))
		}
	}
}

// hcStored is v as stored in dt.
func hcStored(dt tensor.DType, v float64) float64 {
	if dt == tensor.F32 {
		return float64(float32(v))
	}
	return v
}

func TestNormNoAllocs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 4, 5)
	s, b := g.Input("s", tensor.F32, 4, 5), g.Input("b", tensor.F32, 4, 5)
	c := g.Input("c", tensor.F32, 4)
	xv, sv, cv := tensor.New(tensor.F32, 3, 4, 5), tensor.New(tensor.F32, 4, 5), tensor.New(tensor.F32, 4)
	hcNoAllocs(t, g.LayerNorm(x, s, b, 1, 1e-5), xv, sv, sv)
	hcNoAllocs(t, g.RMSNorm(x, s, 1, 1e-5), xv, sv)
	hcNoAllocs(t, g.BatchNorm(x, c, c, c, c, 1e-5), xv, cv, cv, cv, cv)
}
