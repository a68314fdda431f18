package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Run-time Scans. A Scan's length is always known at import: it is the
// extent of its scan inputs along their axes, and every dim of a kiln
// graph is static (a model's symbolic dims are fixed when it is
// imported). So a Scan never waits on a run-time count; it is unrolled
// (flowScan) unless that would import more than maxUnrolled nodes, and
// then it runs as a graph.OpLoop with the length as its trip count and
// bound (the Loop's machinery: the body imported once, planned into the
// parent's arena, run by the executor). Inside that body, iteration t
// takes element t (or length-1-t, for a reversed input) of every scan
// input with a Gather on the iteration number; the loop stacks the scan
// outputs along axis 0 in iteration order, which is then reversed and
// moved to the output's axis where the Scan asks.

// scanSpec is a Scan's layout after flowScan has checked its attributes.
type scanSpec struct {
	nState, nScanIn, nScanOut int
	length                    int
	inAxes, inDirs            []int // normalised axes
	outAxes, outDirs          []int // as given (normalised per output)
}

// runTimeScan imports the Scan of c as a graph.OpLoop over its body.
func (c *ctx) runTimeScan(body *GraphProto, sp scanSpec) error {
	imp := c.imp
	var states, xs []*graph.Node
	for k := range sp.nState {
		if c.ins[k] == nil {
			return fmt.Errorf("state input %d is empty", k)
		}
		states = append(states, imp.materialise(c.ins[k]))
	}
	for j := range sp.nScanIn {
		xs = append(xs, imp.materialise(c.ins[sp.nState+j]))
	}
	last, err := tensor.FromI64(tensor.Shape{}, []int64{int64(sp.length - 1)})
	if err != nil {
		return err
	}
	bind := func(bg *graph.Graph, lead []*value, xin []*graph.Node) []*value {
		ins := lead[2:] // the states, carried
		for j, x := range xin {
			idx := lead[0].node // the iteration number, an I64 scalar
			if sp.inDirs[j] == 1 {
				idx = bg.Sub(bg.Constant(last), idx)
			}
			ins = append(ins, &value{name: fmt.Sprintf("scan%d", j), node: bg.Gather(x, idx, sp.inAxes[j])})
		}
		return ins
	}
	bg, captured, outs, err := c.importBody(body, "body", states, xs, bind)
	if err != nil || outs == nil {
		return err
	}
	for k, in := range states {
		if o := outs[k]; in.DType != o.DType || !in.Shape.Equal(o.Shape) {
			return unsupportedf("state %d enters the body as %v%v and leaves it as %v%v: kiln's shapes are static, so a Scan run as a loop keeps its states' dtype and shape",
				k, in.DType, in.Shape, o.DType, o.Shape)
		}
	}
	yes, err := tensor.FromBool(tensor.Shape{}, []bool{true})
	if err != nil {
		return err
	}
	bg.Output(append([]*graph.Node{bg.Constant(yes)}, outs...)...)
	if err := bg.Err(); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	trip, err := tensor.FromI64(tensor.Shape{}, []int64{int64(sp.length)})
	if err != nil {
		return err
	}
	g := imp.g
	spec := &graph.LoopSpec{Body: bg, HasTrip: true, Carried: sp.nState, Bound: max(sp.length, 1)}
	loop := g.Loop(spec, append(append([]*graph.Node{g.Constant(trip)}, states...), captured...)...)
	for k := range sp.nState {
		if c.used(k) {
			c.bindValue(k, &value{name: c.n.Outputs[k], node: g.LoopOutput(loop, k)})
		}
	}
	for k := range sp.nScanOut {
		if !c.used(sp.nState + k) {
			continue
		}
		y := g.LoopOutput(loop, sp.nState+k) // [length, element...], in iteration order
		if sp.outDirs[k] == 1 {
			y = g.Slice(y, graph.SliceSpec{Axes: []int{0}, Starts: []int{-1}, Ends: []int{-(sp.length + 1)}, Steps: []int{-1}})
		}
		ax, err := axis(sp.outAxes[k], y.Shape.Rank())
		if err != nil {
			return fmt.Errorf("scan_output_axes: %w", err)
		}
		if ax != 0 { // move the stacked axis to ax
			perm := make([]int, 0, y.Shape.Rank())
			for d := 1; d <= ax; d++ {
				perm = append(perm, d)
			}
			perm = append(perm, 0)
			for d := ax + 1; d < y.Shape.Rank(); d++ {
				perm = append(perm, d)
			}
			y = g.Transpose(y, perm...)
		}
		c.bindValue(sp.nState+k, &value{name: c.n.Outputs[sp.nState+k], node: y})
	}
	return g.Err()
}
