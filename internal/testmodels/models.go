package testmodels

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Eps is the epsilon of every normalisation in these models (float32 of
// 1e-5, as the generator rounds it).
const Eps float32 = 1e-5

// MLP is relu(x·w1 + b1)·w2 + b2 with input x [batch, in] and params w1
// [in, hidden], b1 [hidden], w2 [hidden, out], b2 [out]. Errors are
// recorded on the graph (g.Err()).
func MLP(batch, in, hidden, out int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, batch, in)
	h := g.Relu(linear(g, x, "w1", "b1", in, hidden))
	g.Output(linear(g, h, "w2", "b2", hidden, out))
	return g
}

// CNNBlock is maxpool2x2(relu(batchnorm(conv3x3(x, pad 1)))) on x [batch,
// inCh, height, width], with params conv_w [outCh, inCh, 3, 3], conv_b,
// bn_scale, bn_bias, bn_mean and bn_var (each [outCh]).
func CNNBlock(batch, inCh, outCh, height, width int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, batch, inCh, height, width)
	w := g.Param("conv_w", tensor.F32, outCh, inCh, 3, 3)
	b := g.Param("conv_b", tensor.F32, outCh)
	y := g.Conv2D(x, w, b, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
	ch := func(name string) *graph.Node { return g.Param(name, tensor.F32, outCh) }
	y = g.BatchNorm(y, ch("bn_scale"), ch("bn_bias"), ch("bn_mean"), ch("bn_var"), Eps)
	y = g.MaxPool2D(g.Relu(y), graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
	g.Output(y)
	return g
}

// ConcatCNN is a SqueezeNet Fire module feeding a two-layer DenseNet
// block, on x [1, inCh, size, size]: channel concats the planner can join
// (plan.Options.JoinConcat), including a concat of one input and
// prefixes of the block's last concat.
//
//	s = relu(conv1x1(x))                        fire_s_w [4, inCh, 1, 1], fire_s_b
//	f = concat(relu(conv1x1(s)), relu(conv3x3(s, pad 1)))   fire_e1_w/_b, fire_e3_w/_b, 8 channels each
//	y_i = conv3x3(relu(concat(f, y_1, …, y_{i-1})), pad 1)  dense{i}_w [4, 16+4(i-1), 3, 3], no bias
//	out = concat(f, y_1, y_2)
func ConcatCNN(inCh, size int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, inCh, size, size)
	conv := func(x *graph.Node, name string, out, k int, bias bool) *graph.Node {
		w := g.Param(name+"_w", tensor.F32, out, x.Shape[1], k, k)
		var b *graph.Node
		if bias {
			b = g.Param(name+"_b", tensor.F32, out)
		}
		p := k / 2
		return g.Conv2D(x, w, b, graph.ConvOpts{Pads: []int{p, p, p, p}})
	}
	s := g.Relu(conv(x, "fire_s", 4, 1, true))
	feats := []*graph.Node{g.Concat(1, g.Relu(conv(s, "fire_e1", 8, 1, true)), g.Relu(conv(s, "fire_e3", 8, 3, true)))}
	for i := range 2 {
		feats = append(feats, conv(g.Relu(g.Concat(1, feats...)), fmt.Sprintf("dense%d", i+1), 4, 3, false))
	}
	g.Output(g.Concat(1, feats...))
	return g
}

// EncoderLayer is one post-LN transformer encoder layer on x [batch, seq,
// hidden]:
//
//	h = LayerNorm(x + MHA(x))            params wq bq wk bk wv bv wo bo, ln1_scale ln1_bias
//	y = LayerNorm(h + FFN(h))            params w_ff1 b_ff1 w_ff2 b_ff2, ln2_scale ln2_bias
//
// MHA splits hidden into heads (hidden must be a multiple of heads) and
// uses the Attention op without mask; FFN is gelu(h·w_ff1 + b_ff1)·w_ff2 +
// b_ff2 with the exact GELU. Weights are [in, out] and multiply from the
// right.
func EncoderLayer(batch, seq, hidden, heads, ffn int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, batch, seq, hidden)
	dh := 0
	if heads > 0 {
		dh = hidden / heads
	}
	split := func(t *graph.Node) *graph.Node { // [B, S, H] -> [B, heads, S, dh]
		return g.Transpose(g.Reshape(t, batch, seq, heads, dh), 0, 2, 1, 3)
	}
	q := split(linear(g, x, "wq", "bq", hidden, hidden))
	k := split(linear(g, x, "wk", "bk", hidden, hidden))
	v := split(linear(g, x, "wv", "bv", hidden, hidden))
	a := g.Attention(q, k, v, nil, graph.AttentionOpts{})
	a = g.Reshape(g.Transpose(a, 0, 2, 1, 3), batch, seq, hidden)
	a = linear(g, a, "wo", "bo", hidden, hidden)
	h := layerNorm(g, g.Add(x, a), "ln1", hidden)
	f := g.Gelu(linear(g, h, "w_ff1", "b_ff1", hidden, ffn))
	f = linear(g, f, "w_ff2", "b_ff2", ffn, hidden)
	g.Output(layerNorm(g, g.Add(h, f), "ln2", hidden))
	return g
}

// linear is x·w + b with params w [in, out] and b [out].
func linear(g *graph.Graph, x *graph.Node, w, b string, in, out int) *graph.Node {
	return g.Add(g.MatMul(x, g.Param(w, tensor.F32, in, out)), g.Param(b, tensor.F32, out))
}

// layerNorm normalises the last axis with params <prefix>_scale and
// <prefix>_bias.
func layerNorm(g *graph.Graph, x *graph.Node, prefix string, n int) *graph.Node {
	s := g.Param(prefix+"_scale", tensor.F32, n)
	b := g.Param(prefix+"_bias", tensor.F32, n)
	return g.LayerNorm(x, s, b, -1, Eps)
}
