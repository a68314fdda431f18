package graph

import (
	"errors"
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// LoopSpec is a loop whose trip count or condition is known only at run
// time (ONNX Loop): a body graph run once per iteration. Build nodes of it
// with Graph.Loop and read its results with Graph.LoopOutput.
//
// The Loop node's inputs are, in order: the trip count (an I64 scalar or
// one-element tensor, if HasTrip), the initial condition (a one-element
// Bool, if HasCond), the Carried loop-carried values, then the values the
// body captures from the enclosing graph (read-only, the same every
// iteration). The body's inputs mirror them: the iteration number (I64
// scalar, from 0), the condition (Bool scalar), the carried values (each
// with its initial value's dtype and shape), the captured values. The
// body's outputs are the condition for the next iteration (one-element
// Bool), the carried values' next values (same dtypes and shapes), then
// any number of scan outputs, one row per iteration.
//
// An iteration runs while the iteration number is below the trip count
// (when there is one) and the condition holds. Bound, when positive, is
// the most iterations a run may take: each scan output has Bound rows
// (rows past the iterations run are zero), and a run that would start
// iteration Bound+1 fails with an error. A body with scan outputs needs a
// Bound. Results: the carried values' final values, the scan outputs
// [Bound, ...], and last the number of iterations run (I64 scalar), which
// says how many scan rows are real.
//
// A spec is shared by every node and graph copy made from it and must not
// change after its first use; the body must have no Params (weights it
// reads are captured).
type LoopSpec struct {
	Body    *Graph
	HasTrip bool // the node's first input is the trip count
	HasCond bool // the node's next input is the initial condition
	Carried int  // number of loop-carried values
	Bound   int  // most iterations a run may take; 0: unbounded (no scan outputs allowed)
}

// LoopResult is the dtype and shape of one result of a Loop.
type LoopResult struct {
	DType tensor.DType
	Shape tensor.Shape
}

// loopAlign is the alignment of each result in a Loop node's packed value
// (the planner's alignment, so every result starts where a kernel may
// load vectors).
const loopAlign = 64

// Lead is how many of the node's inputs precede the carried values (the
// trip count and the condition, where present).
func (s *LoopSpec) Lead() int {
	n := 0
	if s.HasTrip {
		n++
	}
	if s.HasCond {
		n++
	}
	return n
}

// Scans is the number of scan outputs of the body.
func (s *LoopSpec) Scans() int { return len(s.Body.Outputs()) - 1 - s.Carried }

// Results lists the loop's results: the carried values, the scan outputs
// (with their Bound rows) and the iteration count.
func (s *LoopSpec) Results() []LoopResult {
	outs := s.Body.Outputs()
	var r []LoopResult
	for _, o := range outs[1 : 1+s.Carried] {
		r = append(r, LoopResult{o.DType, o.Shape.Clone()})
	}
	for _, o := range outs[1+s.Carried:] {
		r = append(r, LoopResult{o.DType, append(tensor.Shape{s.Bound}, o.Shape...)})
	}
	return append(r, LoopResult{tensor.I64, tensor.Shape{}})
}

// Layout gives the byte offset of every result in the Loop node's packed
// value (each aligned to 64 bytes) and the value's total size.
func (s *LoopSpec) Layout() (offsets []int, total int) {
	for _, r := range s.Results() {
		offsets = append(offsets, total)
		total += (r.Shape.NumElements()*r.DType.Size() + loopAlign - 1) &^ (loopAlign - 1)
	}
	return offsets, total
}

// Loop adds a node running spec's body over ins (see LoopSpec for their
// order). Its value packs every result; read them with LoopOutput.
func (g *Graph) Loop(spec *LoopSpec, ins ...*Node) *Node {
	return g.add(OpLoop, Attrs{Loop: spec}, ins...)
}

// LoopOutput reads result i of a Loop node: carried value i for i below
// the spec's Carried, then the scan outputs, then the iteration count.
func (g *Graph) LoopOutput(loop *Node, i int) *Node {
	return g.add(OpLoopOutput, Attrs{Index: i}, loop)
}

// inferLoop checks the spec, its body and the node's inputs against each
// other; the result is the packed value, U8 [bytes of every result].
func inferLoop(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	s := a.Loop
	if s == nil || s.Body == nil {
		return 0, nil, errors.New("no LoopSpec with a body (build loops with Graph.Loop)")
	}
	if err := Verify(s.Body); err != nil {
		return 0, nil, fmt.Errorf("body: %w", err)
	}
	body := s.Body
	lead := s.Lead()
	nCap := len(ins) - lead - s.Carried
	switch {
	case s.Carried < 0 || nCap < 0:
		return 0, nil, fmt.Errorf("%d inputs, want %d before the captured values (trip count, condition, %d carried)", len(ins), lead+s.Carried, s.Carried)
	case len(body.Inputs()) != 2+s.Carried+nCap:
		return 0, nil, fmt.Errorf("the body has %d inputs, want %d (iteration, condition, %d carried, %d captured)", len(body.Inputs()), 2+s.Carried+nCap, s.Carried, nCap)
	case len(body.Outputs()) < 1+s.Carried:
		return 0, nil, fmt.Errorf("the body has %d outputs, want at least %d (condition, %d carried)", len(body.Outputs()), 1+s.Carried, s.Carried)
	case len(body.Params()) > 0:
		return 0, nil, fmt.Errorf("the body has param %q: a body reads weights as captured inputs", body.Params()[0].Name)
	case s.Bound < 0:
		return 0, nil, fmt.Errorf("bound %d is negative", s.Bound)
	case s.Bound == 0 && s.Scans() > 0:
		return 0, nil, fmt.Errorf("the body has %d scan outputs but the loop has no bound on its iterations", s.Scans())
	case !s.HasTrip && !s.HasCond && s.Bound == 0:
		return 0, nil, errors.New("neither a trip count, a condition nor a bound: the loop never ends")
	}
	k := 0
	if s.HasTrip {
		if t := ins[k]; t.DType != tensor.I64 || t.Shape.NumElements() != 1 {
			return 0, nil, fmt.Errorf("trip count is %v%v, want one I64", t.DType, t.Shape)
		}
		k++
	}
	if s.HasCond {
		if c := ins[k]; c.DType != tensor.Bool || c.Shape.NumElements() != 1 {
			return 0, nil, fmt.Errorf("condition is %v%v, want one Bool", c.DType, c.Shape)
		}
	}
	bin, bout := body.Inputs(), body.Outputs()
	if !isScalarOf(bin[0], tensor.I64) || !isScalarOf(bin[1], tensor.Bool) {
		return 0, nil, fmt.Errorf("body inputs 0 and 1 are %v and %v, want an I64 and a Bool scalar", bin[0], bin[1])
	}
	if o := bout[0]; o.DType != tensor.Bool || o.Shape.NumElements() != 1 {
		return 0, nil, fmt.Errorf("body output 0 (the condition) is %v%v, want one Bool", o.DType, o.Shape)
	}
	for j := range s.Carried + nCap {
		in, b := ins[lead+j], bin[2+j]
		if in.DType != b.DType || !in.Shape.Equal(b.Shape) {
			return 0, nil, fmt.Errorf("input %d is %v%v but body input %d (%s) is %v%v", lead+j, in.DType, in.Shape, 2+j, b.Name, b.DType, b.Shape)
		}
		if j < s.Carried {
			if o := bout[1+j]; o.DType != b.DType || !o.Shape.Equal(b.Shape) {
				return 0, nil, fmt.Errorf("carried value %d enters the body as %v%v and leaves it as %v%v: loop-carried values keep their dtype and shape", j, b.DType, b.Shape, o.DType, o.Shape)
			}
		}
	}
	_, total := s.Layout()
	return tensor.U8, tensor.Shape{total}, nil
}

func isScalarOf(n *Node, dt tensor.DType) bool { return n.DType == dt && n.Shape.Rank() == 0 }

// inferLoopOutput is result Attrs.Index of its OpLoop input.
func inferLoopOutput(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	l := ins[0]
	if l.Op != OpLoop || l.Attrs.Loop == nil {
		return 0, nil, fmt.Errorf("input is %v, want a Loop node", l.Op)
	}
	r := l.Attrs.Loop.Results()
	if a.Index < 0 || a.Index >= len(r) {
		return 0, nil, fmt.Errorf("result %d of a loop with %d results", a.Index, len(r))
	}
	return r[a.Index].DType, r[a.Index].Shape.Clone(), nil
}
