package ops

import "github.com/kilnml/kiln/graph"

// InPlace reports whether n's kernel may write its output over input 0:
// the catalogue's flag, false for an op without a kernel. It is what the
// session passes the planner as plan.Options.InPlace (plan does not import
// ops).
func InPlace(n *graph.Node) bool {
	e, err := Lookup(n.Op)
	return err == nil && e.InPlace
}
