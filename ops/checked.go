package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// sizeChecked wraps k so that tensors whose byte length does not match the
// node's dtype and shape give an error instead of an index panic.
func sizeChecked(n *graph.Node, k Kernel) Kernel {
	want := make([]int, len(n.Inputs))
	for i, in := range n.Inputs {
		want[i] = in.Shape.NumElements() * in.DType.Size()
	}
	outWant := n.Shape.NumElements() * n.DType.Size()
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if len(ins) != len(want) {
			return fmt.Errorf("%v: got %d inputs, want %d", n.Op, len(ins), len(want))
		}
		for i, in := range ins {
			if len(in.Data) != want[i] {
				return fmt.Errorf("%v: input %d has %d bytes, want %d", n.Op, i, len(in.Data), want[i])
			}
		}
		if len(out.Data) != outWant {
			return fmt.Errorf("%v: output has %d bytes, want %d", n.Op, len(out.Data), outWant)
		}
		return k(ins, out)
	}
}
