package onnx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
)

// sortNodes checks that every value is defined once and every input
// defined somewhere, counts uses, and returns a topological order of the
// nodes (the file's order need not be one). A cycle is an error. A node
// with subgraphs (If, Loop, Scan) also reads the outer values its
// subgraphs name, so it is ordered after their producers.
func (imp *importer) sortNodes(nodes []*NodeProto) ([]int, error) {
	producer := map[string]int{}
	for i, n := range nodes {
		for _, o := range n.Outputs {
			if o == "" {
				continue
			}
			if _, dup := producer[o]; dup || imp.vals[o] != nil {
				return nil, fmt.Errorf("onnx: value %q is defined twice (node %q)", o, nodeName(n, i))
			}
			producer[o] = i
		}
	}
	indeg := make([]int, len(nodes))
	users := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, in := range nodeReads(n) {
			imp.uses[in]++
			if p, ok := producer[in]; ok {
				indeg[i]++
				users[p] = append(users[p], i)
			} else if imp.vals[in] == nil {
				return nil, fmt.Errorf("onnx: node %q (%s) reads %q, which no node, input or initializer defines", nodeName(n, i), n.OpType, in)
			}
		}
	}
	var order, ready []int
	for i := range nodes {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(order) < len(nodes) {
		var stuck []string
		for i, d := range indeg {
			if d > 0 && len(stuck) < 5 {
				stuck = append(stuck, fmt.Sprintf("%q (%s)", nodeName(nodes[i], i), nodes[i].OpType))
			}
		}
		return nil, fmt.Errorf("onnx: the graph has a cycle through nodes %s", strings.Join(stuck, ", "))
	}
	return order, nil
}

// node imports node n (named name in messages): folded to constants when
// all its inputs are known, built into the graph otherwise. Control flow
// (If, Loop, Scan) inlines its subgraphs instead. A node kiln cannot
// import is recorded and the import goes on, so one pass lists them all.
func (imp *importer) node(n *NodeProto, name string) error {
	c := &ctx{imp: imp, n: n, name: name, opset: imp.opset, attrs: map[string]*Attribute{}}
	def, reason, ok := lookupOp(n, imp.opset)
	if !ok {
		imp.unsup = append(imp.unsup, UnsupportedOp{Node: name, OpType: n.OpType, Domain: n.Domain,
			Opset: domainOpset(imp.mp, n.Domain, imp.opset), Reason: reason})
		imp.kill(n)
		return nil
	}
	for _, a := range n.Attrs {
		if a.RefName != "" {
			return imp.feature(c, unsupportedf("attribute %q refers to a function attribute", a.Name))
		}
		c.attrs[a.Name] = a
	}
	foldable, lazy, hasInput := true, false, false
	for _, name := range n.Inputs {
		if name == "" {
			c.ins = append(c.ins, nil)
			continue
		}
		v := imp.vals[name]
		if v.dead {
			imp.kill(n)
			return nil
		}
		c.ins = append(c.ins, v)
		hasInput = true
		foldable = foldable && (v.foldable() || v.lazy != nil)
		lazy = lazy || v.known == nil && v.lazy != nil
	}
	if def.flow != nil {
		before := len(imp.unsup)
		err := def.flow(c)
		var fe *featureError
		if errors.As(err, &fe) && len(imp.unsup) == before {
			// Refused before its subgraphs were imported: list the ops
			// in them kiln lacks too, so one pass shows all the work.
			for _, a := range n.Attrs {
				for _, sub := range a.subgraphs() {
					imp.unsup = append(imp.unsup, unsupportedOps(imp.mp, sub, name+"/"+a.Name+"/", imp.opset)...)
				}
			}
		}
		return imp.feature(c, err)
	}
	if foldable && hasInput && !lazy {
		done, err := imp.fold(c, def)
		if err != nil || done {
			return imp.feature(c, err)
		}
	}
	c.g = imp.g
	before := len(imp.g.Nodes)
	outs, err := def.fn(c)
	if err == nil {
		err = imp.g.Err()
	}
	if err != nil {
		return imp.feature(c, err)
	}
	if err := imp.bind(c, outs, before); err != nil || !foldable || !hasInput {
		return err
	}
	// Computable at import but too big to fold (or over a value that
	// is): built to run, and folded only if a consumer needs it known.
	imp.deferFold(c, def)
	return nil
}

// feature records a featureError as an unsupported node and lets the
// import go on; other errors stop it, naming the node.
func (imp *importer) feature(c *ctx, err error) error {
	if err == nil {
		return nil
	}
	var fe *featureError
	if errors.As(err, &fe) {
		imp.unsup = append(imp.unsup, UnsupportedOp{Node: c.name, OpType: c.n.OpType, Domain: c.n.Domain, Opset: c.opset, Reason: fe.reason})
		imp.kill(c.n)
		return nil
	}
	return fmt.Errorf("onnx: node %q (%s, opset %d): %w", c.name, c.n.OpType, c.opset, err)
}

// kill marks a node's outputs as not importable, so their users are
// skipped instead of reporting follow-on errors.
func (imp *importer) kill(n *NodeProto) {
	for _, o := range n.Outputs {
		if o != "" {
			imp.vals[o] = &value{name: o, dead: true}
		}
	}
}

// bind records a node's results under its output names. An output the
// mapping does not produce is an error only if something reads it.
func (imp *importer) bind(c *ctx, outs []*graph.Node, before int) error {
	for i, name := range c.n.Outputs {
		if name == "" {
			continue
		}
		if i >= len(outs) || outs[i] == nil {
			if imp.uses[name] > 0 {
				return imp.feature(c, unsupportedf("output %d (%q) is not supported", i, name))
			}
			continue
		}
		o := outs[i]
		v := &value{name: name, node: o}
		if o.Op == graph.OpConstant {
			v.known = o.Value
		}
		imp.vals[name] = v
		imp.nameNode(o, name, before)
	}
	return nil
}

// nameNode gives a node made for this ONNX node the ONNX value's name,
// when that name is free, so dumps and reports read like the model.
func (imp *importer) nameNode(n *graph.Node, name string, before int) {
	if n.ID < before || n.Op.IsSource() && n.Op != graph.OpConstant || imp.named[n] {
		return
	}
	if _, taken := imp.g.Lookup(name); taken {
		return
	}
	imp.g.SetName(n, name)
	imp.named[n] = true
}

// materialise returns v's node in the main graph, creating a Constant or
// Param for a known value on first use.
func (imp *importer) materialise(v *value) *graph.Node {
	if v.node != nil {
		return v.node
	}
	if v.param {
		if other, taken := imp.g.Lookup(v.name); taken { // an auto-named node: move it aside
			fresh := other.Name + "_"
			for _, t := imp.g.Lookup(fresh); t; _, t = imp.g.Lookup(fresh) {
				fresh += "_"
			}
			imp.g.SetName(other, fresh)
		}
		v.node = imp.g.Param(v.name, v.known.DType, v.known.Shape...)
		return v.node
	}
	v.node = imp.g.Constant(*v.known)
	if _, taken := imp.g.Lookup(v.name); v.name != "" && !taken && v.node.Valid() {
		imp.g.SetName(v.node, v.name)
	}
	return v.node
}
