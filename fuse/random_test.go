package fuse_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// gen builds random graphs rich in the patterns the passes look for:
// elementwise chains with broadcast operands, linear layers with bias,
// activation and residual (some with a transposed weight, some as Gemm),
// residual norms, attention spelled out with every scale and mask form,
// Conv+BatchNorm+activation, constant subexpressions, duplicates and
// identity ops — and intermediates that are also outputs or read twice, so
// near misses happen too.
type gen struct {
	r     *rand.Rand
	g     *graph.Graph
	pool  []*graph.Node // F32 values of shape [b, s, h]
	b, s  int
	names int
}

func (z *gen) name(p string) string { z.names++; return fmt.Sprintf("%s%d", p, z.names) }

func (z *gen) pick() *graph.Node {
	if z.r.IntN(3) > 0 {
		return z.pool[max(0, len(z.pool)-1-z.r.IntN(3))]
	}
	return z.pool[z.r.IntN(len(z.pool))]
}

func (z *gen) push(n *graph.Node) { z.pool = append(z.pool, n) }

// partner is a value that broadcasts against x without changing its shape.
func (z *gen) partner(x *graph.Node) *graph.Node {
	s := x.Shape
	switch z.r.IntN(5) {
	case 0:
		return z.g.Param(z.name("p"), tensor.F32, s[len(s)-1])
	case 1:
		return z.g.Input(z.name("i"), tensor.F32, 1, s[1], 1)
	case 2:
		return z.g.Scalar(float32(z.r.IntN(5)) - 1.5)
	case 3:
		// a constant subexpression: folded at compile time
		return z.g.Mul(z.g.Scalar(0.5), z.g.ConstF32(tensor.Shape{s[len(s)-1]}, z.vals(s[len(s)-1])))
	}
	for _, p := range z.pool {
		if p != x && p.Shape.Equal(s) {
			return p
		}
	}
	return z.g.Input(z.name("i"), tensor.F32, s...)
}

func (z *gen) vals(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(z.r.IntN(9)-4) / 4
	}
	return v
}

func (z *gen) step() {
	g, r := z.g, z.r
	x := z.pick()
	h := x.Shape[2]
	switch r.IntN(12) {
	case 0, 1: // elementwise chain
		unary := []func(*graph.Node) *graph.Node{g.Relu, g.Tanh, g.Sigmoid, g.Gelu, g.GeluTanh, g.Silu, g.Neg,
			func(n *graph.Node) *graph.Node { return g.LeakyRelu(n, 0.1) },
			func(n *graph.Node) *graph.Node { return g.Clip(n, -0.5, 0.75) },
			func(n *graph.Node) *graph.Node { return g.Sqrt(g.Abs(n)) }}
		binary := []func(a, b *graph.Node) *graph.Node{g.Add, g.Sub, g.Mul, g.Max, g.Min}
		y := x
		for range 1 + r.IntN(4) {
			if r.IntN(2) == 0 {
				y = unary[r.IntN(len(unary))](y)
			} else if p := z.partner(y); r.IntN(2) == 0 {
				y = binary[r.IntN(len(binary))](y, p)
			} else {
				y = binary[r.IntN(len(binary))](p, y)
			}
		}
		z.push(y)
	case 2: // compare and select
		c := g.Greater(x, z.partner(x))
		z.push(g.Where(c, x, g.Mul(x, g.Scalar(0.25))))
	case 3, 4: // linear layer
		out := h
		if r.IntN(3) == 0 {
			out = 1 + r.IntN(9)
		}
		var y *graph.Node
		switch r.IntN(5) {
		case 4: // statically quantized (QDQ), as ONNX Runtime's quantize_static writes it
			y = z.qdqLinear(x, h, out)
		case 3: // dynamically quantized, as ONNX Runtime's quantize_dynamic writes it
			q, s, zp := g.DynamicQuantizeLinear(x)
			wz := g.Param(z.name("wz"), tensor.I8)
			if r.IntN(2) == 0 {
				wz = g.Param(z.name("wz"), tensor.I8, out)
			}
			mi := g.MatMulInteger(q, g.Param(z.name("w"), tensor.I8, h, out), zp, wz)
			y = g.Mul(g.Cast(mi, tensor.F32), g.Mul(s, g.Param(z.name("ws"), tensor.F32, out)))
		case 0:
			y = g.MatMul(x, g.Param(z.name("w"), tensor.F32, h, out))
		case 1: // a transposed weight, as exported Linear layers store it
			y = g.MatMul(x, g.Transpose(g.Param(z.name("w"), tensor.F32, out, h), 1, 0))
		default: // 2-D through Gemm
			x2 := g.Reshape(x, z.b*z.s, h)
			var c *graph.Node
			if r.IntN(2) == 0 {
				c = g.Param(z.name("c"), tensor.F32, out)
			}
			y = g.Reshape(g.Gemm(x2, g.Param(z.name("w"), tensor.F32, out, h), c, 1, 1, false, true), z.b, z.s, out)
		}
		if r.IntN(3) > 0 {
			y = g.Add(y, g.Param(z.name("b"), tensor.F32, out))
		}
		if r.IntN(2) == 0 {
			spelledGelu := func(n *graph.Node) *graph.Node {
				return g.Mul(g.Mul(n, g.Add(g.Erf(g.Div(n, g.Scalar(1.4142135))), g.Scalar(1))), g.Scalar(0.5))
			}
			acts := []func(*graph.Node) *graph.Node{g.Relu, g.Gelu, g.GeluTanh, g.Silu, g.Sigmoid, g.Tanh, spelledGelu}
			y = acts[r.IntN(len(acts))](y)
		}
		if out == h && r.IntN(2) == 0 {
			y = g.Add(x, y)
		}
		z.push(y)
	case 5: // norm, maybe of a residual sum
		y := x
		if r.IntN(3) > 0 {
			y = g.Add(x, z.partner(x))
			if r.IntN(4) == 0 {
				z.push(y) // the sum is read again: a near miss
			}
		}
		switch r.IntN(4) {
		case 0:
			y = g.LayerNorm(y, g.Param(z.name("s"), tensor.F32, h), g.Param(z.name("o"), tensor.F32, h), -1, 1e-5)
		case 1:
			y = g.RMSNorm(y, g.Param(z.name("s"), tensor.F32, h), -1, 1e-5)
		case 2: // spelled out, as exporters before opset 17 write it
			d := g.Sub(y, g.ReduceMean(y, true, -1))
			y = g.Div(d, g.Sqrt(g.Add(g.ReduceMean(g.Pow(d, g.Scalar(2)), true, -1), g.Scalar(1e-5))))
			y = g.Add(g.Mul(y, g.Param(z.name("s"), tensor.F32, h)), g.Param(z.name("o"), tensor.F32, h))
		default:
			ms := g.ReduceMean(g.Mul(y, y), true, -1)
			y = g.Mul(g.Mul(y, g.Reciprocal(g.Sqrt(g.Add(ms, g.Scalar(1e-6))))), g.Param(z.name("s"), tensor.F32, h))
		}
		z.push(y)
	case 6: // attention, spelled out
		z.push(z.attention(x))
	case 7: // duplicates and identities
		a := g.Tanh(x)
		b := g.Tanh(x)
		y := g.Mul(g.Reshape(a, x.Shape...), g.Scalar(1))
		z.push(g.Add(y, g.Squeeze(g.Unsqueeze(b, 0), 0)))
	case 8: // a view chain
		y := g.Reshape(g.Flatten(x, 1), z.b, z.s*h)
		z.push(g.Reshape(g.Unsqueeze(y, 2), z.b, z.s, h))
	case 9:
		z.conv()
	case 10: // softmax (not attention) and a cast round trip
		z.push(g.Cast(g.Cast(g.Softmax(x, -1), tensor.F64), tensor.F32))
	default:
		z.push(g.Mul(x, z.partner(x)))
	}
}

// attention builds the decomposed form from x [b, s, h] split into heads.
func (z *gen) attention(x *graph.Node) *graph.Node {
	g, r := z.g, z.r
	h := x.Shape[2]
	heads := 1
	if h%2 == 0 && r.IntN(2) == 0 {
		heads = 2
	}
	d := h / heads
	split := func(t *graph.Node) *graph.Node {
		return g.Transpose(g.Reshape(t, z.b, z.s, heads, d), 0, 2, 1, 3)
	}
	lin := func() *graph.Node { return g.MatMul(x, g.Param(z.name("w"), tensor.F32, h, h)) }
	q, k, v := split(lin()), split(lin()), split(lin())
	scale := float32(1 / math.Sqrt(float64(d)))
	if r.IntN(3) == 0 {
		q = g.Mul(q, g.Scalar(scale))
		scale = 1
	}
	s := g.MatMul(q, g.Transpose(k, 0, 1, 3, 2))
	switch r.IntN(3) {
	case 0:
		s = g.Mul(s, g.Scalar(scale))
	case 1:
		s = g.Div(s, g.Scalar(1/scale))
	}
	switch r.IntN(4) {
	case 0: // padding mask input
		s = g.Add(s, g.Input(z.name("m"), tensor.F32, z.b, 1, 1, z.s))
	case 1: // causal constant
		c := make([]float32, z.s*z.s)
		for i := range z.s {
			for j := i + 1; j < z.s; j++ {
				c[i*z.s+j] = float32(math.Inf(-1))
			}
		}
		s = g.Add(g.ConstF32(tensor.Shape{z.s, z.s}, c), s)
	case 2: // a bool mask that always keeps key 0
		first := make([]bool, z.s*z.s)
		for i := range z.s {
			first[i*z.s] = true
		}
		ft, _ := tensor.FromBool(tensor.Shape{z.s, z.s}, first)
		keep := g.Or(g.Greater(g.Input(z.name("k"), tensor.F32, z.s, z.s), g.Scalar(-0.3)), g.Constant(ft))
		s = g.Where(keep, s, g.Scalar(float32(math.Inf(-1))))
	}
	if r.IntN(5) == 0 {
		g.Output(s) // the scores are an output: a near miss
	}
	a := g.MatMul(g.Softmax(s, -1), v)
	return g.Reshape(g.Transpose(a, 0, 2, 1, 3), z.b, z.s, h)
}

// conv adds Conv2D + BatchNorm (+ activation) (+ 2×2 max pool) on an
// image input, as an output of its own.
func (z *gen) conv() {
	g, r := z.g, z.r
	c, m := 1+r.IntN(3), 1+r.IntN(4)
	img := g.Input(z.name("img"), tensor.F32, z.b, c, 3+r.IntN(4), 3+r.IntN(4))
	var bias *graph.Node
	if r.IntN(2) == 0 {
		bias = g.Param(z.name("cb"), tensor.F32, m)
	}
	y := g.Conv2D(img, g.Param(z.name("cw"), tensor.F32, m, c, 3, 3), bias, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
	ch := func() *graph.Node { return g.Param(z.name("bn"), tensor.F32, m) }
	y = g.BatchNorm(y, ch(), ch(), ch(), ch(), 1e-5)
	if r.IntN(2) == 0 {
		y = g.Relu(y)
	}
	if r.IntN(2) == 0 { // the ResNet stem's downsampling
		y = g.MaxPool2D(y, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
	}
	g.Output(y)
}

// qdqLinear is a MatMul between QDQ pairs on a graph input of shape like
// (not a computed value, whose last bit may differ between the fused and
// the reference graph and flip a quantization step): x quantized to U8 by
// 2⁻⁵, int8 weights with per-column power-of-two scales, so that every
// dequantized product and their sums are exact in float32 and the fused
// node, summing integers, agrees with the float graph exactly.
func (z *gen) qdqLinear(like *graph.Node, h, out int) *graph.Node {
	g := z.g
	zero := tensor.New(tensor.U8)
	zero.Data[0] = 128
	s, zp := g.Scalar(1.0/32), g.Constant(zero)
	x := g.DequantizeLinear(g.QuantizeLinear(g.Input(z.name("q"), tensor.F32, like.Shape...), s, zp, 0), s, zp, 0)
	scales := make([]float32, out)
	for j := range scales {
		scales[j] = float32(math.Ldexp(1, -6-z.r.IntN(4)))
	}
	w := g.DequantizeLinear(g.Param(z.name("w"), tensor.I8, h, out), g.ConstF32(tensor.Shape{out}, scales), g.Param(z.name("wz"), tensor.I8, out), 1)
	return g.MatMul(x, w)
}

func randomGraph(seed uint64) *graph.Graph {
	r := rand.New(rand.NewPCG(seed, 0x6675))
	z := &gen{r: r, g: graph.New(), b: 1 + r.IntN(2), s: 1 + r.IntN(6)}
	h := 2 * (1 + r.IntN(4))
	z.push(z.g.Input("x", tensor.F32, z.b, z.s, h))
	for range 4 + r.IntN(14) {
		z.step()
	}
	z.g.Output(z.pool[len(z.pool)-1])
	if r.IntN(2) == 0 && len(z.pool) > 2 {
		z.g.Output(z.pool[r.IntN(len(z.pool)-1)])
	}
	return z.g
}

// TestRandomGraphsDifferential compiles seeded random graphs with every
// pass and compares, against the reference interpreter on the unfused
// graph, both the fused graph on the reference kernels (the rewrites
// alone: nearly exact) and on the fast kernels (within their tolerance).
// It also checks that the passes found their patterns across the seeds.
func TestRandomGraphsDifferential(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	fusions := map[string]int{}
	for seed := range uint64(seeds) {
		g := randomGraph(seed)
		if err := g.Err(); err != nil {
			t.Fatalf("seed %d: generator: %v", seed, err)
		}
		feeds := feedsFor(t, g, seed)
		want := interpret(t, g, feeds)
		got, cg := compiledRun(t, session(true, true), g, feeds)
		if err := agree(got, want, 2e-6); err != nil {
			t.Fatalf("seed %d, fused on reference kernels: %v\n%s\n%s", seed, err, cg.Report(), graph.Dump(g))
		}
		fast, cgf := compiledRun(t, session(true, false), g, feeds)
		if err := agree(fast, want, 1e-4); err != nil {
			t.Fatalf("seed %d, fused on fast kernels: %v\n%s", seed, err, cgf.Report())
		}
		for _, l := range strings.Split(cg.Report(), "\n") {
			pass, what, ok := strings.Cut(strings.TrimSpace(l), ": ")
			if ok && passNames[pass] && !strings.HasPrefix(what, "near miss") {
				fusions[pass]++
				if strings.Contains(what, "pool2x2") {
					fusions["epilogue pool2x2"]++
				}
			}
		}
	}
	t.Logf("fusions over %d graphs: %v", seeds, fusions)
	for _, p := range append(slices.Collect(maps.Keys(passNames)), "epilogue pool2x2") {
		if fusions[p] == 0 {
			t.Errorf("pass %s never fired over %d random graphs", p, seeds)
		}
	}
}

var passNames = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range fuse.Passes {
		m[p.Name] = true
	}
	return m
}()
