package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Routed is a mixture-of-experts kernel: T tokens, each routed to K of E
// experts by ids [T, K] (IDs: I32 or I64), whose weights are stacked
// [E, ...]. GroupedMatMul multiplies rows of In columns (one per token,
// or one per slot when PerSlot) by the routed [In, Out] matrices into
// [T, K, Out]; MoE runs SwiGLU experts [In=H → Hidden=F → Out=H] and sums
// each token's K results weighted by its routing weights into [T, H].
type Routed struct {
	Name    string
	Op      graph.Op
	DType   tensor.DType
	IDs     tensor.DType
	T, K, E int
	In, Out int
	Hidden  int  // MoE's expert width F (0 for GroupedMatMul)
	PerSlot bool // GroupedMatMul: x is [T, K, In]
}

// RoutedOf describes a GroupedMatMul or MoE node.
func RoutedOf(name string, n *graph.Node) (*Routed, error) {
	in := n.Inputs
	switch n.Op {
	case graph.OpGroupedMatMul:
		w, ids := in[1].Shape, in[2]
		return &Routed{Name: name, Op: n.Op, DType: n.DType, IDs: ids.DType, T: ids.Shape[0], K: ids.Shape[1], E: w[0],
			In: w[1], Out: w[2], PerSlot: in[0].Shape.Rank() == 3}, nil
	case graph.OpMoE:
		gate, ids := in[3].Shape, in[1]
		return &Routed{Name: name, Op: n.Op, DType: n.DType, IDs: ids.DType, T: ids.Shape[0], K: ids.Shape[1], E: gate[0],
			In: gate[1], Out: gate[1], Hidden: gate[2]}, nil
	}
	return nil, fmt.Errorf("%s: %v is not a routed op", name, n.Op)
}
