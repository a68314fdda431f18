package kdesc

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Operand is one input of a fused elementwise kernel.
type Operand struct {
	DType tensor.DType
	// Strides are element strides per output dim (len(Shape) entries); 0
	// broadcasts. tensor.BroadcastStrides computes them.
	Strides []int
}

// Instr is one op of a fused chain. Args number values: 0..len(Inputs)-1
// are the kernel inputs, len(Inputs)+j the result of Body[j].
type Instr struct {
	Op    graph.Op
	Args  []int
	DType tensor.DType // the dtype of the op's result (a Cast's target)
	Attrs graph.Attrs  // LeakyRelu Alpha, Clip Min/Max
}

// Elementwise is a fused chain evaluated once per output element: inputs
// loaded with broadcasting, the last instruction's value stored.
type Elementwise struct {
	Name   string
	Shape  []int
	Inputs []Operand
	Body   []Instr
	Out    tensor.DType
}

// FusedOf turns a FusedElementwise node's program into a chain: node
// inputs are values 0..k-1, instruction j is value k+j.
func FusedOf(name string, n *graph.Node) (*Elementwise, error) {
	e := &Elementwise{Name: name, Shape: n.Shape, Out: n.DType}
	for _, in := range n.Inputs {
		o, err := operand(in, n.Shape)
		if err != nil {
			return nil, err
		}
		e.Inputs = append(e.Inputs, o)
	}
	k := len(n.Inputs)
	for _, in := range n.Attrs.Program {
		args := make([]int, len(in.Args))
		for i, r := range in.Args {
			args[i] = r.Index
			if r.Instr {
				args[i] += k
			}
		}
		dt := in.DType
		if in.Op == graph.OpCast {
			dt = in.To
		}
		e.Body = append(e.Body, Instr{Op: in.Op, Args: args, DType: dt, Attrs: in.Attrs()})
	}
	return e, nil
}

// ElementwiseOf describes one elementwise node as a one-instruction
// chain. An input the node reads twice (x·x) is one operand: ins are the
// node's distinct inputs in order, the kernel's operands after out.
func ElementwiseOf(name string, n *graph.Node) (e *Elementwise, ins []*graph.Node, err error) {
	if !n.Op.IsElementwise() {
		return nil, nil, fmt.Errorf("%s: %v is not elementwise", name, n.Op)
	}
	e = &Elementwise{Name: name, Shape: n.Shape, Out: n.DType}
	args := make([]int, len(n.Inputs))
	for i, in := range n.Inputs {
		j := slices.Index(ins, in)
		if j < 0 {
			o, err := operand(in, n.Shape)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			j, ins = len(ins), append(ins, in)
			e.Inputs = append(e.Inputs, o)
		}
		args[i] = j
	}
	e.Body = []Instr{{Op: n.Op, Args: args, DType: n.DType, Attrs: n.Attrs}}
	return e, ins, nil
}

// operand is in read, broadcast, at the elements of shape.
func operand(in *graph.Node, shape tensor.Shape) (Operand, error) {
	if s, err := tensor.Broadcast(in.Shape, shape); err != nil || !s.Equal(shape) {
		return Operand{}, fmt.Errorf("input %s does not broadcast to %v", in, shape)
	}
	return Operand{DType: in.DType, Strides: tensor.BroadcastStrides(in.Shape, shape)}, nil
}
