package fuse

import (
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
)

// elementwiseRegions grows, from each elementwise node that nothing can
// absorb (schedule order reversed, so roots come first), the largest
// region of elementwise nodes whose every consumer is in the region, are
// not outputs and have the root's shape, and replaces a region of two or
// more ops by one FusedElementwise node: one step that reads its inputs
// once (broadcast operands included) and writes only the root.
func elementwiseRegions(g *graph.Graph, log *Log) error {
	for {
		v, err := newView(g)
		if err != nil {
			return err
		}
		pos := make(map[*graph.Node]int, len(v.order))
		for i, n := range v.order {
			pos[n] = i
		}
		done := true
		for i := len(v.order) - 1; i >= 0; i-- {
			n := v.order[i]
			if !v.live[n.ID] || !n.Op.IsElementwise() || !ops.FusableElementwise(n) {
				continue
			}
			region := growRegion(v, n, log)
			if len(region) < 2 {
				continue
			}
			slices.SortFunc(region, func(a, b *graph.Node) int { return pos[a] - pos[b] })
			f, err := buildRegion(g, region)
			if err != nil {
				log.miss("%s: %v", names(region...), err)
				continue
			}
			if err := replace(g, n, f); err != nil {
				return err
			}
			log.fused("%s → %s (%d ops, %d inputs)", names(region...), f.Name, len(region), len(f.Inputs))
			done = false
			break
		}
		if done {
			return nil
		}
	}
}

// growRegion collects root and, to a fixed point, every fusable input all
// of whose consumers are already in the region, by the shared predicate.
// Inputs left out for a reason other than not being elementwise are near
// misses.
func growRegion(v *view, root *graph.Node, log *Log) []*graph.Node {
	in := map[*graph.Node]bool{root: true}
	region := []*graph.Node{root}
	within := func(u *graph.Node) bool { return in[u] }
	for grown := true; grown; {
		grown = false
		for i := 0; i < len(region); i++ {
			for _, x := range region[i].Inputs {
				if in[x] || !x.Op.IsElementwise() || !ops.FusableElementwise(x) {
					continue
				}
				if ok, _ := v.absorbable(x, within, root.Shape); ok {
					in[x] = true
					region = append(region, x)
					grown = true
				}
			}
		}
	}
	if len(region) > 1 {
		for _, m := range region {
			for _, x := range m.Inputs {
				if in[x] || !x.Op.IsElementwise() {
					continue
				}
				if !ops.FusableElementwise(x) {
					log.miss("%s + %s: %v on %v is not fusable", x.Name, m.Name, x.Op, x.Inputs[0].DType)
					continue
				}
				_, why := v.absorbable(x, within, root.Shape)
				log.miss("%s + %s: %s", x.Name, m.Name, why)
			}
		}
	}
	return region
}

// buildRegion inserts the FusedElementwise node computing the region
// (sorted in schedule order, root last). An input with the root's shape
// and dtype goes first, so the planner may let the step write over it.
func buildRegion(g *graph.Graph, region []*graph.Node) (*graph.Node, error) {
	root := region[len(region)-1]
	idx := map[*graph.Node]int{}
	for i, m := range region {
		idx[m] = i
	}
	var leaves []*graph.Node
	for _, m := range region {
		for _, x := range m.Inputs {
			if _, ok := idx[x]; !ok && !slices.Contains(leaves, x) {
				leaves = append(leaves, x)
			}
		}
	}
	for i, x := range leaves {
		if x.DType == root.DType && x.Shape.Equal(root.Shape) && !x.Op.IsSource() {
			leaves[0], leaves[i] = leaves[i], leaves[0]
			break
		}
	}
	prog := make([]graph.ElemInstr, len(region))
	for i, m := range region {
		args := make([]graph.ElemRef, len(m.Inputs))
		for j, x := range m.Inputs {
			if k, ok := idx[x]; ok {
				args[j] = graph.ElemRef{Instr: true, Index: k}
			} else {
				args[j] = graph.ElemRef{Index: slices.Index(leaves, x)}
			}
		}
		prog[i] = graph.ElemInstrOf(m, args...)
	}
	return g.Insert(graph.OpFusedElementwise, graph.Attrs{Program: prog}, leaves...)
}
