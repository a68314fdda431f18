package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// The attention cases use one-dimensional heads and keys 0 and ln 3, so
// with scale 1 a query of 1 weighs the keys 1:3, and values 4 and 8 give
// (4 + 3·8)/4 = 7.
var ln3 = math.Log(3)

// hcAttention builds and runs one Attention node; mask may be nil, or a
// Bool tensor, or a float one (converted to dt).
func hcAttention(t *testing.T, dt tensor.DType, o graph.AttentionOpts, qs, ks, vs tensor.Shape, q, k, v []float64, mask *tensor.Tensor) []float64 {
	t.Helper()
	g := graph.New()
	ins := []tensor.Tensor{hcT(t, dt, qs, q...), hcT(t, dt, ks, k...), hcT(t, dt, vs, v...)}
	var mn *graph.Node
	if mask != nil {
		m := *mask
		if m.DType != tensor.Bool {
			m = hcT(t, dt, m.Shape, m.Float64s()...)
		}
		mn = g.Input("mask", m.DType, m.Shape...)
		ins = append(ins, m)
	}
	n := g.Attention(g.Input("q", dt, qs...), g.Input("k", dt, ks...), g.Input("v", dt, vs...), mn, o)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return hcRun(t, n, ins...)
}

func hcMaskF(t *testing.T, s tensor.Shape, v ...float64) *tensor.Tensor {
	m := hcT(t, tensor.F64, s, v...)
	return &m
}

func hcMaskB(t *testing.T, s tensor.Shape, v ...bool) *tensor.Tensor {
	m, err := tensor.FromBool(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestAttentionCases(t *testing.T) {
	one := graph.AttentionOpts{Scale: 1}
	causal := graph.AttentionOpts{Scale: 1, Causal: true}
	sh := func(b, h, s, d int) tensor.Shape { return tensor.Shape{b, h, s, d} }
	inf, nan := math.Inf(-1), math.NaN()
	for _, dt := range hcDTypes {
		tol := hcTol(dt)
		run := func(name string, o graph.AttentionOpts, qs, ks, vs tensor.Shape, q, k, v []float64, mask *tensor.Tensor, want []float64) {
			t.Run(dt.String()+"/"+name, func(t *testing.T) {
				hcClose(t, name, hcAttention(t, dt, o, qs, ks, vs, q, k, v, mask), want, tol)
			})
		}
		run("weights 1:3", one, sh(1, 1, 1, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1}, []float64{0, ln3}, []float64{4, 8}, nil, []float64{7})
		// Default scale 1/sqrt(4) = 1/2: keys of ln3/2 in all four dims score ln 3. Two value dims.
		h := ln3 / 2
		run("default scale", graph.AttentionOpts{}, sh(1, 1, 1, 4), sh(1, 1, 2, 4), sh(1, 1, 2, 2),
			[]float64{1, 1, 1, 1}, []float64{0, 0, 0, 0, h, h, h, h}, []float64{4, 0, 8, 4}, nil, []float64{7, 3})
		// Scale 2 with q = 1/2 is the same as scale 1 with q = 1.
		run("explicit scale", graph.AttentionOpts{Scale: 2}, sh(1, 1, 1, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{0.5}, []float64{0, ln3}, []float64{4, 8}, nil, []float64{7})
		// Causal, Sq = Sk: row 0 sees key 0 only.
		run("causal square", causal, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8}, nil, []float64{4, 7})
		// KV cache: one new query sees every key.
		run("causal Sq=1", causal, sh(1, 1, 1, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1}, []float64{0, ln3}, []float64{4, 8}, nil, []float64{7})
		// Sq 2 < Sk 3: row 0 sees keys 0-1, row 1 all three (weights 1:3:3).
		run("causal Sq<Sk", causal, sh(1, 1, 2, 1), sh(1, 1, 3, 1), sh(1, 1, 3, 1), []float64{1, 1}, []float64{0, ln3, ln3}, []float64{4, 8, 1}, nil,
			[]float64{7, (4 + 24 + 3) / 7.0})
		// Sq 3 > Sk 2: row 0 sees no key at all: softmax's 0/0, NaN.
		run("causal Sq>Sk", causal, sh(1, 1, 3, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1, 1}, []float64{0, ln3}, []float64{4, 8}, nil, []float64{nan, 4, 7})
		// Additive mask [Sk] broadcast over two query rows: +ln3 on key 0 evens the weights.
		run("additive mask", one, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8},
			hcMaskF(t, tensor.Shape{2}, ln3, 0), []float64{6, 6})
		// Additive mask per row [Sq Sk]: row 1 has every key at -Inf and gives NaN.
		run("additive -inf row", one, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8},
			hcMaskF(t, tensor.Shape{2, 2}, 0, inf, inf, inf), []float64{4, nan})
		// Bool mask [Sq Sk]: row 0 keeps key 1 only, row 1 both.
		run("bool mask", one, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8},
			hcMaskB(t, tensor.Shape{2, 2}, false, true, true, true), []float64{8, 7})
		// Bool mask removing every key of row 1, on top of causal for row 0.
		run("bool fully masked", causal, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8},
			hcMaskB(t, tensor.Shape{2, 2}, true, true, false, false), []float64{4, nan})
		// Causal and a bool mask intersect: row 1 keeps only key 0.
		run("bool and causal", causal, sh(1, 1, 2, 1), sh(1, 1, 2, 1), sh(1, 1, 2, 1), []float64{1, 1}, []float64{0, ln3}, []float64{4, 8},
			hcMaskB(t, tensor.Shape{2}, true, false), []float64{4, 4})
		// Mask [1 H 1 Sk] differs per head: head 0 keeps key 0, head 1 key 1.
		run("mask per head", one, sh(1, 2, 1, 1), sh(1, 2, 2, 1), sh(1, 2, 2, 1), []float64{1, 1}, []float64{0, ln3, 0, ln3}, []float64{4, 8, 40, 80},
			hcMaskB(t, tensor.Shape{1, 2, 1, 2}, true, false, false, true), []float64{4, 80})
		// GQA: H 4, Hk 2. Heads 0-1 use kv head 0 (weights 1:3 → 7), heads 2-3 kv head 1
		// (keys ln3, 0: weights 3:1 over values 40, 80 → 50).
		run("gqa", one, sh(1, 4, 1, 1), sh(1, 2, 2, 1), sh(1, 2, 2, 1), []float64{1, 1, 1, 1}, []float64{0, ln3, ln3, 0}, []float64{4, 8, 40, 80},
			nil, []float64{7, 7, 50, 50})
		// Batch of two with a [B 1 1 Sk] additive mask: batch 1 masks key 1 away.
		run("batch mask", one, sh(2, 1, 1, 1), sh(2, 1, 2, 1), sh(2, 1, 2, 1), []float64{1, 1}, []float64{0, ln3, 0, ln3}, []float64{4, 8, 1, 2},
			hcMaskF(t, tensor.Shape{2, 1, 1, 2}, 0, 0, 0, inf), []float64{7, 1})
	}
}

// hcAttentionLoop is attention written the other way round from the
// kernel: kv heads repeated out to H heads first, the mask turned into a
// 0/1 factor on unnormalised exp weights (no max subtraction, fine for
// small scores), and rows whose weights sum to zero left at zero.
func hcAttentionLoop(b, h, hk, sq, sk, d, dv int, scale float64, causal bool, q, k, v, add []float64, keep []bool) []float64 {
	group := h / hk
	out := make([]float64, b*h*sq*dv)
	for bi := range b {
		for hi := range h {
			kv := bi*hk + hi/group
			for i := range sq {
				w := make([]float64, sk)
				var sum float64
				for j := range sk {
					at := ((bi*h+hi)*sq+i)*sk + j // mask index, mask expanded to [B H Sq Sk]
					if (causal && j-i > sk-sq) || (keep != nil && !keep[at]) {
						continue
					}
					var dot float64
					for c := range d {
						dot += q[((bi*h+hi)*sq+i)*d+c] * k[(kv*sk+j)*d+c]
					}
					s := dot * scale
					if add != nil {
						s += add[at]
					}
					w[j] = math.Exp(s)
					sum += w[j]
				}
				if sum == 0 { // no visible key: softmax's 0/0 (no keys at all: 0)
					for c := range dv {
						if sk > 0 {
							out[((bi*h+hi)*sq+i)*dv+c] = math.NaN()
						}
					}
					continue
				}
				for c := range dv {
					for j := range sk {
						out[((bi*h+hi)*sq+i)*dv+c] += w[j] / sum * v[(kv*sk+j)*dv+c]
					}
				}
			}
		}
	}
	return out
}

// TestAttentionRandom compares random attention problems (GQA, causal
// with any Sq, Sk, masks of both kinds broadcast from full shape, rows
// left with no key) against hcAttentionLoop.
func TestAttentionRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 60 {
		b, hk := 1+r.IntN(2), 1+r.IntN(2)
		h := hk * (1 + r.IntN(3))
		sq, sk, d, dv := 1+r.IntN(4), r.IntN(5), 1+r.IntN(4), 1+r.IntN(3)
		causal := iter%2 == 0
		scale := 0.0
		if iter%3 == 0 {
			scale = 0.7
		}
		q, k, v := hcRand(r, b*h*sq*d), hcRand(r, b*hk*sk*d), hcRand(r, b*hk*sk*dv)
		full := b * h * sq * sk
		var add []float64
		var keep []bool
		var mask *tensor.Tensor
		switch iter % 3 {
		case 1:
			add = hcRand(r, full)
			for i := range add {
				if r.IntN(4) == 0 {
					add[i] = math.Inf(-1)
				}
			}
			mask = hcMaskF(t, tensor.Shape{b, h, sq, sk}, add...)
		case 2:
			keep = make([]bool, full)
			for i := range keep {
				keep[i] = r.IntN(3) != 0
			}
			mask = hcMaskB(t, tensor.Shape{b, h, sq, sk}, keep...)
		}
		for _, dt := range hcDTypes {
			qs, ks, vs := tensor.Shape{b, h, sq, d}, tensor.Shape{b, hk, sk, d}, tensor.Shape{b, hk, sk, dv}
			got := hcAttention(t, dt, graph.AttentionOpts{Causal: causal, Scale: float32(scale)}, qs, ks, vs, q, k, v, mask)
			s := float64(float32(scale))
			if scale == 0 {
				s = 1 / math.Sqrt(float64(d))
			}
			qr, kr, vr := hcT(t, dt, qs, q...).Float64s(), hcT(t, dt, ks, k...).Float64s(), hcT(t, dt, vs, v...).Float64s()
			ar := add
			if add != nil {
				ar = hcT(t, dt, tensor.Shape{full}, add...).Float64s()
			}
			want := hcAttentionLoop(b, h, hk, sq, sk, d, dv, s, causal, qr, kr, vr, ar, keep)
			hcClose(t, "attention", got, want, 10*hcTol(dt))
		}
	}
}

// TestAttentionComposed checks Attention against MatMul, Add, Softmax and
// MatMul nodes run through Interpret, with the scale folded into q, kᵀ
// fed pre-transposed and causality as an additive -Inf mask. Every row
// keeps at least one key so that Softmax is defined.
func TestAttentionComposed(t *testing.T) {
	for _, op := range []graph.Op{graph.OpAdd, graph.OpSoftmax} {
		if _, err := Lookup(op); err != nil {
			t.Skipf("needs %v: %v", op, err)
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		b, h, sq, d, dv := 1+r.IntN(2), 1+r.IntN(3), 1+r.IntN(4), 1+r.IntN(5), 1+r.IntN(4)
		sk := sq + r.IntN(3)
		q, k, v := hcRand(r, b*h*sq*d), hcRand(r, b*h*sk*d), hcRand(r, b*h*sk*dv)
		mask := hcRand(r, b*h*sq*sk)
		for bh := range b * h {
			for i := range sq {
				for j := i + sk - sq + 1; j < sk; j++ {
					mask[(bh*sq+i)*sk+j] = math.Inf(-1)
				}
			}
		}
		kT := make([]float64, len(k))
		qScaled := make([]float64, len(q))
		for i := range q {
			qScaled[i] = q[i] / math.Sqrt(float64(d))
		}
		for bh := range b * h {
			for j := range sk {
				for c := range d {
					kT[(bh*d+c)*sk+j] = k[(bh*sk+j)*d+c]
				}
			}
		}
		dt := tensor.F64
		g := graph.New()
		qn, ktn, vn := g.Input("q", dt, b, h, sq, d), g.Input("kT", dt, b, h, d, sk), g.Input("v", dt, b, h, sk, dv)
		mn := g.Input("m", dt, b, h, sq, sk)
		g.Output(g.MatMul(g.Softmax(g.Add(g.MatMul(qn, ktn), mn), -1), vn))
		res, err := Interpret(g, map[string]tensor.Tensor{
			"q": hcT(t, dt, qn.Shape, qScaled...), "kT": hcT(t, dt, ktn.Shape, kT...),
			"v": hcT(t, dt, vn.Shape, v...), "m": hcT(t, dt, mn.Shape, mask...),
		})
		if err != nil {
			t.Fatal(err)
		}
		// The kernel gets the random part of the mask and does causality itself.
		for i := range mask {
			if math.IsInf(mask[i], -1) {
				mask[i] = 0
			}
		}
		for _, kdt := range hcDTypes {
			got := hcAttention(t, kdt, graph.AttentionOpts{Causal: true}, qn.Shape, tensor.Shape{b, h, sk, d}, vn.Shape,
				q, k, v, hcMaskF(t, mn.Shape, mask...))
			hcClose(t, "attention vs composition", got, res[0].Float64s(), 100*hcTol(kdt))
		}
	}
}

func TestAttentionWidenedBoolMask(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		// Keys 0 and ln3 round in the half format, so expect the weights they give.
		k1 := hcT(t, dt, tensor.Shape{1}, ln3).Float64s()[0]
		w := 1 / (1 + math.Exp(k1))
		got := hcAttention(t, dt, graph.AttentionOpts{Scale: 1}, tensor.Shape{1, 1, 2, 1}, tensor.Shape{1, 1, 2, 1}, tensor.Shape{1, 1, 2, 1},
			[]float64{1, 1}, []float64{0, ln3}, []float64{4, 8}, hcMaskB(t, tensor.Shape{2, 2}, true, false, true, true))
		hcClose(t, dt.String(), got, []float64{4, 4*w + 8*(1-w)}, 1e-2)
	}
}

func TestRoPECases(t *testing.T) {
	// Position 0 is the identity; position 1 turns pair 0 by 90° (cos 0, sin 1)
	// and pair 1 by the angle with cos 0.6, sin 0.8.
	cos, sin := []float64{1, 1, 0, 0.6}, []float64{0, 0, 1, 0.8}
	x := []float64{1, 2, 3, 4, 1, 2, 3, 4}
	for _, dt := range hcDTypes {
		for _, c := range []struct {
			name        string
			interleaved bool
			want        []float64
		}{
			// Half split: pairs (1, 3) and (2, 4).
			{"half", false, []float64{1, 2, 3, 4, -3, 1.2 - 3.2, 1, 2.4 + 1.6}},
			// Interleaved: pairs (1, 2) and (3, 4).
			{"interleaved", true, []float64{1, 2, 3, 4, -2, 1, 1.8 - 3.2, 2.4 + 2.4}},
		} {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				g := graph.New()
				cs := tensor.Shape{2, 2}
				n := g.RoPE(g.Input("x", dt, 1, 2, 4), g.Input("c", dt, cs...), g.Input("s", dt, cs...), c.interleaved)
				got := hcRun(t, n, hcT(t, dt, tensor.Shape{1, 2, 4}, x...), hcT(t, dt, cs, cos...), hcT(t, dt, cs, sin...))
				hcClose(t, c.name, got, c.want, hcTol(dt))
				// Leading dims [2 3]: every [S D] block is rotated alike; scaling x scales y.
				n = g.RoPE(g.Input("x2", dt, 2, 3, 2, 4), g.Input("c2", dt, cs...), g.Input("s2", dt, cs...), c.interleaved)
				var xs, want []float64
				for i := range 6 {
					f := float64(i + 1)
					for j := range x {
						xs, want = append(xs, f*x[j]), append(want, f*c.want[j])
					}
				}
				got = hcRun(t, n, hcT(t, dt, n.Shape, xs...), hcT(t, dt, cs, cos...), hcT(t, dt, cs, sin...))
				hcClose(t, c.name+" batched", got, want, hcTol(dt))
			})
		}
	}
}

// TestRoPERandom checks, on random angles, that interleaved RoPE is
// half-split RoPE conjugated by the permutation that interleaves the two
// halves, and that every pair keeps its length.
func TestRoPERandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		lead, s, half := 1+r.IntN(3), 1+r.IntN(4), 1+r.IntN(4)
		d := 2 * half
		xv := hcRand(r, lead*s*d)
		cos, sin := make([]float64, s*half), make([]float64, s*half)
		for i := range cos {
			a := 10 * r.Float64()
			cos[i], sin[i] = math.Cos(a), math.Sin(a)
		}
		// perm[i] is where half-split element i sits in the interleaved layout.
		perm := make([]int, d)
		for i := range half {
			perm[i], perm[i+half] = 2*i, 2*i+1
		}
		xi := make([]float64, len(xv))
		for row := range lead * s {
			for i := range d {
				xi[row*d+perm[i]] = xv[row*d+i]
			}
		}
		dt := tensor.F64
		g := graph.New()
		xs, cs := tensor.Shape{lead, s, d}, tensor.Shape{s, half}
		cn, sn := g.Input("c", dt, cs...), g.Input("s", dt, cs...)
		yh := hcRun(t, g.RoPE(g.Input("x", dt, xs...), cn, sn, false), hcT(t, dt, xs, xv...), hcT(t, dt, cs, cos...), hcT(t, dt, cs, sin...))
		yi := hcRun(t, g.RoPE(g.Input("xi", dt, xs...), cn, sn, true), hcT(t, dt, xs, xi...), hcT(t, dt, cs, cos...), hcT(t, dt, cs, sin...))
		want := make([]float64, len(yh))
		for row := range lead * s {
			for i := range d {
				want[row*d+perm[i]] = yh[row*d+i]
			}
			for i := range half {
				a, b := xv[row*d+i], xv[row*d+i+half]
				y0, y1 := yh[row*d+i], yh[row*d+i+half]
				if approx.Far(math.Hypot(y0, y1), math.Hypot(a, b), 1e-12) {
					t.Fatalf("pair length %v became %v", math.Hypot(a, b), math.Hypot(y0, y1))
				}
			}
		}
		hcClose(t, "interleaved vs permuted half", yi, want, 0)
	}
}

func TestAttentionNoAllocs(t *testing.T) {
	g := graph.New()
	q, k, v := g.Input("q", tensor.F32, 2, 4, 3, 5), g.Input("k", tensor.F32, 2, 2, 6, 5), g.Input("v", tensor.F32, 2, 2, 6, 3)
	m, mb := g.Input("m", tensor.F32, 3, 6), g.Input("mb", tensor.Bool, 2, 1, 1, 6)
	qv, kv, vv := tensor.New(tensor.F32, 2, 4, 3, 5), tensor.New(tensor.F32, 2, 2, 6, 5), tensor.New(tensor.F32, 2, 2, 6, 3)
	hcNoAllocs(t, g.Attention(q, k, v, m, graph.AttentionOpts{Causal: true}), qv, kv, vv, tensor.New(tensor.F32, 3, 6))
	hcNoAllocs(t, g.Attention(q, k, v, mb, graph.AttentionOpts{}), qv, kv, vv, tensor.New(tensor.Bool, 2, 1, 1, 6))
	x, c := g.Input("x", tensor.F64, 2, 3, 8), g.Input("c", tensor.F64, 3, 4)
	hcNoAllocs(t, g.RoPE(x, c, c, true), tensor.New(tensor.F64, 2, 3, 8), tensor.New(tensor.F64, 3, 4), tensor.New(tensor.F64, 3, 4))
}
