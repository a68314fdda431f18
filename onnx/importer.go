package onnx

import (
	"errors"
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The opsets of the default domain kiln imports.
const (
	MinOpset = 11
	MaxOpset = 23
)

// value is an ONNX value (a tensor name) during import.
type value struct {
	name  string
	node  *graph.Node    // in the main graph; nil until first used there
	known *tensor.Tensor // value known at import time: constants and initializers
	param bool           // an initializer imported as a Param
	dead  bool           // produced by a node that could not be imported
	lazy  func()         // a deferred fold (see deferFold): sets known if it can
}

func (v *value) dtype() tensor.DType {
	if v.node != nil {
		return v.node.DType
	}
	return v.known.DType
}

func (v *value) shape() tensor.Shape {
	if v.node != nil {
		return v.node.Shape
	}
	return v.known.Shape
}

// foldable reports whether a node may be computed at import time from
// this input: its value is known and it is not a weight (folding would
// bake the weight into a constant that SetParam cannot reach).
func (v *value) foldable() bool { return v.known != nil && !v.param }

type importer struct {
	opts    options
	mp      *ModelProto
	opset   int64
	g       *graph.Graph
	vals    map[string]*value
	uses    map[string]int
	ext     *external
	weights map[string]tensor.Tensor
	unsup   []UnsupportedOp
	named   map[*graph.Node]bool
	budget  int // bytes import-time constants may still take (see foldBudget)

	prefixes map[string]bool                 // name prefixes of inlined subgraph instances
	subInits map[*TensorProto]*tensor.Tensor // decoded subgraph initializers
	inlined  int                             // nodes imported from subgraphs (see maxUnrolled)
}

// foldBudget is the base of the bytes all folded constants together may
// take, on top of the model file's size: a small file cannot make the
// importer allocate without bound (thousands of large ConstantOfShape
// nodes, say). Real shape arithmetic takes a few kilobytes.
const foldBudget = 64 << 20

// importModel turns a decoded model (of size bytes) into a kiln graph.
func importModel(mp *ModelProto, size int, ext *external, o options) (*Model, error) {
	opset, err := defaultOpset(mp)
	if err != nil {
		return nil, err
	}
	imp := &importer{opts: o, mp: mp, opset: opset, g: graph.New(), vals: map[string]*value{},
		uses: map[string]int{}, ext: ext, weights: map[string]tensor.Tensor{}, named: map[*graph.Node]bool{},
		budget: foldBudget + size, prefixes: map[string]bool{}, subInits: map[*TensorProto]*tensor.Tensor{}}
	if err := imp.initializers(); err != nil {
		return nil, err
	}
	if err := imp.inputs(); err != nil {
		return nil, err
	}
	nodes := mp.Graph.Nodes
	order, err := imp.sortNodes(nodes)
	if err != nil {
		return nil, err
	}
	for _, o := range mp.Graph.Outputs {
		imp.uses[o.Name]++
	}
	for _, i := range order {
		if err := imp.node(nodes[i], nodeName(nodes[i], i)); err != nil {
			return nil, err
		}
	}
	if len(imp.unsup) > 0 {
		return nil, &UnsupportedError{Ops: imp.unsup}
	}
	if err := imp.outputs(); err != nil {
		return nil, err
	}
	if err := imp.g.Prune(); err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	if err := graph.Verify(imp.g); err != nil {
		return nil, fmt.Errorf("onnx: imported graph is invalid: %w", err)
	}
	if err := graph.CheckPadded(imp.g); err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	// Keep only weights that are params of the final graph.
	kept := map[string]tensor.Tensor{}
	for _, p := range imp.g.Params() {
		kept[p.Name] = imp.weights[p.Name]
	}
	return &Model{Graph: imp.g, Proto: mp, Opset: opset, weights: kept, ext: ext}, nil
}

// defaultOpset finds the ai.onnx opset and checks that kiln covers it.
func defaultOpset(mp *ModelProto) (int64, error) {
	opset := int64(-1)
	for _, o := range mp.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			opset = o.Version
		}
	}
	switch {
	case opset < 0:
		return 0, errors.New("onnx: the model imports no ai.onnx opset")
	case opset < MinOpset || opset > MaxOpset:
		return 0, fmt.Errorf("onnx: ai.onnx opset %d is not supported (kiln imports opsets %d to %d; convert the model with onnx.version_converter)", opset, MinOpset, MaxOpset)
	}
	return opset, nil
}

// nodeName names a node in messages: its name, or its index.
func nodeName(n *NodeProto, i int) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("#%d", i)
}

// lookupOp finds the mapping of a node's op at the model's opset, or
// says why there is none: another domain, no mapping at all (empty
// reason), or an opset older than the op.
func lookupOp(n *NodeProto, opset int64) (opDef, string, bool) {
	def, ok := opTable[n.OpType]
	switch {
	case n.Domain != "" && n.Domain != "ai.onnx":
		return opDef{}, "custom domain", false
	case !ok:
		return opDef{}, "", false
	case opset < def.since:
		return opDef{}, fmt.Sprintf("the op exists from opset %d", def.since), false
	}
	return def, "", true
}

// unsupportedOps lists the nodes whose op kiln has no mapping for, in
// the graph and in its subgraphs (named "outer/inner").
func unsupportedOps(mp *ModelProto, g *GraphProto, prefix string, opset int64) []UnsupportedOp {
	var out []UnsupportedOp
	for i, n := range g.Nodes {
		name := prefix + nodeName(n, i)
		if _, reason, ok := lookupOp(n, opset); !ok {
			out = append(out, UnsupportedOp{Node: name, OpType: n.OpType, Domain: n.Domain,
				Opset: domainOpset(mp, n.Domain, opset), Reason: reason})
		}
		for _, a := range n.Attrs {
			for _, sub := range a.subgraphs() {
				out = append(out, unsupportedOps(mp, sub, name+"/"+a.Name+"/", opset)...)
			}
		}
	}
	return out
}

// domainOpset is the model's opset for a node's domain (def for the
// default one).
func domainOpset(mp *ModelProto, domain string, def int64) int64 {
	if domain == "" || domain == "ai.onnx" {
		return def
	}
	for _, o := range mp.Opsets {
		if o.Domain == domain {
			return o.Version
		}
	}
	return 0
}

// Unsupported lists the nodes of a decoded model, subgraphs included,
// that kiln cannot map to its IR by op type alone (nodes with unsupported
// attributes show up only when importing). It is empty when every op is
// known.
func Unsupported(mp *ModelProto) []UnsupportedOp {
	opset, err := defaultOpset(mp)
	if err != nil {
		opset = MaxOpset
		for _, o := range mp.Opsets {
			if o.Domain == "" || o.Domain == "ai.onnx" {
				opset = o.Version
			}
		}
	}
	return unsupportedOps(mp, mp.Graph, "", opset)
}

// initializers decodes every initializer: integer ones and small floats
// become known constants, the rest Params (created when first used).
func (imp *importer) initializers() error {
	if imp.mp.Graph.HasSparse {
		return errors.New("onnx: sparse initializers are not supported")
	}
	for _, tp := range imp.mp.Graph.Initializers {
		if tp.Name == "" {
			return errors.New("onnx: an initializer has no name")
		}
		if _, dup := imp.vals[tp.Name]; dup {
			return fmt.Errorf("onnx: initializer %q is defined twice", tp.Name)
		}
		t, err := tensorOf(tp, imp.ext)
		if err != nil {
			return fmt.Errorf("onnx: initializer: %w", err)
		}
		v := &value{name: tp.Name}
		if t.DType.IsFloat() && t.NumElements() > imp.opts.constLimit {
			v.param = true
			imp.weights[tp.Name] = t
		} else {
			t = t.Clone() // aligned, and free of the file mapping
		}
		v.known = &t
		imp.vals[tp.Name] = v
	}
	return nil
}

// outputs marks the model's outputs, checking the types it declares.
func (imp *importer) outputs() error {
	if len(imp.mp.Graph.Outputs) == 0 {
		return errors.New("onnx: the graph has no outputs")
	}
	srcs, _ := graph.PaddedSources(imp.g)
	for _, vi := range imp.mp.Graph.Outputs {
		v, ok := imp.vals[vi.Name]
		if !ok {
			return fmt.Errorf("onnx: graph output %q is not produced by any node", vi.Name)
		}
		n := imp.materialise(v)
		if vi.IsTensor && vi.ElemType != 0 {
			if dt, err := DType(vi.ElemType); err != nil || dt != n.DType {
				return fmt.Errorf("onnx: output %q: the model declares %s, kiln computes %v", vi.Name, TypeName(vi.ElemType), n.DType)
			}
		}
		if vi.HasShape && !declaredMatches(vi.Dims, n.Shape) && !paddedFits(n, srcs[n] != nil, vi.Dims) {
			return fmt.Errorf("onnx: output %q: the model declares shape %v, kiln computes %v", vi.Name, vi.Dims, n.Shape)
		}
		imp.g.OutputNamed(vi.Name, n)
	}
	return imp.g.Err()
}

// declaredMatches compares a declared shape with a computed one; symbolic
// and unknown dims match anything.
func declaredMatches(dims []Dim, s tensor.Shape) bool {
	if len(dims) != len(s) {
		return false
	}
	for i, d := range dims {
		if d.HasValue && d.Value != int64(s[i]) {
			return false
		}
	}
	return true
}

// paddedFits accepts a declared shape for an output whose row count
// depends on the data (padded: NonMaxSuppression's selection, computed at
// its upper bound, or a value computed from it row by row, see
// graph.PaddedSources): exporters write the count one run gave, which may
// be any count up to the bound.
func paddedFits(n *graph.Node, padded bool, dims []Dim) bool {
	if !padded || len(dims) == 0 || len(dims) != len(n.Shape) {
		return false
	}
	if d := dims[0]; d.HasValue && (d.Value < 0 || d.Value > int64(n.Shape[0])) {
		return false
	}
	return declaredMatches(append([]Dim{{}}, dims[1:]...), n.Shape)
}

// spend takes bytes from the folding budget, reporting whether they fit.
func (imp *importer) spend(bytes int) bool {
	if bytes > imp.budget {
		return false
	}
	imp.budget -= bytes
	return true
}
