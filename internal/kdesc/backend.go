package kdesc

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// What a GPU backend is, seen from here: an emitter, a function writing
// the kernel of a descriptor (ptx.Emit, msl.Emit). Lower runs a node
// through Describe and the emitter; SupportedOps asks the emitter which
// ops it covers, so a backend's list of ops is its emitter's, never a
// second list kept by hand.

// Lower describes n (Describe) and writes its kernel with emit: a
// backend's whole node → kernel step. ins are the nodes the kernel reads
// after out.
func Lower[K any](name string, n *graph.Node, emit func(Desc) (K, error)) (k K, ins []*graph.Node, err error) {
	d, ins, err := Describe(name, n)
	if err != nil {
		return k, nil, err
	}
	k, err = emit(d)
	return k, ins, err
}

// SupportedOps lists, in op order, the ops whose nodes a backend lowers:
// those whose descriptor kind handles accepts and, for a single
// elementwise op, whose Probe chain emit writes (the emitter has a
// formula for it). Shape-dependent limits (a dtype a kernel lacks, a
// size past its grid) show only when a node is lowered.
func SupportedOps[K any](handles func(Kind) bool, emit func(Desc) (K, error)) []graph.Op {
	var out []graph.Op
	for _, op := range append(graph.Ops(), graph.FusedOps()...) {
		k := KindOf(op)
		if k == KindNone || !handles(k) {
			continue
		}
		if op.IsElementwise() {
			if _, err := emit(Probe(op)); err != nil {
				continue
			}
		}
		out = append(out, op)
	}
	return out
}

// Probe is a one-instruction chain of the elementwise op over one
// element: Bool operands where op takes only Bool (Not, And, Or, Where's
// condition), F32 elsewhere. An emitter that writes it has a formula for
// op.
func Probe(op graph.Op) *Elementwise {
	in, out := tensor.F32, tensor.F32
	switch {
	case op == graph.OpNot || op == graph.OpAnd || op == graph.OpOr:
		in, out = tensor.Bool, tensor.Bool
	case op.IsCompare():
		out = tensor.Bool
	}
	dts := []tensor.DType{in}
	switch {
	case op.IsBinary():
		dts = []tensor.DType{in, in}
	case op == graph.OpWhere:
		dts = []tensor.DType{tensor.Bool, in, in}
	}
	e := &Elementwise{Name: "probe_" + op.String(), Shape: []int{1}, Out: out, Body: []Instr{{Op: op, DType: out}}}
	for i, dt := range dts {
		e.Inputs = append(e.Inputs, Operand{DType: dt, Strides: []int{1}})
		e.Body[0].Args = append(e.Body[0].Args, i)
	}
	return e
}
