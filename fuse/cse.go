package fuse

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
)

// commonSubexpressions merges nodes that compute the same thing: the same
// op with the same attributes on the same inputs, and Constants with the
// same dtype, shape and bytes. Inputs and params are never merged, nor is
// a node that is a graph output replaced (outputs keep their nodes).
func commonSubexpressions(g *graph.Graph, log *Log) error {
	v, err := newView(g)
	if err != nil {
		return err
	}
	seen := map[string]*graph.Node{}
	merged := 0
	for _, n := range v.order {
		if n.Op == graph.OpInput || n.Op == graph.OpParam || !v.live[n.ID] {
			continue
		}
		k := cseKey(n)
		first, ok := seen[k]
		if !ok {
			seen[k] = n
			continue
		}
		if v.out[n.ID] {
			log.miss("%s duplicates %s but is a graph output", n.Name, first.Name)
			continue
		}
		if err := replace(g, n, first); err != nil {
			return err
		}
		merged++
		if n.Op != graph.OpConstant {
			log.fused("%s merged into %s", n.Name, first.Name)
		}
	}
	if merged > 0 {
		log.fused("%d duplicate nodes merged", merged)
	}
	return nil
}

// cseKey identifies what a node computes. Inputs are keyed by node ID:
// the schedule visits inputs first, so they are already canonical.
func cseKey(n *graph.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%v|%v|", n.Op, n.DType, n.Shape)
	if n.Op == graph.OpConstant {
		b.Write(n.Value.Data)
		return b.String()
	}
	for _, in := range n.Inputs {
		fmt.Fprintf(&b, "%d,", in.ID)
	}
	fmt.Fprintf(&b, "|%#v", n.Attrs)
	return b.String()
}
