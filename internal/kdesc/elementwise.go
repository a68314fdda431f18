package kdesc

import (
	"fmt"

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
		if s, err := tensor.Broadcast(in.Shape, n.Shape); err != nil || !s.Equal(n.Shape) {
			return nil, fmt.Errorf("input %s does not broadcast to %v", in, n.Shape)
		}
		e.Inputs = append(e.Inputs, Operand{DType: in.DType, Strides: tensor.BroadcastStrides(in.Shape, n.Shape)})
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
