package graph

// Mixture of experts. A layer routes each of T tokens to k of E experts
// and sums the k experts' outputs weighted by the router's scores. The
// ids and weights are plain tensors [T, k] (from TopK over the router's
// scores), so routing is built from ordinary ops, and every per-slot
// tensor keeps the token-major layout [T, k, ...]: nothing depends on
// how many tokens an expert gets. OpMoE is the layer's expert part as one
// node, the unit the CPU's routed kernel runs (only the routed rows are
// computed) and that CompiledGraph's top-k capture and residency
// accounting observe; MoEExpertsDecomposed spells the same maths with
// GroupedMatMul and elementwise ops, its reference and the form for
// backends that do not lower OpMoE.

// GroupedMatMul multiplies token rows by the experts the tokens are routed
// to: x is [T, K] (each of a token's k slots reads its row) or [T, k, K]
// (a row per slot), w stacks E matrices [E, K, N], ids [T, k] (I32 or
// I64) are expert ids in [0, E) (anything else is a run-time error). The
// result [T, k, N] holds, at (t, j), x's row times w[ids[t, j]].
func (g *Graph) GroupedMatMul(x, w, ids *Node) *Node {
	return g.add(OpGroupedMatMul, Attrs{}, x, w, ids)
}

// MoECombine sums the k slots of y [T, k, N] weighted by weights [T, k]:
// out[t] = Σ_j weights[t, j]·y[t, j] ([T, N]). In the token-major layout
// the experts' scatter-add back to their tokens is this weighted sum
// over the slot axis, built from Mul and ReduceSum.
func (g *Graph) MoECombine(y, weights *Node) *Node {
	return g.ReduceSum(g.Mul(y, g.Unsqueeze(weights, 2)), false, 1)
}

// MoEExperts is the expert half of a SwiGLU mixture-of-experts layer as
// one node (OpMoE): for token t,
//
//	out[t] = Σ_j weights[t, j] · (silu(x[t]·gate[e]) ⊙ (x[t]·up[e]))·down[e],   e = ids[t, j]
//
// with x [T, H], ids [T, k] (I32 or I64, in [0, E)), weights [T, k], gate
// and up [E, H, F], down [E, F, H]. On the CPU only the routed rows are
// computed (each expert's tokens gathered and multiplied together).
func (g *Graph) MoEExperts(x, ids, weights, gate, up, down *Node) *Node {
	return g.add(OpMoE, Attrs{}, x, ids, weights, gate, up, down)
}

// MoEExpertsDecomposed computes what MoEExperts does from GroupedMatMul,
// Silu, Mul and MoECombine: the reference for OpMoE, and the form for a
// backend that has no OpMoE.
func (g *Graph) MoEExpertsDecomposed(x, ids, weights, gate, up, down *Node) *Node {
	h := g.Mul(g.Silu(g.GroupedMatMul(x, gate, ids)), g.GroupedMatMul(x, up, ids))
	return g.MoECombine(g.GroupedMatMul(h, down, ids), weights)
}

// MoEScoring is how a router turns its logits into expert scores.
type MoEScoring uint8

// Router scorings.
const (
	MoESoftmax MoEScoring = iota // softmax over the E experts (Mixtral, Qwen-MoE)
	MoESigmoid                   // a sigmoid per expert (DeepSeek-V3)
)

// MoESpec describes a SwiGLU mixture-of-experts layer for Graph.MoE. Node
// fields are params (or any nodes) of the layer's dtype.
type MoESpec struct {
	Router     *Node // [H, E]: logits = x·Router
	RouterBias *Node // [E] added to the logits; nil for none
	Gate, Up   *Node // [E, H, F]
	Down       *Node // [E, F, H]
	K          int   // experts per token, 1 ≤ K ≤ E
	Scoring    MoEScoring
	// Renormalize divides the K selected scores by their sum (Mixtral;
	// Qwen-MoE's norm_topk_prob), so a token's weights sum to 1.
	Renormalize bool
	// SharedGate, SharedUp and SharedDown, when set, are a dense SwiGLU
	// expert every token runs ([H, Fs], [H, Fs], [Fs, H]), added to the
	// routed experts' sum (Qwen-MoE, DeepSeek).
	SharedGate, SharedUp, SharedDown *Node
}

// MoE is a SwiGLU mixture-of-experts layer over x [..., H]: router
// logits, scores (softmax or sigmoid), the top K experts per token
// (TopK: ties go to the lower expert id), optionally renormalised
// weights, the routed experts (MoEExperts), and an optional shared
// expert. The result has x's shape.
func (g *Graph) MoE(x *Node, s MoESpec) *Node {
	if g.err != nil || !x.Valid() {
		return &Node{Op: OpInvalid}
	}
	if s.Router == nil || s.Gate == nil || s.Up == nil || s.Down == nil {
		return g.fail("MoE: Router, Gate, Up and Down are required")
	}
	if (s.SharedGate == nil) != (s.SharedUp == nil) || (s.SharedGate == nil) != (s.SharedDown == nil) {
		return g.fail("MoE: SharedGate, SharedUp and SharedDown go together")
	}
	if s.Scoring != MoESoftmax && s.Scoring != MoESigmoid {
		return g.fail("MoE: unknown scoring %d", s.Scoring)
	}
	r := x.Shape.Rank()
	if r < 2 {
		return g.fail("MoE: x %v must be [..., H] with at least 2 dims", x.Shape)
	}
	hidden, tokens := x.Shape[r-1], x.Shape.NumElements()/max(x.Shape[r-1], 1)
	x2 := x
	if r != 2 {
		x2 = g.Reshape(x, tokens, hidden)
	}
	logits := g.MatMul(x2, s.Router)
	if s.RouterBias != nil {
		logits = g.Add(logits, s.RouterBias)
	}
	var scores *Node
	if s.Scoring == MoESigmoid {
		scores = g.Sigmoid(logits)
	} else {
		scores = g.Softmax(logits, 1)
	}
	w, ids := g.TopK(scores, s.K, 1, false)
	if s.Renormalize {
		w = g.Div(w, g.ReduceSum(w, true, 1))
	}
	y := g.MoEExperts(x2, ids, w, s.Gate, s.Up, s.Down)
	if s.SharedGate != nil {
		y = g.Add(y, g.SwiGLU(x2, s.SharedGate, s.SharedUp, s.SharedDown))
	}
	if r != 2 {
		y = g.Reshape(y, x.Shape...)
	}
	return y
}

// SwiGLU is the dense gated MLP (silu(x·gate) ⊙ (x·up))·down.
func (g *Graph) SwiGLU(x, gate, up, down *Node) *Node {
	return g.MatMul(g.Mul(g.Silu(g.MatMul(x, gate)), g.MatMul(x, up)), down)
}
