package graph

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// Node is one operation and the single value it produces.
type Node struct {
	ID     int    // position in Graph.Nodes
	Op     Op     // what it computes
	Name   string // unique in its graph; inputs and params are found by it
	Inputs []*Node
	Attrs  Attrs
	DType  tensor.DType   // of the produced value
	Shape  tensor.Shape   // of the produced value
	Value  *tensor.Tensor // OpConstant only

	graph *Graph
}

func (n *Node) String() string {
	if n == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s(%s %s)", n.Op, n.Name, tensor.Tensor{DType: n.DType, Shape: n.Shape})
}

// Valid reports whether the node is a real node (not the placeholder the
// builder returns after an error).
func (n *Node) Valid() bool { return n != nil && n.Op != OpInvalid }

// Graph is a DAG of nodes under construction or compiled. Nodes are kept in
// creation order, which is a topological order for graphs built through
// the builder.
type Graph struct {
	Nodes []*Node

	inputs  []*Node
	params  []*Node
	outputs []*Node
	outName []string
	names   map[string]*Node
	err     error
}

// New starts an empty graph.
func New() *Graph { return &Graph{names: map[string]*Node{}} }

// Err is the first error recorded while building, or nil.
func (g *Graph) Err() error { return g.err }

// Inputs are the OpInput nodes in declaration order (their positions are
// the slots of RunSlots).
func (g *Graph) Inputs() []*Node { return g.inputs }

// Params are the OpParam nodes in declaration order.
func (g *Graph) Params() []*Node { return g.params }

// Outputs are the nodes marked as outputs, in order.
func (g *Graph) Outputs() []*Node { return g.outputs }

// OutputNames are the names the outputs were given, in order.
func (g *Graph) OutputNames() []string { return g.outName }

// Lookup finds a node by name.
func (g *Graph) Lookup(name string) (*Node, bool) {
	n, ok := g.names[name]
	return n, ok
}

// fail records the first error and returns a placeholder node.
func (g *Graph) fail(format string, args ...any) *Node {
	if g.err == nil {
		g.err = fmt.Errorf("graph: "+format, args...)
	}
	return &Node{Op: OpInvalid}
}

// Input declares a run-time input.
func (g *Graph) Input(name string, dt tensor.DType, dims ...int) *Node {
	return g.source(OpInput, name, dt, dims)
}

// Param declares a weight, set once after compilation.
func (g *Graph) Param(name string, dt tensor.DType, dims ...int) *Node {
	return g.source(OpParam, name, dt, dims)
}

func (g *Graph) source(op Op, name string, dt tensor.DType, dims []int) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	if name == "" {
		return g.fail("%s: empty name", op)
	}
	if !dt.Valid() {
		return g.fail("%s %q: invalid dtype %v", op, name, dt)
	}
	s := tensor.Shape(dims).Clone()
	if err := s.Validate(); err != nil {
		return g.fail("%s %q: %v", op, name, err)
	}
	n := g.append(&Node{Op: op, Name: name, DType: dt, Shape: s})
	if op == OpInput {
		g.inputs = append(g.inputs, n)
	} else {
		g.params = append(g.params, n)
	}
	return n
}

// Constant adds a node holding a copy of t.
func (g *Graph) Constant(t tensor.Tensor) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	if _, err := tensor.View(t.DType, t.Shape, t.Data); err != nil {
		return g.fail("Constant: %v", err)
	}
	v := t.Clone()
	return g.append(&Node{Op: OpConstant, DType: v.DType, Shape: v.Shape, Value: &v})
}

// Scalar adds an F32 scalar constant.
func (g *Graph) Scalar(v float32) *Node {
	t, _ := tensor.FromF32(nil, []float32{v})
	return g.Constant(t)
}

// ConstF32 adds an F32 constant of the given shape.
func (g *Graph) ConstF32(s tensor.Shape, values []float32) *Node {
	t, err := tensor.FromF32(s, values)
	if err != nil {
		if g.err != nil {
			return &Node{Op: OpInvalid}
		}
		return g.fail("Constant: %v", err)
	}
	return g.Constant(t)
}

// Output marks nodes as graph outputs, named output0, output1, ... in the
// order of all Output calls.
func (g *Graph) Output(nodes ...*Node) {
	for _, n := range nodes {
		g.OutputNamed(fmt.Sprintf("output%d", len(g.outputs)), n)
	}
}

// OutputNamed marks one node as an output under the given name.
func (g *Graph) OutputNamed(name string, n *Node) {
	if g.err != nil {
		return
	}
	if name == "" {
		g.fail("Output: empty name for %s", n)
		return
	}
	if !n.Valid() {
		g.fail("Output %q: invalid node", name)
		return
	}
	if n.graph != g {
		g.fail("Output %q: node %s belongs to another graph", name, n)
		return
	}
	for _, o := range g.outName {
		if o == name {
			g.fail("Output: duplicate output name %q", name)
			return
		}
	}
	g.outputs = append(g.outputs, n)
	g.outName = append(g.outName, name)
}

// SetName renames a node; names must be unique and non-empty.
func (g *Graph) SetName(n *Node, name string) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	if !n.Valid() {
		return g.fail("SetName %q: invalid node", name)
	}
	if n.graph != g { // renaming it would corrupt this graph's name table
		return g.fail("SetName %q: node %s belongs to another graph", name, n)
	}
	if name == "" {
		return g.fail("SetName: empty name for %s", n)
	}
	if other, ok := g.names[name]; ok && other != n {
		return g.fail("SetName: duplicate name %q (already %s)", name, other)
	}
	delete(g.names, n.Name)
	n.Name = name
	g.names[name] = n
	return n
}

// add creates an op node after checking its inputs and inferring its
// dtype and shape. Attribute slices are copied.
func (g *Graph) add(op Op, a Attrs, ins ...*Node) *Node {
	if g.err != nil {
		return &Node{Op: OpInvalid}
	}
	for i, in := range ins {
		if in == nil {
			return g.fail("%s: input %d is nil", op, i)
		}
		if !in.Valid() {
			return g.fail("%s: input %d is invalid", op, i)
		}
		if in.graph != g {
			return g.fail("%s: input %d (%s) belongs to another graph", op, i, in)
		}
	}
	a = a.clone()
	dt, s, err := infer(op, &a, ins)
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return g.fail("%s (inputs %s): %v", op, describe(ins), err)
	}
	return g.append(&Node{Op: op, Inputs: append([]*Node(nil), ins...), Attrs: a, DType: dt, Shape: s})
}

func (g *Graph) append(n *Node) *Node {
	if g.names == nil { // a zero Graph works like New()
		g.names = map[string]*Node{}
	}
	n.ID = len(g.Nodes)
	n.graph = g
	if n.Name == "" {
		n.Name = fmt.Sprintf("%s_%d", strings.ToLower(n.Op.String()), n.ID)
		for g.names[n.Name] != nil { // a user took the generated name
			n.Name += "_"
		}
	}
	if other, ok := g.names[n.Name]; ok {
		return g.fail("%s: duplicate name %q (already %s)", n.Op, n.Name, other)
	}
	g.names[n.Name] = n
	g.Nodes = append(g.Nodes, n)
	return n
}

// describe lists nodes for error messages: add_3 f32[2 3], x f32[3].
func describe(ns []*Node) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.Name + " " + tensor.Tensor{DType: n.DType, Shape: n.Shape}.String()
	}
	return strings.Join(parts, ", ")
}
