package onnx

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Control flow. Where it can, kiln resolves control flow at import: an If
// whose condition is known imports only its branch, a Loop whose trip
// count and conditions are known and a Scan (whose length is a static
// dim) are unrolled, one inlined instance of the body per iteration
// (unrolled bodies fuse with what surrounds them); a Scan too long to
// unroll runs as a loop (control_scan.go). An If whose condition
// is computed at run time imports both branches and selects their outputs
// with Where (ONNX ops have no side effects, so computing the branch not
// taken changes no result; but a kernel that fails on its inputs there, a
// Gather index out of range say, fails the run). Branches of more than
// gateIfNodes nodes run instead as two loops gated by the condition, so
// only the taken one runs (gatedIf, control_loop.go). kiln's shapes are
// static, so branches whose outputs differ in shape are refused. A Loop
// whose iteration count depends on run-time values, or is too long to
// unroll, becomes a graph.OpLoop run by the executor (control_loop.go).

func init() {
	registerFlow("If", 1, flowIf)
	registerFlow("Loop", 1, flowLoop)
	registerFlow("Scan", 9, flowScan) // Scan-8 (batch axis, sequence_lens) predates MinOpset
}

// maxUnrolled bounds the nodes a model's subgraphs may import in all
// (an unrolled Loop or Scan imports its body once per iteration; nested
// loops multiply), so a small file cannot make the importer build an
// unbounded graph; past it the node is reported unsupported.
const maxUnrolled = 1 << 16

// graphAttr returns a required GRAPH attribute.
func (c *ctx) graphAttr(name string) (*GraphProto, error) {
	a, err := c.attr(name, AttrGraph)
	if err != nil {
		return nil, err
	}
	if a == nil || a.G == nil {
		return nil, fmt.Errorf("missing graph attribute %q", name)
	}
	return a.G, nil
}

// bindValue records v as output i of the node (if the node names one).
func (c *ctx) bindValue(i int, v *value) {
	if i < len(c.n.Outputs) && c.n.Outputs[i] != "" {
		c.imp.vals[c.n.Outputs[i]] = v
	}
}

// knownBool reads a known one-element condition.
func knownBool(v *value, what string) (bool, bool, error) {
	t, ok := knownValue(v)
	if !ok {
		return false, false, nil
	}
	if t.NumElements() != 1 {
		return false, false, fmt.Errorf("%s has %d elements, want 1", what, t.NumElements())
	}
	return t.Float64s()[0] != 0, true, nil
}

// knownOf wraps a tensor built at import as a known value.
func knownOf(t tensor.Tensor, err error) (*value, error) {
	if err != nil {
		return nil, err
	}
	return &value{known: &t}, nil
}

// flowIf imports an If: its taken branch when the condition is known,
// else both branches joined by Where.
func flowIf(c *ctx) error {
	then, err := c.graphAttr("then_branch")
	if err != nil {
		return err
	}
	els, err := c.graphAttr("else_branch")
	if err != nil {
		return err
	}
	if !c.has(0) {
		return fmt.Errorf("missing required input 0 (cond)")
	}
	if len(c.n.Outputs) > min(len(then.Outputs), len(els.Outputs)) {
		return fmt.Errorf("the node has %d outputs, the branches %d and %d", len(c.n.Outputs), len(then.Outputs), len(els.Outputs))
	}
	cond, known, err := knownBool(c.ins[0], "the condition")
	if err != nil {
		return err
	}
	if known {
		branch, tag := els, "else_branch"
		if cond {
			branch, tag = then, "then_branch"
		}
		outs, err := c.imp.inline(c, branch, tag, nil)
		if err != nil || outs == nil {
			c.imp.kill(c.n)
			return err
		}
		for i, v := range outs {
			c.bindValue(i, v)
		}
		return nil
	}
	if c.shape(0).NumElements() != 1 {
		return fmt.Errorf("the condition has shape %v, want one element", c.shape(0))
	}
	if len(then.Nodes)+len(els.Nodes) > gateIfNodes {
		return c.gatedIf(then, els)
	}
	a, err := c.imp.inline(c, then, "then_branch", nil)
	if err != nil || a == nil {
		c.imp.kill(c.n)
		return err
	}
	b, err := c.imp.inline(c, els, "else_branch", nil)
	if err != nil || b == nil {
		c.imp.kill(c.n)
		return err
	}
	g := c.imp.g
	sel := g.Reshape(c.imp.materialise(c.ins[0])) // one element: a scalar, so Where adds no dims
	for i := range c.n.Outputs {
		x, y := c.imp.materialise(a[i]), c.imp.materialise(b[i])
		if x.DType != y.DType || !x.Shape.Equal(y.Shape) {
			return unsupportedf("the condition is computed at run time and output %d is %v%v in then_branch but %v%v in else_branch: "+
				"kiln computes both branches and selects with Where, which needs them to agree (the executor has no run-time branch)",
				i, x.DType, x.Shape, y.DType, y.Shape)
		}
		c.bindValue(i, &value{name: c.n.Outputs[i], node: g.Where(sel, x, y)})
	}
	return g.Err()
}

// flowLoop unrolls a Loop whose iteration count is known at import: the
// trip count M (if given) and the condition before every iteration.
func flowLoop(c *ctx) error {
	body, err := c.graphAttr("body")
	if err != nil {
		return err
	}
	nCarried := len(c.ins) - 2
	if nCarried < 0 {
		return fmt.Errorf("a Loop takes M and cond (either may be empty) before its loop-carried values")
	}
	nScan := len(body.Outputs) - 1 - nCarried
	if len(body.Inputs) != 2+nCarried || nScan < 0 {
		return fmt.Errorf("the body has %d inputs and %d outputs, want %d and at least %d for %d loop-carried values",
			len(body.Inputs), len(body.Outputs), 2+nCarried, 1+nCarried, nCarried)
	}
	trip := -1
	if c.has(0) {
		t, ok := knownValue(c.ins[0])
		if !ok || t.NumElements() != 1 {
			return c.runTimeLoop(body, nCarried, nScan, -1)
		}
		trip = int(max(0, min(t.Float64s()[0], 1<<62)))
	}
	cond := true
	if c.has(1) {
		v, known, err := knownBool(c.ins[1], "the condition")
		if err != nil {
			return err
		}
		if !known {
			return c.runTimeLoop(body, nCarried, nScan, int64(trip))
		}
		cond = v
	} else if trip < 0 {
		return unsupportedf("a Loop with neither a trip count nor a condition never ends")
	}
	if trip >= 0 && c.imp.inlined+trip*max(1, len(body.Nodes)) > maxUnrolled {
		return c.runTimeLoop(body, nCarried, nScan, int64(trip))
	}
	carried := slices.Clone(c.ins[2:])
	for k, v := range carried {
		if v == nil {
			return fmt.Errorf("loop-carried input %d is empty", k)
		}
	}
	scans := make([][]*value, nScan)
	for it := 0; cond && (trip < 0 || it < trip); it++ {
		if c.imp.inlined+max(1, len(body.Nodes)) > maxUnrolled {
			return unsupportedf("unrolling would import more than %d nodes from subgraphs (at iteration %d of a %d-node body, trip count %d): kiln unrolls Loops at import and bounds the result",
				maxUnrolled, it, len(body.Nodes), trip)
		}
		iter, err := knownOf(tensor.FromI64(tensor.Shape{}, []int64{int64(it)}))
		if err != nil {
			return err
		}
		cv, err := knownOf(tensor.FromBool(tensor.Shape{}, []bool{cond}))
		if err != nil {
			return err
		}
		outs, err := c.imp.inline(c, body, fmt.Sprintf("iter%d", it), append([]*value{iter, cv}, carried...))
		if err != nil || outs == nil {
			c.imp.kill(c.n)
			return err
		}
		next, known, err := knownBool(outs[0], "the body's condition output")
		if err != nil {
			return err
		}
		if !known {
			// The instances inlined so far are left unused (pruned at the end).
			return c.runTimeLoop(body, nCarried, nScan, int64(trip))
		}
		cond = next
		copy(carried, outs[1:1+nCarried])
		for k := range scans {
			scans[k] = append(scans[k], outs[1+nCarried+k])
		}
	}
	for k, v := range carried {
		c.bindValue(k, v)
	}
	return c.bindScans(nCarried, scans, nil, nil)
}

// bindScans stacks each scan output's per-iteration values along its
// axis (0 unless axes says), last iteration first where dirs says 1, and
// binds them as outputs first, first+1, ...
func (c *ctx) bindScans(first int, scans [][]*value, axes, dirs []int) error {
	for k, vals := range scans {
		if !c.used(first + k) {
			continue
		}
		if len(vals) == 0 {
			return unsupportedf("no iterations run, so scan output %d has no element to take its shape from", k)
		}
		ax := 0
		if axes != nil {
			a, err := axis(axes[k], vals[0].shape().Rank()+1)
			if err != nil {
				return fmt.Errorf("scan_output_axes: %w", err)
			}
			ax = a
		}
		if dirs != nil && dirs[k] == 1 {
			vals = slices.Clone(vals)
			slices.Reverse(vals)
		}
		v, err := c.imp.derive(c.n.Outputs[first+k], vals, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
			parts := make([]*graph.Node, len(xs))
			for i, x := range xs {
				parts[i] = g.Unsqueeze(x, ax)
			}
			return g.Concat(ax, parts...)
		})
		if err != nil {
			return err
		}
		c.bindValue(first+k, v)
	}
	return nil
}

// flowScan unrolls a Scan (opset 9 and later): its length is the scan
// inputs' static extent along their axes (kiln's dims are all static, so
// it is always known here). A Scan too long to unroll runs as a loop
// (runTimeScan, control_scan.go).
func flowScan(c *ctx) error {
	body, err := c.graphAttr("body")
	if err != nil {
		return err
	}
	m, err := c.attrInt("num_scan_inputs", -1)
	if err != nil {
		return err
	}
	nScanIn := int(m)
	nState := len(c.ins) - nScanIn
	nScanOut := len(body.Outputs) - nState
	if m < 1 || nState < 0 || nScanOut < 0 || len(body.Inputs) != len(c.ins) {
		return fmt.Errorf("num_scan_inputs %d does not fit %d inputs and a body of %d inputs and %d outputs",
			m, len(c.ins), len(body.Inputs), len(body.Outputs))
	}
	list := func(name string, n int) ([]int, error) {
		v, ok, err := c.attrInts(name)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return make([]int, n), nil
		case len(v) != n:
			return nil, fmt.Errorf("%s has %d entries, want %d", name, len(v), n)
		}
		return v, nil
	}
	inAxes, err := list("scan_input_axes", nScanIn)
	if err != nil {
		return err
	}
	inDirs, err := list("scan_input_directions", nScanIn)
	if err != nil {
		return err
	}
	outAxes, err := list("scan_output_axes", nScanOut)
	if err != nil {
		return err
	}
	outDirs, err := list("scan_output_directions", nScanOut)
	if err != nil {
		return err
	}
	for _, d := range append(slices.Clone(inDirs), outDirs...) {
		if d != 0 && d != 1 {
			return fmt.Errorf("a scan direction is %d, want 0 or 1", d)
		}
	}
	length := -1
	for j := range nScanIn {
		if !c.has(nState + j) {
			return fmt.Errorf("scan input %d is empty", j)
		}
		s := c.shape(nState + j)
		ax, err := axis(inAxes[j], s.Rank())
		if err != nil {
			return fmt.Errorf("scan_input_axes: %w", err)
		}
		inAxes[j] = ax
		if length >= 0 && s[ax] != length {
			return fmt.Errorf("scan input %d has %d steps along axis %d, input 0 has %d", j, s[ax], ax, length)
		}
		length = s[ax]
	}
	if c.imp.inlined+length*max(1, len(body.Nodes)) > maxUnrolled {
		return c.runTimeScan(body, scanSpec{nState: nState, nScanIn: nScanIn, nScanOut: nScanOut, length: length,
			inAxes: inAxes, inDirs: inDirs, outAxes: outAxes, outDirs: outDirs})
	}
	states := slices.Clone(c.ins[:nState])
	for k, v := range states {
		if v == nil {
			return fmt.Errorf("state input %d is empty", k)
		}
	}
	scans := make([][]*value, nScanOut)
	for t := range length {
		ins := slices.Clone(states)
		for j := range nScanIn {
			idx, ax := t, inAxes[j]
			if inDirs[j] == 1 {
				idx = length - 1 - t
			}
			el, err := c.imp.derive("", []*value{c.ins[nState+j]}, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
				return g.Squeeze(g.Slice(xs[0], graph.SliceSpec{Axes: []int{ax}, Starts: []int{idx}, Ends: []int{idx + 1}}), ax)
			})
			if err != nil {
				return err
			}
			ins = append(ins, el)
		}
		outs, err := c.imp.inline(c, body, fmt.Sprintf("iter%d", t), ins)
		if err != nil || outs == nil {
			c.imp.kill(c.n)
			return err
		}
		copy(states, outs[:nState])
		for k := range scans {
			scans[k] = append(scans[k], outs[nState+k])
		}
	}
	for k, v := range states {
		c.bindValue(k, v)
	}
	return c.bindScans(nState, scans, outAxes, outDirs)
}
