package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// foldLimit bounds the elements a folded node may produce: 1M, 4 MiB of
// float32. The rule: a node whose inputs are all known is computed at
// import (by its mapping over Constants, evaluated by the reference
// kernels) when its outputs fit foldLimit and the import budget
// (foldBudget); a larger one is built into the graph and computed at run
// time, unless a consumer needs its value at import (a shape, axes, a
// trip count), which folds it then, within the budget (deferFold).
const foldLimit = 1 << 20

// fold computes a node whose inputs are all known constants, binding its
// outputs as known values. So any op kiln maps folds, through the
// reference kernels of ops, whether or not it has a fast kernel. It
// reports false when the result is too big to fold, leaving the node to
// be built normally.
func (imp *importer) fold(c *ctx, def opDef) (bool, error) {
	vals, ok, err := imp.foldNode(c, def, false)
	if err != nil || !ok {
		return false, err
	}
	for i, t := range vals {
		if t != nil {
			// A Constant in the main graph, created lazily: materialise
			// makes it only if a run-time node reads the value.
			imp.bindKnown(c, i, t)
		}
	}
	for i, name := range c.n.Outputs {
		if name != "" && (i >= len(vals) || vals[i] == nil) && imp.uses[name] > 0 {
			return true, unsupportedf("output %d (%q) is not supported", i, name)
		}
	}
	return true, nil
}

// foldNode evaluates a node over its known inputs: the mapping builds it
// in a scratch graph over Constant nodes, and the reference interpreter
// runs that. It returns a value per output (nil where the mapping makes
// none), or false past foldLimit (unless force) or the budget.
func (imp *importer) foldNode(c *ctx, def opDef, force bool) ([]*tensor.Tensor, bool, error) {
	sg := graph.New()
	c.g, c.local = sg, map[int]*graph.Node{}
	defer func() { c.g, c.local = nil, nil }()
	outs, err := def.fn(c)
	if err == nil {
		err = sg.Err()
	}
	if err != nil {
		return nil, false, err
	}
	var idx []int
	var produced []*graph.Node
	for i, o := range outs {
		if o != nil {
			idx = append(idx, i)
			produced = append(produced, o)
		}
	}
	vals, ok, err := imp.evaluate(sg, produced, force)
	if err != nil || !ok {
		return nil, false, err
	}
	res := make([]*tensor.Tensor, len(outs))
	for k, i := range idx {
		res[i] = &vals[k]
	}
	return res, true, nil
}

// deferFold arranges for a node built into the graph although its inputs
// are computable at import (too big to fold, or reading such a value) to
// be folded when a consumer asks for one of its outputs' values: its
// lazy inputs first, then the node, past foldLimit but within the
// budget. If that fails the value stays run-time, and the consumer
// reports that it needs it known.
func (imp *importer) deferFold(c *ctx, def opDef) {
	done := false
	force := func() {
		if done {
			return
		}
		done = true
		for _, v := range c.ins {
			if v != nil && v.known == nil && v.lazy != nil {
				v.lazy()
			}
			if v != nil && v.known == nil {
				return
			}
		}
		vals, ok, err := imp.foldNode(c, def, true)
		if err != nil || !ok {
			return
		}
		for i, name := range c.n.Outputs {
			if v := imp.vals[name]; name != "" && i < len(vals) && vals[i] != nil && v.known == nil && !v.dead {
				v.known = vals[i]
			}
		}
	}
	for _, name := range c.n.Outputs {
		if v := imp.vals[name]; name != "" && v != nil && !v.dead && v.known == nil {
			v.lazy = force
		}
	}
}

// evaluate runs the reference interpreter on a scratch graph of constants
// for the given nodes' values. It reports false (and computes nothing)
// when there are none, or when they exceed foldLimit (unless force) or
// the import budget: the caller then builds them into the model's graph
// instead.
func (imp *importer) evaluate(sg *graph.Graph, outs []*graph.Node, force bool) ([]tensor.Tensor, bool, error) {
	total, bytes := 0, 0
	for _, o := range outs {
		total += o.Shape.NumElements()
		bytes += o.Shape.NumElements() * o.DType.Size()
	}
	if len(outs) == 0 || total > foldLimit && !force || !imp.spend(bytes) {
		return nil, false, nil
	}
	for i, o := range outs {
		sg.OutputNamed(fmt.Sprint(i), o)
	}
	vals, err := ops.Interpret(sg, nil)
	if err != nil {
		return nil, false, fmt.Errorf("evaluating at import time: %w", err)
	}
	return vals, true, nil
}

// derive computes one value (named name) from others with build: folded
// at import when they are all known, as fold does a node's outputs, and
// built into the model's graph otherwise. Control flow uses it for the
// glue it adds (slicing scan inputs, stacking scan outputs).
func (imp *importer) derive(name string, ins []*value, build func(g *graph.Graph, xs []*graph.Node) *graph.Node) (*value, error) {
	foldable := true
	for _, v := range ins {
		foldable = foldable && v.foldable()
	}
	if foldable {
		sg := graph.New()
		xs := make([]*graph.Node, len(ins))
		for i, v := range ins {
			xs[i] = sg.Constant(*v.known)
		}
		out := build(sg, xs)
		if err := sg.Err(); err != nil {
			return nil, err
		}
		vals, ok, err := imp.evaluate(sg, []*graph.Node{out}, false)
		if err != nil {
			return nil, err
		}
		if ok {
			return &value{name: name, known: &vals[0]}, nil
		}
	}
	xs := make([]*graph.Node, len(ins))
	for i, v := range ins {
		xs[i] = imp.materialise(v)
	}
	out := build(imp.g, xs)
	if err := imp.g.Err(); err != nil {
		return nil, err
	}
	v := &value{name: name, node: out}
	if out.Op == graph.OpConstant {
		v.known = out.Value
	}
	return v, nil
}

// bindKnown records output i of the node as a known value.
func (imp *importer) bindKnown(c *ctx, i int, t *tensor.Tensor) {
	if i >= len(c.n.Outputs) || c.n.Outputs[i] == "" {
		return
	}
	name := c.n.Outputs[i]
	imp.vals[name] = &value{name: name, known: t}
}
