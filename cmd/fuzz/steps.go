package main

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// unaries and binaries are the elementwise ops the generator chains.
func (b *builder) unary(x *graph.Node) *graph.Node {
	g := b.g
	fs := []func(*graph.Node) *graph.Node{g.Neg, g.Abs, g.Exp, g.Log, g.Sqrt, g.Rsqrt, g.Reciprocal,
		g.Tanh, g.Sigmoid, g.Relu, g.Gelu, g.GeluTanh, g.Silu, g.Erf, g.Sin, g.Cos, g.Floor, g.Ceil, g.Round,
		func(n *graph.Node) *graph.Node { return g.LeakyRelu(n, 0.125) },
		func(n *graph.Node) *graph.Node { return g.Clip(n, -1.5, 2) }}
	return fs[b.r.IntN(len(fs))](x)
}

// Pow gets a non-negative base: a negative base to a power is NaN unless
// the power is an integer, and an upstream kernel within its tolerance
// (or a subnormal power rounded to 0) flips that (seeds 4105, 4392, 4655).
func (b *builder) binary(x, y *graph.Node) *graph.Node {
	g := b.g
	pow := func(a, c *graph.Node) *graph.Node { return g.Pow(g.Abs(a), c) }
	fs := []func(a, c *graph.Node) *graph.Node{g.Add, g.Sub, g.Mul, g.Div, g.Max, g.Min, pow}
	if b.r.IntN(2) == 0 {
		x, y = y, x
	}
	return fs[b.r.IntN(len(fs))](x, y)
}

// step adds one random construct to the graph.
func (b *builder) step() {
	g, r := b.g, b.r
	x := b.pick()
	s, rank := x.Shape, len(x.Shape)
	switch r.IntN(17) {
	case 0, 1, 2: // long elementwise chain: one fused region
		y := x
		for range 2 + r.IntN(10) {
			if r.IntN(2) == 0 {
				y = b.unary(y)
			} else {
				y = b.binary(y, b.partner(y.Shape))
			}
		}
		b.push(y)
	case 3:
		b.push(b.binary(x, b.partner(s)))
	case 4: // compare and select
		c := []func(a, c *graph.Node) *graph.Node{g.Greater, g.Less, g.Equal, g.GreaterOrEqual}[r.IntN(4)](x, b.partner(s))
		b.push(g.Where(c, x, b.partner(s)))
	case 5: // matmul with a weight, optional bias and activation (epilogue)
		if rank == 0 {
			return
		}
		n := b.tailLen()
		w := b.input(tensor.Shape{s[rank-1], n})
		if r.IntN(3) == 0 { // a stored-transposed weight
			w = g.Transpose(b.input(tensor.Shape{n, s[rank-1]}), 1, 0)
		}
		y := g.MatMul(x, w)
		if r.IntN(2) == 0 {
			y = g.Add(y, b.input(tensor.Shape{n}))
		}
		if r.IntN(2) == 0 {
			y = []func(*graph.Node) *graph.Node{g.Relu, g.Gelu, g.Silu, g.Tanh, g.Sigmoid, g.GeluTanh}[r.IntN(6)](y)
		}
		if r.IntN(3) == 0 && rank >= 2 {
			y = g.Add(y, b.input(y.Shape)) // residual
		}
		b.push(y)
	case 6: // batched matmul of two fresh operands, batch dims broadcast
		m, k, n := b.dim(1+r.IntN(9)), b.tailLen(), b.tailLen()
		batch := b.dim(1 + r.IntN(4))
		bb := batch
		if r.IntN(2) == 0 {
			bb = 1
		}
		if r.IntN(3) == 0 { // a 2-D Gemm, alpha and beta from the float32 extremes too
			ext := []float32{1, -2, 0.5, 1e38, -3e38, 1e-38, 0}
			var c *graph.Node
			if r.IntN(2) == 0 {
				c = b.input(tensor.Shape{n})
			}
			b.push(g.Gemm(b.input(tensor.Shape{m, k}), b.input(tensor.Shape{k, n}), c,
				ext[r.IntN(len(ext))], ext[r.IntN(len(ext))], false, false))
			return
		}
		b.push(g.MatMul(b.input(tensor.Shape{batch, m, k}), b.input(tensor.Shape{bb, k, n})))
	case 7: // reduction
		if rank == 0 {
			return
		}
		axes := b.axes(rank)
		fs := []func(*graph.Node, bool, ...int) *graph.Node{g.ReduceSum, g.ReduceMean, g.ReduceMax, g.ReduceMin}
		if x.Shape.NumElements() == 0 {
			fs = fs[:2] // max and min of nothing have no identity
		}
		f := fs[r.IntN(len(fs))]
		b.push(f(x, r.IntN(2) == 0, axes...))
	case 8: // softmax family
		if rank == 0 {
			return
		}
		ax := r.IntN(rank)
		if r.IntN(2) == 0 {
			ax = rank - 1
		}
		if r.IntN(2) == 0 {
			b.push(g.Softmax(x, ax))
		} else {
			b.push(g.LogSoftmax(x, ax))
		}
	case 9: // norms, residual norms (fused by the norm pass)
		if rank == 0 || s[rank-1] == 0 {
			return
		}
		y := x
		if r.IntN(2) == 0 {
			y = g.Add(x, b.partner(s))
			if !y.Shape.Equal(s) {
				return
			}
		}
		sc := b.input(tensor.Shape{s[rank-1]})
		if r.IntN(2) == 0 {
			b.push(g.LayerNorm(y, sc, b.input(tensor.Shape{s[rank-1]}), rank-1, 1e-5))
		} else {
			b.push(g.RMSNorm(y, sc, rank-1, 1e-6))
		}
	case 10: // attention: spelled out (fused by the attention pass) or the op
		b.attention()
	case 11: // data movement
		if rank >= 2 {
			perm := r.Perm(rank)
			b.push(g.Transpose(x, perm...))
		} else {
			b.push(g.Reshape(x, append(tensor.Shape{1}, s...)...))
		}
	case 12:
		if rank == 0 {
			return
		}
		ax := r.IntN(rank)
		if r.IntN(2) == 0 { // two computed values back to back: joined where 64-byte aligned
			b.push(g.Concat(0, g.Relu(x), g.Neg(x)))
			return
		}
		b.push(g.Concat(ax, x, b.input(s), x))
	case 13: // a strided slice of the last axis
		if rank == 0 || s[rank-1] < 2 {
			return
		}
		n := s[rank-1]
		st := r.IntN(n / 2)
		b.push(g.Slice(x, graph.SliceSpec{Axes: []int{rank - 1}, Starts: []int{st}, Ends: []int{n}, Steps: []int{1 + r.IntN(3)}}))
	case 14: // a round trip through half precision
		dt := []tensor.DType{tensor.F16, tensor.BF16}[r.IntN(2)]
		b.push(g.Cast(g.Relu(g.Cast(x, dt)), tensor.F32))
	case 15: // a fresh input of a new shape, to widen the variety
		b.push(b.input(b.shape()))
	case 16: // a convolution block (conv folding, pooling, Winograd)
		b.cnn()
	}
}

// axes is a random non-empty subset of [0, rank).
func (b *builder) axes(rank int) []int {
	var ax []int
	for i := range rank {
		if b.r.IntN(2) == 0 {
			ax = append(ax, i)
		}
	}
	if len(ax) == 0 {
		ax = append(ax, b.r.IntN(rank))
	}
	return ax
}

// attention builds softmax(QKᵀ·scale + mask)·V, as the op or spelled out.
func (b *builder) attention() {
	g, r := b.g, b.r
	bs, h, sq, sk, d := b.dim(1+r.IntN(2)), b.dim(1+r.IntN(4)), b.dim(1+r.IntN(33)), b.dim(1+r.IntN(33)), b.dim([]int{8, 16, 32, 64, 3, 17}[r.IntN(6)])
	q := b.input(tensor.Shape{bs, h, sq, d})
	k := b.input(tensor.Shape{bs, h, sk, d})
	v := b.input(tensor.Shape{bs, h, sk, d})
	var mask *graph.Node
	if r.IntN(2) == 0 {
		mask = b.input(tensor.Shape{1, 1, sq, sk})
	}
	if r.IntN(2) == 0 {
		b.push(g.Attention(q, k, v, mask, graph.AttentionOpts{Causal: mask == nil && r.IntN(2) == 0}))
		return
	}
	sc := g.Mul(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(0.25))
	if mask != nil {
		sc = g.Add(sc, mask)
	}
	b.push(g.MatMul(g.Softmax(sc, 3), v))
}
