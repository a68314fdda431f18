package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Run-time loops. A Loop whose trip count or condition is only known at
// run time (or whose unrolling would pass maxUnrolled) becomes one
// graph.OpLoop node: its body is imported once into a graph of its own,
// whose inputs are the iteration number, the condition, the loop-carried
// values and the outer values the body reads (captured: run-time values
// and weights; values known at import are constants inside the body).
// Loop-carried values must keep their dtype and shape. A scan output
// needs a bound on the iterations: the trip count when it is known at
// import, else WithLoopBound, else the first dim the model declares for
// that output; the output then has that many rows, those past the
// iterations run being zero, and a run that needs more iterations fails.

// WithLoopBound bounds the iterations of every Loop whose trip count is
// only known at run time: a run that would start iteration n+1 fails with
// an error. A Loop with scan outputs needs a bound (unless the model
// declares the outputs' first dim); its scan outputs get n rows, rows
// past the iterations run being zero.
func WithLoopBound(n int) Option {
	return func(o *options) { o.loopBound = n }
}

// runTimeLoop imports the Loop of c as a graph.OpLoop over its body.
// trip is the trip count when it is known at import, else -1.
func (c *ctx) runTimeLoop(body *GraphProto, nCarried, nScan int, trip int64) error {
	imp := c.imp
	bound, err := c.loopBound(nCarried, nScan, trip)
	if err != nil {
		return err
	}
	var outer []*graph.Node
	spec := &graph.LoopSpec{Carried: nCarried, Bound: bound}
	if c.has(0) {
		m := imp.materialise(c.ins[0])
		if m.DType != tensor.I64 || m.Shape.NumElements() != 1 {
			return fmt.Errorf("the trip count M is %v%v, want one int64", m.DType, m.Shape)
		}
		spec.HasTrip, outer = true, append(outer, m)
	}
	if c.has(1) {
		cv := imp.materialise(c.ins[1])
		if cv.DType != tensor.Bool || cv.Shape.NumElements() != 1 {
			return fmt.Errorf("the condition is %v%v, want one bool", cv.DType, cv.Shape)
		}
		spec.HasCond, outer = true, append(outer, cv)
	}
	var carried []*graph.Node
	for k, v := range c.ins[2:] {
		if v == nil {
			return fmt.Errorf("loop-carried input %d is empty", k)
		}
		carried = append(carried, imp.materialise(v))
	}
	outer = append(outer, carried...)
	bg, captured, outs, err := c.importBody(body, "body", carried, nil, loopInputs)
	if err != nil || outs == nil {
		return err
	}
	for k, in := range carried {
		if o := outs[1+k]; in.DType != o.DType || !in.Shape.Equal(o.Shape) {
			return unsupportedf("loop-carried value %d enters the body as %v%v and leaves it as %v%v: kiln's run-time loop keeps carried values' dtype and shape",
				k, in.DType, in.Shape, o.DType, o.Shape)
		}
	}
	bg.Output(outs...)
	if err := bg.Err(); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	spec.Body = bg
	g := imp.g
	loop := g.Loop(spec, append(outer, captured...)...)
	for k := range nCarried + nScan {
		if c.used(k) {
			c.bindValue(k, &value{name: c.n.Outputs[k], node: g.LoopOutput(loop, k)})
		}
	}
	return g.Err()
}

// bodyInputs gives the values a subgraph's inputs are bound to inside a
// run-time loop's body graph bg, from the body's leading inputs (the
// iteration number, the condition, the carried values) and the body
// inputs of the outer nodes captured for it (importBody's extra).
type bodyInputs func(bg *graph.Graph, lead []*value, extra []*graph.Node) []*value

// loopInputs binds a Loop body's inputs: iteration number, condition,
// carried values, as the loop's body receives them.
func loopInputs(_ *graph.Graph, lead []*value, _ []*graph.Node) []*value { return lead }

// importBody imports subgraph sub (tag names it in node names) into a
// new graph, the body of a run-time loop, and returns that graph (its
// outputs not yet marked), the outer nodes it captures (in the order of
// its inputs after the carried values) and the nodes of sub's outputs.
// The body's inputs are the iteration number, the condition, one per
// carried value (of its dtype and shape), then one per captured value:
// first the outer nodes extra, then the values sub reads from outside.
// bind gives sub's own inputs (nil: sub takes none, an If branch). The
// outer values sub reads that are known at import stay known (folded
// into the body); run-time values and weights are captured. Nil outputs
// without an error: a node inside could not be imported (it is listed as
// unsupported).
func (c *ctx) importBody(sub *GraphProto, tag string, carried, extra []*graph.Node, bind bodyInputs) (*graph.Graph, []*graph.Node, []*graph.Node, error) {
	imp := c.imp
	bg := graph.New()
	ins := []*value{
		{name: "iter", node: bg.Input("iter", tensor.I64)},
		{name: "cond", node: bg.Input("cond", tensor.Bool)},
	}
	for k, n := range carried {
		name := fmt.Sprintf("carried%d", k)
		ins = append(ins, &value{name: name, node: bg.Input(name, n.DType, n.Shape...)})
	}
	var captured, extraIns []*graph.Node
	for _, n := range extra {
		captured = append(captured, n)
		extraIns = append(extraIns, bg.Input(fmt.Sprintf("captured%d", len(captured)-1), n.DType, n.Shape...))
	}
	if bind == nil {
		ins = nil
	} else {
		ins = bind(bg, ins, extraIns)
	}
	saved := map[string]*value{}
	for _, name := range freeNames(sub) {
		v := imp.vals[name]
		if v == nil {
			continue // not defined anywhere: inline reports it where it is read
		}
		saved[name] = v
		if t, ok := knownValue(v); ok && !v.param {
			imp.vals[name] = &value{name: name, known: &t}
			continue
		}
		if v.dead {
			continue
		}
		n := imp.materialise(v)
		captured = append(captured, n)
		imp.vals[name] = &value{name: name, node: bg.Input(fmt.Sprintf("captured%d", len(captured)-1), n.DType, n.Shape...)}
	}
	parent := imp.g
	imp.g = bg
	vals, err := imp.inline(c, sub, tag, ins)
	var outs []*graph.Node
	if err == nil && vals != nil {
		for _, v := range vals {
			outs = append(outs, imp.materialise(v))
		}
	}
	imp.g = parent
	for name, v := range saved {
		imp.vals[name] = v
	}
	if err != nil || vals == nil {
		imp.kill(c.n)
		return nil, nil, nil, err
	}
	return bg, captured, outs, nil
}

// loopBound is the bound of a run-time loop: the trip count when it is
// known, else WithLoopBound's, else (for scan outputs) the first dim the
// model declares for a scan output; 0 (none) for a loop without scan
// outputs and no option.
func (c *ctx) loopBound(nCarried, nScan int, trip int64) (int, error) {
	const most = 1 << 30 // rows times a row's size must fit the arena
	switch {
	case trip >= 0 && trip <= most:
		return max(int(trip), 1), nil
	case c.imp.opts.loopBound > 0:
		return c.imp.opts.loopBound, nil
	case nScan == 0:
		return 0, nil
	}
	for k := range nScan {
		if d, ok := c.imp.declaredDim0(c.n.Outputs[nCarried+k]); ok {
			return d, nil
		}
	}
	return 0, unsupportedf("the trip count is computed at run time and the Loop has %d scan outputs, whose rows need a bound: give one with onnx.WithLoopBound (or declare the outputs' first dim)", nScan)
}

// declaredDim0 is the fixed first dim the model declares for a value (as
// a graph output or in value_info), if any.
func (imp *importer) declaredDim0(name string) (int, bool) {
	if name == "" {
		return 0, false
	}
	g := imp.mp.Graph
	for _, vi := range append(append([]*ValueInfo{}, g.Outputs...), g.ValueInfo...) {
		if vi.Name == name && vi.HasShape && len(vi.Dims) > 0 && vi.Dims[0].HasValue && vi.Dims[0].Value > 0 && vi.Dims[0].Value <= 1<<30 {
			return int(vi.Dims[0].Value), true
		}
	}
	return 0, false
}

// gateIfNodes is the size (nodes in both branches) past which an If on a
// run-time condition runs only its taken branch (gatedIf) instead of
// computing both and selecting with Where: for a few nodes, two loop
// steps and their copies cost more than the branch not taken, and the
// Where form fuses with what surrounds it.
const gateIfNodes = 16

// gatedIf imports an If whose condition is computed at run time as two
// loops of at most one iteration, one per branch, gated by the condition
// and by its negation, whose results (one row of zeros from the loop that
// did not run) are selected with Where: only the taken branch runs, so
// its cost, and a kernel failing on the untaken branch's inputs, are
// avoided. The branches' outputs must agree in dtype and shape.
func (c *ctx) gatedIf(then, els *GraphProto) error {
	imp := c.imp
	g := imp.g
	cond := g.Reshape(imp.materialise(c.ins[0])) // one element: a scalar
	one, err := tensor.FromI64(tensor.Shape{}, []int64{1})
	if err != nil {
		return err
	}
	trip := g.Constant(one)
	var res [2][]*graph.Node
	for b, br := range []*GraphProto{then, els} {
		tag, gate := "then_branch", cond
		if b == 1 {
			tag, gate = "else_branch", g.Not(cond)
		}
		bg, captured, outs, err := c.importBody(br, tag, nil, nil, nil)
		if err != nil || outs == nil {
			return err
		}
		stop, err := tensor.FromBool(tensor.Shape{}, []bool{false})
		if err != nil {
			return err
		}
		bg.Output(append([]*graph.Node{bg.Constant(stop)}, outs...)...)
		if err := bg.Err(); err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		loop := g.Loop(&graph.LoopSpec{Body: bg, HasTrip: true, HasCond: true, Bound: 1}, append([]*graph.Node{trip, gate}, captured...)...)
		for k := range c.n.Outputs {
			res[b] = append(res[b], g.Reshape(g.LoopOutput(loop, k), outs[k].Shape...))
		}
	}
	for i := range c.n.Outputs {
		x, y := res[0][i], res[1][i]
		if x.DType != y.DType || !x.Shape.Equal(y.Shape) {
			return unsupportedf("the condition is computed at run time and output %d is %v%v in then_branch but %v%v in else_branch: "+
				"kiln's shapes are static, so both branches must give the same dtype and shape", i, x.DType, x.Shape, y.DType, y.Shape)
		}
		c.bindValue(i, &value{name: c.n.Outputs[i], node: g.Where(cond, x, y)})
	}
	return g.Err()
}
