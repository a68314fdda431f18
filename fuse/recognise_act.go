package fuse

import (
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
)

// recogniseActivations finds activations that exporters spell out in
// primitives — GELU as x·0.5·(1 + erf(x/√2)) or its tanh form, SiLU as
// x·sigmoid(x), sigmoid as 1/(1 + exp(−x)) — and replaces each by the
// one op, which the epilogue pass can then apply on a GEMM's write-back.
//
// It matches by value rather than by spelling, since every exporter and
// every algebraic rearrangement spells them differently: a cone of
// elementwise nodes whose leaves are one tensor x and scalar constants is
// a function of x alone; evaluated in float64 on probe points it must
// equal the activation within 1e-6 everywhere. Two different
// compositions of a handful of these primitives do not agree on 60
// points spread over [−8, 8] by accident, while the f32 rounding of the
// exporters' constants (√2, 0.044715, √(2/π)) stays below 1e-7.
//
// The rewrite must not change a result, so at -Inf, +Inf and NaN the
// cone must compute exactly what the op computes, in IEEE arithmetic:
// x·sigmoid(x) is NaN at -Inf (-Inf·0) and so is Silu (see graph.Silu),
// but x - x·sigmoid(-x), equal to it at every finite point, is NaN at
// +Inf where Silu is +Inf, and stays spelled out. What the probes in
// float64 do not see is a float32 intermediate overflowing near the top
// of the range: torch's GELU export x·(1 + erf(x/√2))·0.5 is +Inf for
// x above 1.7e38, where Gelu is x. Requiring that too would refuse
// torch's export of nn.GELU (every opset before 20); the recognised op
// gives the exact value there.
func recogniseActivations(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, r *graph.Node) (bool, error) {
		if !r.Op.IsElementwise() || !r.DType.IsFloat() || knownActivation(r.Op) || unaryChain(r) {
			return false, nil
		}
		for _, x := range coneCandidates(r) {
			cone, ok := closedCone(v, r, x)
			if !ok || len(cone) < 2 {
				continue
			}
			op, ok := identify(cone, x)
			if !ok {
				continue
			}
			f, err := g.Insert(op, graph.Attrs{}, x)
			if err != nil {
				log.miss("%s: %v", names(cone...), err)
				return false, nil
			}
			if err := replace(g, r, f); err != nil {
				return false, err
			}
			log.fused("%s → %s (%s)", names(cone...), f.Name, op)
			return true, nil
		}
		return false, nil
	})
}

// unaryChain reports whether the maxCone nodes below r are all one-input
// elementwise ops: every activation identify knows has a binary op near
// its root (x·Φ(x), 1/(1+e^−x)), so such a chain is not searched. (A
// 100k-op unary chain spent most of its compile time searching.)
func unaryChain(r *graph.Node) bool {
	n := r
	for range maxCone {
		if !n.Op.IsElementwise() || len(n.Inputs) != 1 {
			return !n.Op.IsElementwise()
		}
		n = n.Inputs[0]
	}
	return len(n.Inputs) <= 1
}

// maxCone bounds the nodes of a spelled-out activation (the tanh GELU is
// the longest common one, at 8 to 10).
const maxCone = 14

func knownActivation(op graph.Op) bool {
	r, ok := ops.ElementwiseOp(op)
	return ok && r.Role&ops.RoleRecognised != 0
}

// coneCandidates lists the nodes below r, within maxCone steps, that
// could be the single input of a function rooted at r: any non-constant
// node of r's dtype and shape.
func coneCandidates(r *graph.Node) []*graph.Node {
	var out []*graph.Node
	seen := map[*graph.Node]bool{r: true}
	frontier := []*graph.Node{r}
	for depth := 0; depth < maxCone && len(frontier) > 0; depth++ {
		var next []*graph.Node
		for _, n := range frontier {
			if !n.Op.IsElementwise() {
				continue
			}
			for _, in := range n.Inputs {
				if seen[in] {
					continue
				}
				seen[in] = true
				if _, c := uniform(in); c {
					continue
				}
				if in.DType == r.DType && in.Shape.Equal(r.Shape) {
					out = append(out, in)
				}
				next = append(next, in)
			}
		}
		frontier = next
	}
	return out
}

// closedCone returns the elementwise nodes on the paths from r down to x
// (r first), when every path ends at x or at a scalar constant, and every
// node but r is read only inside the cone (so the cone can go).
func closedCone(v *view, r, x *graph.Node) ([]*graph.Node, bool) {
	var cone []*graph.Node
	in := map[*graph.Node]bool{}
	var walk func(n *graph.Node) bool
	walk = func(n *graph.Node) bool {
		if n == x || in[n] {
			return true
		}
		if _, c := uniform(n); c {
			return keepsShape(r, n)
		}
		if !n.Op.IsElementwise() || !n.DType.IsFloat() || len(cone) == maxCone {
			return false
		}
		in[n] = true
		cone = append(cone, n)
		for _, i := range n.Inputs {
			if !walk(i) {
				return false
			}
		}
		return true
	}
	if !walk(r) {
		return nil, false
	}
	for _, n := range cone[1:] {
		if ok, _ := v.absorbable(n, func(u *graph.Node) bool { return in[u] }, nil); !ok {
			return nil, false
		}
	}
	return cone, true
}

// activation is an op identify can name, with its formula.
type activation struct {
	op graph.Op
	f  func(x float64) float64
}

// activations are the functions identify looks for: the ops of ops'
// elementwise table with RoleRecognised and their reference formulas, as
// kiln defines the ops (in IEEE arithmetic, at ±Inf and NaN too).
var activations = func() []activation {
	var acts []activation
	for _, r := range ops.ElementwiseOps() {
		if r.Role&ops.RoleRecognised != 0 {
			acts = append(acts, activation{r.Op, r.Unary})
		}
	}
	return acts
}()

// probes are the points the cone is evaluated at: 57 spread over
// [−7, 7] plus a few near 0 and far out.
var probes = func() []float64 {
	p := []float64{-8, -1e-3, 1e-3, 0.0371, 8}
	for i := -28; i <= 28; i++ {
		p = append(p, float64(i)/4+0.01)
	}
	return p
}()

// limitProbes are the points where the cone must give the activation's
// value exactly (NaN for NaN): ±Inf and NaN.
var limitProbes = []float64{math.Inf(-1), math.Inf(1), math.NaN()}

// identify evaluates the cone as a function of x and names the activation
// it equals, if any.
func identify(cone []*graph.Node, x *graph.Node) (graph.Op, bool) {
	ys := make([]float64, len(probes)+len(limitProbes))
	for i, p := range append(probes[:len(probes):len(probes)], limitProbes...) {
		y, ok := evalCone(cone[0], x, p, map[*graph.Node]float64{})
		if !ok {
			return 0, false
		}
		ys[i] = y
	}
next:
	for _, a := range activations {
		for i, p := range probes {
			want := a.f(p)
			if d := math.Abs(ys[i] - want); !(d <= 1e-6*(1+math.Abs(want))) {
				continue next
			}
		}
		for i, p := range limitProbes {
			y, want := ys[len(probes)+i], a.f(p)
			if y != want && !(math.IsNaN(y) && math.IsNaN(want)) {
				continue next
			}
		}
		return a.op, true
	}
	return 0, false
}

// evalCone computes node n at x = p in float64 (constants are scalars by
// closedCone's check).
func evalCone(n, x *graph.Node, p float64, memo map[*graph.Node]float64) (float64, bool) {
	if n == x {
		return p, true
	}
	if c, ok := uniform(n); ok {
		return c, true
	}
	if y, ok := memo[n]; ok {
		return y, true
	}
	args := make([]float64, len(n.Inputs))
	for i, in := range n.Inputs {
		a, ok := evalCone(in, x, p, memo)
		if !ok {
			return 0, false
		}
		args[i] = a
	}
	y, ok := scalarOp(n.Op, args)
	memo[n] = y
	return y, ok
}

// scalarOp is the float64 value of an elementwise op the activations are
// spelled with (RoleSpelling in ops' elementwise table), by the op's
// reference formula; ok is false for any other op.
func scalarOp(op graph.Op, a []float64) (float64, bool) {
	r, ok := ops.ElementwiseOp(op)
	if !ok || r.Role&ops.RoleSpelling == 0 {
		return 0, false
	}
	switch {
	case len(a) == 1 && r.Unary != nil:
		return r.Unary(a[0]), true
	case len(a) == 2 && r.Binary != nil:
		return r.Binary(a[0], a[1]), true
	}
	return 0, false
}
