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
	bg := graph.New()
	ins := []*value{
		{name: "iter", node: bg.Input("iter", tensor.I64)},
		{name: "cond", node: bg.Input("cond", tensor.Bool)},
	}
	outer := []*graph.Node{}
	spec := &graph.LoopSpec{Body: bg, Carried: nCarried, Bound: bound}
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
	for k, v := range c.ins[2:] {
		if v == nil {
			return fmt.Errorf("loop-carried input %d is empty", k)
		}
		n := imp.materialise(v)
		outer = append(outer, n)
		ins = append(ins, &value{name: fmt.Sprintf("carried%d", k), node: bg.Input(fmt.Sprintf("carried%d", k), n.DType, n.Shape...)})
	}
	// The outer values the body reads: known ones stay known (folded into
	// the body), the rest are captured as body inputs.
	saved := map[string]*value{}
	for _, name := range freeNames(body) {
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
		outer = append(outer, n)
		imp.vals[name] = &value{name: name, node: bg.Input(fmt.Sprintf("captured%d", len(saved)), n.DType, n.Shape...)}
	}
	parent := imp.g
	imp.g = bg
	outs, err := imp.inline(c, body, "body", ins)
	var bodyOuts []*graph.Node
	if err == nil && outs != nil {
		for _, v := range outs {
			bodyOuts = append(bodyOuts, imp.materialise(v))
		}
		bg.Output(bodyOuts...)
	}
	imp.g = parent
	for name, v := range saved {
		imp.vals[name] = v
	}
	if err != nil || outs == nil {
		imp.kill(c.n)
		return err
	}
	if err := bg.Err(); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	for k := range nCarried {
		if in, o := ins[2+k].node, bodyOuts[1+k]; in.DType != o.DType || !in.Shape.Equal(o.Shape) {
			return unsupportedf("loop-carried value %d enters the body as %v%v and leaves it as %v%v: kiln's run-time loop keeps carried values' dtype and shape",
				k, in.DType, in.Shape, o.DType, o.Shape)
		}
	}
	g := imp.g
	loop := g.Loop(spec, outer...)
	for k := range nCarried + nScan {
		if c.used(k) {
			c.bindValue(k, &value{name: c.n.Outputs[k], node: g.LoopOutput(loop, k)})
		}
	}
	return g.Err()
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
