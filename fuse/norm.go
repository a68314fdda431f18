package fuse

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// residualNorms fuses a residual Add into the LayerNorm or RMSNorm that
// reads it: norm(x + r) becomes one AddLayerNorm / AddRMSNorm row kernel,
// where x has the norm's shape and r broadcasts to it. The sum must have
// no other reader (in a pre-norm block it is also the next residual, a
// near miss).
func residualNorms(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		if n.Op != graph.OpLayerNorm && n.Op != graph.OpRMSNorm {
			return false, nil
		}
		a := n.Inputs[0]
		if a.Op != graph.OpAdd {
			return false, nil
		}
		if ok, why := v.chainLink(a, n, nil); !ok {
			log.miss("%s: %s", names(a, n), why)
			return false, nil
		}
		x, r := a.Inputs[0], a.Inputs[1]
		if !x.Shape.Equal(a.Shape) {
			x, r = r, x
		}
		if s, err := tensor.Broadcast(x.Shape, r.Shape); err != nil || !s.Equal(x.Shape) || !x.DType.IsFloat() {
			log.miss("%s: operands %v and %v", names(a, n), x.Shape, r.Shape)
			return false, nil
		}
		op := graph.OpAddLayerNorm
		if n.Op == graph.OpRMSNorm {
			op = graph.OpAddRMSNorm
		}
		ins := append([]*graph.Node{x, r}, n.Inputs[1:]...)
		f, err := g.Insert(op, n.Attrs, ins...)
		if err != nil {
			log.miss("%s: %v", names(a, n), err)
			return false, nil
		}
		if err := replace(g, n, f); err != nil {
			return false, err
		}
		log.fused("%s → %s", names(a, n), f.Name)
		return true, nil
	})
}
