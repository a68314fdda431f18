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
// interpreter evaluates that. It reports false when the result is too big
// to fold, leaving the node to be built normally.
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
	total, bytes := 0, 0
	for _, o := range outs {
		if o != nil {
			total += o.Shape.NumElements()
			bytes += o.Shape.NumElements() * o.DType.Size()
		}
	}
	if total > foldLimit || !imp.spend(bytes) {
		return false, nil
	}
	idx := []int{}
	for i, o := range outs {
		if o != nil {
			sg.OutputNamed(fmt.Sprint(i), o)
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return false, nil
	}
	vals, err := ops.Interpret(sg, nil)
	if err != nil {
		return false, fmt.Errorf("evaluating at import time: %w", err)
	}
	for k, i := range idx {
		// A Constant in the main graph, created lazily: materialise makes
		// it only if a run-time node reads the value.
		t := vals[k]
		imp.bindKnown(c, i, &t)
	}
	for i, name := range c.n.Outputs {
		if name != "" && (i >= len(outs) || outs[i] == nil) && imp.uses[name] > 0 {
			return true, unsupportedf("output %d (%q) is not supported", i, name)
		}
	}
	return true, nil
}

// bindKnown records output i of the node as a known value.
func (imp *importer) bindKnown(c *ctx, i int, t *tensor.Tensor) {
	if i >= len(c.n.Outputs) || c.n.Outputs[i] == "" {
		return
	}
	name := c.n.Outputs[i]
	imp.vals[name] = &value{name: name, known: t}
}
