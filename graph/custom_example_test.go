package graph_test

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// A custom op with a CPU implementation: kiln.Compile for the CPU runs
// its function as the node's kernel. Give it a CustomPTX as well and the
// same graph compiles for CUDA.
func ExampleGraph_Custom() {
	scaledSquare := &graph.CustomSpec{
		Name:  "ScaledSquare",
		Infer: graph.SameAsInput(0),
		CPU: func(out tensor.Tensor, ins ...tensor.Tensor) error {
			if ins[0].DType != tensor.F32 {
				return fmt.Errorf("f32 only, got %v", ins[0].DType)
			}
			x, y := tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](out.Data)
			for i := range y {
				y[i] = 0.5 * x[i] * x[i]
			}
			return nil
		},
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 4)
	g.Output(g.Relu(g.Custom(scaledSquare, g.Neg(x))))
	fmt.Print(graph.Dump(g))
	// Output:
	// graph: 4 nodes, 1 inputs, 0 params, 1 outputs
	//   %0 x = Input() f32[4]
	//   %1 neg_1 = Neg(x) f32[4]
	//   %2 custom_2 = Custom(neg_1) f32[4] {Custom:ScaledSquare}
	//   %3 relu_3 = Relu(custom_2) f32[4]
	//   output output0 = relu_3
}
