package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// Subgraphs (the branches of If, the bodies of Loop and Scan) are
// imported by inlining: each use of a subgraph becomes an instance whose
// own names get a unique prefix, so the nodes can be imported by the same
// path as the model's (folded where their inputs are known), and the
// outer values it names resolve to the enclosing scope's.

// subgraphs returns the graphs an attribute holds.
func (a *Attribute) subgraphs() []*GraphProto {
	if a.G != nil {
		return append([]*GraphProto{a.G}, a.Graphs...)
	}
	return a.Graphs
}

// nodeReads lists the values a node reads: its inputs, and the outer
// values its subgraphs name (a subgraph may read any value in scope).
func nodeReads(n *NodeProto) []string {
	var out []string
	for _, in := range n.Inputs {
		if in != "" {
			out = append(out, in)
		}
	}
	for _, a := range n.Attrs {
		for _, g := range a.subgraphs() {
			out = append(out, freeNames(g)...)
		}
	}
	return out
}

// locals is the set of names a graph defines: its inputs, initializers
// and node outputs.
func locals(g *GraphProto) map[string]bool {
	def := map[string]bool{}
	for _, v := range g.Inputs {
		def[v.Name] = true
	}
	for _, t := range g.Initializers {
		def[t.Name] = true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != "" {
				def[o] = true
			}
		}
	}
	return def
}

// freeNames lists, once each, the values a subgraph reads from the
// scopes around it (its nested subgraphs' included).
func freeNames(g *GraphProto) []string {
	def := locals(g)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !def[s] && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, n := range g.Nodes {
		for _, r := range nodeReads(n) {
			add(r)
		}
	}
	for _, o := range g.Outputs {
		add(o.Name)
	}
	return out
}

// remap copies g with the names in m replaced. For the instance being
// inlined (prefix set) every name g defines is in m, and its nodes are
// named prefix+name; for a subgraph nested in it, only the outer names
// it reads are replaced, minus those its own definitions shadow.
func remap(g *GraphProto, m map[string]string, prefix string) *GraphProto {
	if prefix == "" {
		loc := locals(g)
		kept := map[string]string{}
		for k, v := range m {
			if !loc[k] {
				kept[k] = v
			}
		}
		m = kept
	}
	name := func(s string) string {
		if r, ok := m[s]; ok {
			return r
		}
		return s
	}
	names := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = name(s)
		}
		return out
	}
	infos := func(vs []*ValueInfo) []*ValueInfo {
		out := make([]*ValueInfo, len(vs))
		for i, v := range vs {
			c := *v
			c.Name = name(v.Name)
			out[i] = &c
		}
		return out
	}
	out := &GraphProto{Name: g.Name, Inputs: infos(g.Inputs), Outputs: infos(g.Outputs), HasSparse: g.HasSparse}
	for _, t := range g.Initializers {
		c := *t
		c.Name = name(t.Name)
		out.Initializers = append(out.Initializers, &c)
	}
	for i, n := range g.Nodes {
		c := &NodeProto{Name: n.Name, OpType: n.OpType, Domain: n.Domain, Inputs: names(n.Inputs), Outputs: names(n.Outputs)}
		if prefix != "" {
			c.Name = prefix + nodeName(n, i)
		}
		for _, a := range n.Attrs {
			if len(a.subgraphs()) == 0 {
				c.Attrs = append(c.Attrs, a)
				continue
			}
			ca := *a
			if a.G != nil {
				ca.G = remap(a.G, m, "")
			}
			ca.Graphs = nil
			for _, sg := range a.Graphs {
				ca.Graphs = append(ca.Graphs, remap(sg, m, ""))
			}
			c.Attrs = append(c.Attrs, &ca)
		}
		out.Nodes = append(out.Nodes, c)
	}
	return out
}

// inline imports one instance of subgraph g for node c (tag names the
// instance in node names: "then_branch", "iter3"): its inputs are bound to ins,
// its initializers and nodes imported like the model's, and the values
// of its outputs returned. A nil result without error means a node
// inside could not be imported; it is already listed as unsupported.
func (imp *importer) inline(c *ctx, g *GraphProto, tag string, ins []*value) ([]*value, error) {
	if len(ins) != len(g.Inputs) {
		return nil, fmt.Errorf("subgraph %q takes %d inputs, %s passes %d", tag, len(g.Inputs), c.n.OpType, len(ins))
	}
	if g.HasSparse {
		return nil, unsupportedf("subgraph %q has sparse initializers", tag)
	}
	if imp.inlined += max(1, len(g.Nodes)); imp.inlined > maxUnrolled {
		return nil, unsupportedf("subgraphs would import more than %d nodes in all (inlining %q): kiln resolves control flow at import and bounds the result", maxUnrolled, tag)
	}
	prefix := c.name + "/" + tag + "/"
	for k := 2; imp.prefixes[prefix]; k++ { // node names need not be unique
		prefix = fmt.Sprintf("%s/%s#%d/", c.name, tag, k)
	}
	imp.prefixes[prefix] = true
	m := map[string]string{}
	for name := range locals(g) {
		m[name] = prefix + name
	}
	sub := remap(g, m, prefix)
	for k, vi := range sub.Inputs {
		if ins[k] == nil {
			return nil, fmt.Errorf("subgraph %q: input %d (%q) is given no value", tag, k, g.Inputs[k].Name)
		}
		imp.vals[vi.Name] = ins[k]
	}
	for k, tp := range g.Initializers {
		t, err := imp.subInitializer(tp)
		if err != nil {
			return nil, fmt.Errorf("subgraph %q: initializer %q: %w", tag, tp.Name, err)
		}
		name := sub.Initializers[k].Name
		imp.vals[name] = &value{name: name, known: t}
	}
	order, err := imp.sortNodes(sub.Nodes)
	if err != nil {
		return nil, err
	}
	for _, o := range sub.Outputs {
		imp.uses[o.Name]++
	}
	for _, i := range order {
		if err := imp.node(sub.Nodes[i], sub.Nodes[i].Name); err != nil {
			return nil, err
		}
	}
	outs := make([]*value, len(sub.Outputs))
	for k, o := range sub.Outputs {
		v := imp.vals[o.Name]
		switch {
		case v == nil:
			return nil, fmt.Errorf("subgraph %q: output %q is not produced by any node", tag, g.Outputs[k].Name)
		case v.dead:
			return nil, nil
		}
		outs[k] = v
	}
	return outs, nil
}

// subInitializer decodes a subgraph's initializer once, however many
// times the subgraph is inlined; it is a known value (folded into
// constants), never a Param.
func (imp *importer) subInitializer(tp *TensorProto) (*tensor.Tensor, error) {
	if t, ok := imp.subInits[tp]; ok {
		return t, nil
	}
	t, err := tensorOf(tp, imp.ext)
	if err != nil {
		return nil, err
	}
	if !imp.spend(len(t.Data)) {
		return nil, fmt.Errorf("the subgraph's constants exceed the import budget")
	}
	t = t.Clone()
	imp.subInits[tp] = &t
	return &t, nil
}
