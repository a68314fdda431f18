package metal

import "github.com/kilnml/kiln/graph"

// NewOpGraphs lends the lowering tests' graphs of the newer ops (with
// the ops each must lower) to the device tests.
func NewOpGraphs() map[string]func(g *graph.Graph) {
	out := map[string]func(g *graph.Graph){}
	for name, e := range newOpGraphs() {
		out[name] = e.build
	}
	return out
}
