package testmodels

import (
	"fmt"
	"math/rand/v2"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// RandomFeeds makes a deterministic tensor for every input and param of g,
// by name, from seed. Floats are uniform in [-1, 1), except values used as
// a BatchNorm variance, which are in [0.5, 1.5) so the square root stays
// real. Integers are in [-8, 8), except indices (graph.IndexedDim), which
// are valid positions of the dims they index. Bools are fair coin flips.
func RandomFeeds(g *graph.Graph, seed uint64) (map[string]tensor.Tensor, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	positive := map[*graph.Node]bool{}
	indexLimit := map[*graph.Node]int{} // smallest gathered axis the node indexes
	for _, n := range g.Nodes {
		switch n.Op {
		case graph.OpBatchNorm:
			if len(n.Inputs) == 5 {
				positive[n.Inputs[4]] = true
			}
		}
		if d, ok := graph.IndexedDim(n, 1); ok {
			if lim, seen := indexLimit[n.Inputs[1]]; !seen || d < lim {
				indexLimit[n.Inputs[1]] = d
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 0x6b696c6e))
	feeds := map[string]tensor.Tensor{}
	for _, n := range append(append([]*graph.Node{}, g.Inputs()...), g.Params()...) {
		v := make([]float64, n.Shape.NumElements())
		for i := range v {
			switch {
			case n.DType == tensor.Bool:
				v[i] = float64(r.IntN(2))
			case n.DType.IsInt():
				lim, isIndex := indexLimit[n]
				switch {
				case isIndex && lim > 0:
					v[i] = float64(r.IntN(lim))
				case n.DType == tensor.U8:
					v[i] = float64(r.IntN(16))
				default:
					v[i] = float64(r.IntN(16) - 8)
				}
			case positive[n]:
				v[i] = 0.5 + r.Float64()
			default:
				v[i] = 2*r.Float64() - 1
			}
		}
		t, err := tensor.FromFloat64s(n.DType, n.Shape, v)
		if err != nil {
			return nil, fmt.Errorf("testmodels: feed %q: %w", n.Name, err)
		}
		feeds[n.Name] = t
	}
	return feeds, nil
}
