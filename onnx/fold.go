package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// foldLimit bounds the elements one folded node may produce. Shape
// arithmetic is far smaller; anything larger (a big constant expression)
// is built into the graph and computed at run time instead of allocated
// here.
const foldLimit = 1 << 20

// fold computes a node whose inputs are all known constants: the mapping
// builds it in a scratch graph over Constant nodes, and the reference
// interpreter evaluates that. So any op kiln maps folds, through the
// reference kernels of ops, whether or not it has a fast kernel. It
// reports false when the result is too big to fold, leaving the node to
// be built normally.
func (imp *importer) fold(c *ctx, def opDef) (bool, error) {
	sg := graph.New()
	c.g, c.local = sg, map[int]*graph.Node{}
	defer func() { c.g, c.local = nil, nil }()
	outs, err := def.fn(c)
	if err == nil {
		err = sg.Err()
	}
	if err != nil {
		return false, err
	}
	var idx []int
	var produced []*graph.Node
	for i, o := range outs {
		if o != nil {
			idx = append(idx, i)
			produced = append(produced, o)
		}
	}
	vals, ok, err := imp.evaluate(sg, produced)
	if err != nil || !ok {
		return false, err
	}
	for k, i := range idx {
		// A Constant in the main graph, created lazily: materialise makes
		// it only if a run-time node reads the value.
		imp.bindKnown(c, i, &vals[k])
	}
	for i, name := range c.n.Outputs {
		if name != "" && (i >= len(outs) || outs[i] == nil) && imp.uses[name] > 0 {
			return true, unsupportedf("output %d (%q) is not supported", i, name)
		}
	}
	return true, nil
}

// evaluate runs the reference interpreter on a scratch graph of constants
// for the given nodes' values. It reports false (and computes nothing)
// when there are none, or when they exceed foldLimit or the import
// budget: the caller then builds them into the model's graph instead.
func (imp *importer) evaluate(sg *graph.Graph, outs []*graph.Node) ([]tensor.Tensor, bool, error) {
	total, bytes := 0, 0
	for _, o := range outs {
		total += o.Shape.NumElements()
		bytes += o.Shape.NumElements() * o.DType.Size()
	}
	if len(outs) == 0 || total > foldLimit || !imp.spend(bytes) {
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
		vals, ok, err := imp.evaluate(sg, []*graph.Node{out})
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
