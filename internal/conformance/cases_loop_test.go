package conformance

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// loopBody is acc ← acc·0.5 + k over acc [3, 40] while max(acc) > -9
// (always, for inputs in [-3, 3)), with k captured, scanning acc and the
// iteration number.
func loopBody() *graph.Graph {
	b := graph.New()
	it := b.Input("iter", tensor.I64)
	b.Input("cond", tensor.Bool)
	acc := b.Input("acc", tensor.F32, 3, 40)
	k := b.Input("k", tensor.F32, 3, 40)
	next := b.Add(b.Mul(acc, b.Scalar(0.5)), k)
	b.Output(b.Greater(b.ReduceMax(next, false), b.Scalar(-9)), next, next, it)
	return b
}

// loopCases run a Loop with a run-time trip count (an I64 input in
// [0, 6], bound 6) and one whose trip count is a constant under a
// run-time condition, and read every result.
func loopCases() []opCase {
	loop := func(b *builder, cond bool) *graph.Node {
		if cond {
			t, _ := tensor.FromI64(tensor.Shape{}, []int64{4})
			c, _ := tensor.FromBool(tensor.Shape{}, []bool{true})
			spec := &graph.LoopSpec{Body: loopBody(), HasTrip: true, HasCond: true, Carried: 1, Bound: 4}
			return b.g.Loop(spec, b.g.Constant(t), b.g.Constant(c), b.x(3, 40), b.x(3, 40))
		}
		spec := &graph.LoopSpec{Body: loopBody(), HasTrip: true, Carried: 1, Bound: 6}
		return b.g.Loop(spec, b.steps(tensor.I64, 0, 6, 1), b.x(3, 40), b.x(3, 40))
	}
	results := func(b *builder, l *graph.Node) {
		for i := range 4 {
			b.out(b.g.LoopOutput(l, i))
		}
	}
	return []opCase{
		{graph.OpLoop, "run-time trip count", func(b *builder) { b.out(loop(b, false)) }},
		{graph.OpLoop, "trip count and condition", func(b *builder) { b.out(loop(b, true)) }},
		{graph.OpLoopOutput, "every result", func(b *builder) { results(b, loop(b, false)) }},
	}
}
