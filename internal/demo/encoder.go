package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Config sizes the encoder.
type Config struct {
	Vocab, Hidden, Layers, Heads, FFN, Seq, Batch int
	// Exported spells the layers out in primitives the way torch's ONNX
	// exporter (opset < 17) writes them — LayerNorm from ReduceMean, Sub,
	// Pow, Sqrt and Div; GELU from Erf; attention from MatMul, Div, Add,
	// Softmax and MatMul — instead of kiln's LayerNorm, Gelu and
	// Attention ops. Same function, same params: it is the form fusion has
	// to recover, as it does for imported models.
	Exported bool
}

// MiniLM is the size of all-MiniLM-L6-v2: vocab 30522, hidden 384, 6
// layers, 12 heads, FFN 1536, at sequence length 128, batch 1.
var MiniLM = Config{Vocab: 30522, Hidden: 384, Layers: 6, Heads: 12, FFN: 1536, Seq: 128, Batch: 1}

// Tiny is a small config for fast tests.
var Tiny = Config{Vocab: 97, Hidden: 32, Layers: 2, Heads: 4, FFN: 64, Seq: 16, Batch: 2}

// Encoder builds the graph: token ids (I64 [batch, seq]) → embeddings +
// positions → LayerNorm → layers of (self-attention with an additive mask
// input [batch, 1, 1, seq], residual, LayerNorm, GELU MLP, residual,
// LayerNorm). The output is the last hidden state [batch, seq, hidden].
func Encoder(c Config) *graph.Graph {
	g := graph.New()
	ids := g.Input("input_ids", tensor.I64, c.Batch, c.Seq)
	mask := g.Input("attention_mask", tensor.F32, c.Batch, 1, 1, c.Seq)
	x := g.Gather(g.Param("embeddings.word", tensor.F32, c.Vocab, c.Hidden), ids, 0)
	x = g.Add(x, g.Param("embeddings.position", tensor.F32, c.Seq, c.Hidden))
	x = layerNorm(g, x, "embeddings.ln", c)
	for l := range c.Layers {
		x = encoderLayer(g, x, mask, fmt.Sprintf("layer%d", l), c)
	}
	g.OutputNamed("last_hidden_state", x)
	return g
}

func layerNorm(g *graph.Graph, x *graph.Node, name string, c Config) *graph.Node {
	h := c.Hidden
	scale, bias := g.Param(name+".scale", tensor.F32, h), g.Param(name+".bias", tensor.F32, h)
	if !c.Exported {
		return g.LayerNorm(x, scale, bias, -1, 1e-12)
	}
	d := g.Sub(x, g.ReduceMean(x, true, -1))
	v := g.ReduceMean(g.Pow(d, g.Scalar(2)), true, -1)
	return g.Add(g.Mul(g.Div(d, g.Sqrt(g.Add(v, g.Scalar(1e-12)))), scale), bias)
}

func gelu(g *graph.Graph, x *graph.Node, c Config) *graph.Node {
	if !c.Exported {
		return g.Gelu(x)
	}
	return g.Mul(g.Mul(x, g.Add(g.Erf(g.Div(x, g.Scalar(math.Sqrt2))), g.Scalar(1))), g.Scalar(0.5))
}

// attention is softmax(q·kᵀ/√d + mask)·v on [batch, heads, seq, d].
func attention(g *graph.Graph, q, k, v, mask *graph.Node, c Config) *graph.Node {
	if !c.Exported {
		return g.Attention(q, k, v, mask, graph.AttentionOpts{})
	}
	s := g.Div(g.MatMul(q, g.Transpose(k, 0, 1, 3, 2)), g.Scalar(float32(math.Sqrt(float64(c.Hidden/c.Heads)))))
	return g.MatMul(g.Softmax(g.Add(s, mask), -1), v)
}

func linear(g *graph.Graph, x *graph.Node, name string, in, out int) *graph.Node {
	return g.Add(g.MatMul(x, g.Param(name+".weight", tensor.F32, in, out)), g.Param(name+".bias", tensor.F32, out))
}

func encoderLayer(g *graph.Graph, x, mask *graph.Node, p string, c Config) *graph.Node {
	hd := c.Hidden / c.Heads
	heads := func(t *graph.Node) *graph.Node {
		return g.Transpose(g.Reshape(t, c.Batch, c.Seq, c.Heads, hd), 0, 2, 1, 3)
	}
	q := heads(linear(g, x, p+".q", c.Hidden, c.Hidden))
	k := heads(linear(g, x, p+".k", c.Hidden, c.Hidden))
	v := heads(linear(g, x, p+".v", c.Hidden, c.Hidden))
	a := attention(g, q, k, v, mask, c)
	a = g.Reshape(g.Transpose(a, 0, 2, 1, 3), c.Batch, c.Seq, c.Hidden)
	x = layerNorm(g, g.Add(x, linear(g, a, p+".o", c.Hidden, c.Hidden)), p+".ln1", c)
	f := linear(g, gelu(g, linear(g, x, p+".ffn1", c.Hidden, c.FFN), c), p+".ffn2", c.FFN, c.Hidden)
	return layerNorm(g, g.Add(x, f), p+".ln2", c)
}

// Weights makes seeded random weights for every param of g: normal with
// standard deviation 1/sqrt(fan-in) for matrices, near 1 for LayerNorm
// scales, small for biases and embeddings.
func Weights(g *graph.Graph, seed uint64) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 0x6b696c6e))
	w := map[string][]float32{}
	for _, p := range g.Params() {
		v := make([]float32, p.Shape.NumElements())
		std, mean := 0.02, 0.0
		switch {
		case p.Shape.Rank() == 2 && !strings.HasPrefix(p.Name, "embeddings."):
			std = 1 / math.Sqrt(float64(p.Shape[0]))
		case strings.HasSuffix(p.Name, ".scale"):
			std, mean = 0.05, 1
		}
		for i := range v {
			v[i] = float32(mean + std*r.NormFloat64())
		}
		w[p.Name] = v
	}
	return w
}

// Inputs makes token ids in [0, vocab) and a mask that hides the last
// quarter of every sequence (as padding would).
func Inputs(c Config, seed uint64) (ids []int64, mask []float32) {
	r := rand.New(rand.NewPCG(seed, 1))
	ids = make([]int64, c.Batch*c.Seq)
	for i := range ids {
		ids[i] = int64(r.IntN(c.Vocab))
	}
	mask = make([]float32, c.Batch*c.Seq)
	for b := range c.Batch {
		for s := c.Seq - c.Seq/4; s < c.Seq; s++ {
			mask[b*c.Seq+s] = -10000
		}
	}
	return ids, mask
}
