package demo

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// DecoderConfig sizes a Llama-style decoder: RMSNorm, rotary embeddings
// (the half-split "rotate-half" form), grouped-query attention with a
// causal mask and a SwiGLU MLP, an untied LM head, and no biases unless
// QKVBias (Qwen2's query, key and value projections have them). With
// Experts set, every layer's MLP is a Mixtral-style sparse mixture of
// experts instead (graph.MoE: softmax routing over Experts, the top
// ExpertsPerTok per token, their weights renormalised to sum to 1).
type DecoderConfig struct {
	Vocab, Hidden, Layers int
	Heads, KVHeads        int // query heads; key/value heads (Heads a multiple)
	FFN                   int // the MLP's inner width
	MaxSeq                int // the KV cache's length: prompt and generated tokens together
	RopeTheta             float64
	Eps                   float32 // RMSNorm
	QKVBias               bool    // the q, k and v projections add a bias (params layerN.{q,k,v}.bias)
	// Experts is the number of SwiGLU experts of each layer's MLP (each
	// FFN wide), 0 for the dense MLP. The params are layerN.router.weight
	// [Hidden, Experts] and layerN.experts.{gate,up} [Experts, Hidden,
	// FFN] and layerN.experts.down [Experts, FFN, Hidden].
	Experts       int
	ExpertsPerTok int // the experts each token is routed to (top k), with Experts
}

// DecoderSmall is the demo's default: 8 layers of width 512 with 8 query
// and 2 key/value heads, a 32000-token vocabulary (about 58M params) and
// a 256-token cache, room for a 128-token prompt and 128 generated.
var DecoderSmall = DecoderConfig{Vocab: 32000, Hidden: 512, Layers: 8, Heads: 8, KVHeads: 2, FFN: 1536, MaxSeq: 256, RopeTheta: 10000, Eps: 1e-5}

// Decoder100M is about 124M params (12 layers of width 768, 12 query and
// 4 key/value heads, FFN 2048, vocabulary 32000): the size issue 25's
// speed figures are for.
var Decoder100M = DecoderConfig{Vocab: 32000, Hidden: 768, Layers: 12, Heads: 12, KVHeads: 4, FFN: 2048, MaxSeq: 256, RopeTheta: 10000, Eps: 1e-5}

// DecoderTiny is a small config for fast tests.
var DecoderTiny = DecoderConfig{Vocab: 61, Hidden: 32, Layers: 2, Heads: 4, KVHeads: 2, FFN: 48, MaxSeq: 24, RopeTheta: 10000, Eps: 1e-5}

// HeadDim is the width of one attention head.
func (c DecoderConfig) HeadDim() int { return c.Hidden / c.Heads }

// CacheShape is the shape of one layer's key (or value) cache:
// [1, KVHeads, MaxSeq, HeadDim].
func (c DecoderConfig) CacheShape() tensor.Shape {
	return tensor.Shape{1, c.KVHeads, c.MaxSeq, c.HeadDim()}
}

// Check reports a config the decoder cannot be built from.
func (c DecoderConfig) Check() error {
	switch {
	case c.Vocab < 1 || c.Hidden < 1 || c.Layers < 1 || c.FFN < 1 || c.MaxSeq < 1:
		return fmt.Errorf("decoder: sizes must be positive: %+v", c)
	case c.Heads < 1 || c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("decoder: %d query heads are not a multiple of %d key/value heads", c.Heads, c.KVHeads)
	case c.Hidden%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("decoder: hidden %d over %d heads must give an even head dim", c.Hidden, c.Heads)
	case c.Experts < 0 || (c.Experts == 0) != (c.ExpertsPerTok == 0) || c.ExpertsPerTok < 0 || c.ExpertsPerTok > c.Experts:
		return fmt.Errorf("decoder: %d experts per token of %d experts (want 1 ≤ k ≤ experts, or both 0 for a dense MLP)", c.ExpertsPerTok, c.Experts)
	}
	return nil
}

// Names of the decoder step's inputs. Both are float32 holding whole
// numbers (exact below 2^24, past any vocabulary or cache here), cast to
// I64 in the graph, so that a step runs through RunSlots, which takes
// float32 inputs by position and allocates nothing.
const (
	StepTokens = "tokens" // [1, S]: the token ids of this step
	StepPos    = "pos"    // [1]: the position of the first, the count already cached
)

// CacheName is the input holding layer l's key (kind "k") or value ("v")
// cache, to be bound to a handle; output 1+2l (k) and 2+2l (v) is its
// updated contents, to feed it back.
func CacheName(kind string, l int) string { return fmt.Sprintf("past.%s%d", kind, l) }

// DecoderStep builds one step of the decoder over s new tokens: the
// prefill of a prompt (s its length) and each decode step (s = 1) are
// the same graph at different s. Inputs are the tokens, pos (how many
// tokens the cache holds already) and per layer the key and value caches
// [1, KVHeads, MaxSeq, HeadDim] (CacheName). The step writes its keys and
// values into cache rows pos .. pos+s-1 and attends over the first pos+s
// rows only, the count given to Attention as its KVLen, so a step's
// attention costs what the cache holds, not what it can hold. Output 0
// is the logits [1, s, Vocab]; outputs 1+2l and 2+2l the updated caches
// of layer l, the same shape as the inputs (fed back into their handles).
// Rows past pos+s keep whatever they held: the next steps overwrite them
// before any attention reads them.
func DecoderStep(c DecoderConfig, s int) (*graph.Graph, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if s < 1 || s > c.MaxSeq {
		return nil, fmt.Errorf("decoder: a step of %d tokens with a cache of %d", s, c.MaxSeq)
	}
	g := graph.New()
	tokens := g.Input(StepTokens, tensor.F32, 1, s)
	posIn := g.Input(StepPos, tensor.F32, 1)
	cs := c.CacheShape()
	past := make([]*graph.Node, 2*c.Layers)
	for l := range c.Layers {
		past[2*l] = g.Input(CacheName("k", l), tensor.F32, cs...)
		past[2*l+1] = g.Input(CacheName("v", l), tensor.F32, cs...)
	}
	st := stepIndices(g, c, s, g.Cast(posIn, tensor.I64))
	x := g.Gather(g.Param("embeddings.word", tensor.F32, c.Vocab, c.Hidden), g.Cast(tokens, tensor.I64), 0) // [1, s, H]
	present := make([]*graph.Node, 0, 2*c.Layers)
	for l := range c.Layers {
		var kv [2]*graph.Node
		x, kv = decoderLayer(g, c, x, st, past[2*l], past[2*l+1], fmt.Sprintf("layer%d", l))
		present = append(present, kv[0], kv[1])
	}
	x = g.RMSNorm(x, g.Param("final_norm.scale", tensor.F32, c.Hidden), -1, c.Eps)
	g.OutputNamed("logits", g.MatMul(x, g.Param("lm_head.weight", tensor.F32, c.Hidden, c.Vocab)))
	for l := range c.Layers {
		g.OutputNamed(fmt.Sprintf("present.k%d", l), present[2*l])
		g.OutputNamed(fmt.Sprintf("present.v%d", l), present[2*l+1])
	}
	return g, g.Err()
}

// stepNodes are the per-step values every layer shares.
type stepNodes struct {
	s        int
	cos, sin *graph.Node // [s, HeadDim/2] at the step's positions
	keep     *graph.Node // Bool [MaxSeq, 1]: the cache rows this step writes
	src      *graph.Node // I64 [MaxSeq]: the step row each cache row takes if kept
	kvLen    *graph.Node // I64 [1]: pos + s, the cache rows attention reads
}

// stepIndices builds the positions' rotary angles and the cache-write
// indices from pos.
func stepIndices(g *graph.Graph, c DecoderConfig, s int, pos *graph.Node) stepNodes {
	cosT, sinT := RopeTables(c)
	half := c.HeadDim() / 2
	positions := g.Add(pos, arange(g, s)) // [s]
	st := stepNodes{s: s,
		cos: g.Gather(g.ConstF32(tensor.Shape{c.MaxSeq, half}, cosT), positions, 0),
		sin: g.Gather(g.ConstF32(tensor.Shape{c.MaxSeq, half}, sinT), positions, 0),
	}
	rel := g.Sub(arange(g, c.MaxSeq), pos) // cache row t holds step row t - pos
	st.keep = g.Reshape(g.And(g.GreaterOrEqual(rel, i64(g, 0)), g.Less(rel, i64(g, int64(s)))), c.MaxSeq, 1)
	st.src = g.Max(g.Min(rel, i64(g, int64(s-1))), i64(g, 0))
	st.kvLen = g.Add(pos, i64(g, int64(s)))
	return st
}

// RopeTables are the rotary cos and sin [MaxSeq, HeadDim/2] of the
// Hugging Face Llama convention: pair i of position p turns by
// p·theta^(-2i/HeadDim).
func RopeTables(c DecoderConfig) (cos, sin []float32) {
	half := c.HeadDim() / 2
	cos, sin = make([]float32, c.MaxSeq*half), make([]float32, c.MaxSeq*half)
	for p := range c.MaxSeq {
		for i := range half {
			a := float64(p) * math.Pow(c.RopeTheta, -float64(2*i)/float64(c.HeadDim()))
			cos[p*half+i], sin[p*half+i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
	}
	return cos, sin
}

func decoderLayer(g *graph.Graph, c DecoderConfig, x *graph.Node, st stepNodes, pastK, pastV *graph.Node, p string) (*graph.Node, [2]*graph.Node) {
	hd := c.HeadDim()
	heads := func(t *graph.Node, n int) *graph.Node { // [1, s, n·hd] → [1, n, s, hd]
		return g.Transpose(g.Reshape(t, 1, st.s, n, hd), 0, 2, 1, 3)
	}
	proj := func(t *graph.Node, name string, in, out int) *graph.Node {
		return g.MatMul(t, g.Param(p+"."+name+".weight", tensor.F32, in, out))
	}
	qkv := func(t *graph.Node, name string, out int) *graph.Node {
		y := proj(t, name, c.Hidden, out)
		if c.QKVBias {
			y = g.Add(y, g.Param(p+"."+name+".bias", tensor.F32, out))
		}
		return y
	}
	h := g.RMSNorm(x, g.Param(p+".attn_norm.scale", tensor.F32, c.Hidden), -1, c.Eps)
	q := g.RoPE(heads(qkv(h, "q", c.Heads*hd), c.Heads), st.cos, st.sin, false)
	k := g.RoPE(heads(qkv(h, "k", c.KVHeads*hd), c.KVHeads), st.cos, st.sin, false)
	v := heads(qkv(h, "v", c.KVHeads*hd), c.KVHeads)
	// The step's rows go into the cache at pos: every cache row takes
	// its step row where keep says so and keeps its value elsewhere.
	k = g.Where(st.keep, g.Gather(k, st.src, 2), pastK)
	v = g.Where(st.keep, g.Gather(v, st.src, 2), pastV)
	a := g.Attention(q, k, v, nil, graph.AttentionOpts{Causal: true, KVLen: st.kvLen})
	a = g.Reshape(g.Transpose(a, 0, 2, 1, 3), 1, st.s, c.Heads*hd)
	x = g.Add(x, proj(a, "o", c.Heads*hd, c.Hidden))
	h = g.RMSNorm(x, g.Param(p+".mlp_norm.scale", tensor.F32, c.Hidden), -1, c.Eps)
	if c.Experts > 0 {
		return g.Add(x, moeMLP(g, c, h, p)), [2]*graph.Node{k, v}
	}
	m := g.Mul(g.Silu(proj(h, "gate", c.Hidden, c.FFN)), proj(h, "up", c.Hidden, c.FFN))
	return g.Add(x, proj(m, "down", c.FFN, c.Hidden)), [2]*graph.Node{k, v}
}

// moeMLP is Mixtral's sparse MLP over h [1, s, Hidden]: router logits,
// softmax over all experts, the top ExpertsPerTok, their weights divided
// by their sum, and the chosen experts' SwiGLU outputs summed with those
// weights (graph.MoE, whose OpMoE node the capture and residency
// accounting of CompiledGraph observe).
func moeMLP(g *graph.Graph, c DecoderConfig, h *graph.Node, p string) *graph.Node {
	e, f := c.Experts, c.FFN
	return g.MoE(h, graph.MoESpec{
		Router:      g.Param(p+".router.weight", tensor.F32, c.Hidden, e),
		Gate:        g.Param(p+".experts.gate", tensor.F32, e, c.Hidden, f),
		Up:          g.Param(p+".experts.up", tensor.F32, e, c.Hidden, f),
		Down:        g.Param(p+".experts.down", tensor.F32, e, f, c.Hidden),
		K:           c.ExpertsPerTok,
		Scoring:     graph.MoESoftmax,
		Renormalize: true,
	})
}

// arange is the I64 constant [0, 1, ..., n-1].
func arange(g *graph.Graph, n int) *graph.Node {
	t := tensor.New(tensor.I64, n)
	for i := range t.I64() {
		t.I64()[i] = int64(i)
	}
	return g.Constant(t)
}

// i64 is an I64 scalar constant.
func i64(g *graph.Graph, v int64) *graph.Node {
	t := tensor.New(tensor.I64)
	t.I64()[0] = v
	return g.Constant(t)
}
