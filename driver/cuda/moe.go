package cuda

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// MoE expert residency (issue 26, part 4). An OpMoE layer whose expert
// weights (gate, up, down: [E, ...]) are F32 params read by that layer
// alone can run split between the GPU and the host: the resident
// experts' weights live in device memory, compacted to [Resident, ...]
// with an expert → row remap, and their slots run there; the host keeps
// every expert's weights and computes the other slots' weighted sum
// (ops.MoEHost), which the device adds to its own. Such layers' expert
// params are left out of the program's weight region and live in
// buffers of their own, placed from the masks (exec.MoEPlacer's
// SetMoEResident) before the next run and again when a mask or a weight
// changes, never per run:
//
//   - a layer with every expert resident (no mask, today's path) runs
//     its one kernel over full [E, ...] weights, shared by the program's
//     clones and allocated only when some clone runs the layer that way;
//   - a split layer owns compact weights of its resident experts only
//     (none for an all-host mask), so a model whose experts do not all
//     fit in device memory runs when the masks are set before its first
//     run.
//
// A split layer's forward: the layer's inputs (tokens, ids, routing
// weights) are read back; the device kernel over the resident experts is
// queued (adding zeros); the host computes the non-resident slots while
// the GPU runs it; the host's sum is uploaded and added on the device by
// a second kernel. Every layer's ids are also copied, on the device, into
// a buffer of their own after it runs, so kiln's top-k capture and
// residency stats read them back when asked. CUDA graphs cannot hold the
// host step: NewGraphModel refuses a program with a split layer.

// moeLayer is a lowered OpMoE step's residency plan, device independent.
type moeLayer struct {
	step    int // index in lowered.steps
	node    *graph.Node
	why     string         // why the layer cannot split; "" when it can
	experts [3]*graph.Node // gate, up, down params (splittable layers)
	split   *ptx.Kernel    // the kernel over resident experts (remap, addend)
	add     *ptx.Kernel    // out += addend
}

// Gate, up and down are the node's inputs 3, 4 and 5.
const moeFirstExpert = 3

// weightCut is the weight region with the splittable layers' expert
// params cut out: removed bytes [at[i], at[i]+gap[i]) of the plan's
// region, bytes the compacted region's size.
type weightCut struct {
	at, gap []int
	bytes   int
}

// offset maps a plan offset in the weight region (outside every cut) to
// the compacted region.
func (w *weightCut) offset(o int) int {
	s := 0
	for i, a := range w.at {
		if a < o {
			s += w.gap[i]
		}
	}
	return o - s
}

// planMoE finds the OpMoE steps of lw, decides which can split, emits
// their extra kernels (appended to ks) and cuts their expert params out
// of the weight region.
func planMoE(g *graph.Graph, p *plan.Plan, lw *lowered, ks []*ptx.Kernel) ([]*ptx.Kernel, error) {
	uses := map[*graph.Node]int{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			uses[in]++
		}
	}
	for _, o := range g.Outputs() {
		uses[o]++
	}
	var cut []*graph.Node
	for i, st := range lw.steps {
		n := st.node
		if n.Op != graph.OpMoE || st.kernel == nil {
			continue
		}
		l := moeLayer{step: i, node: n, why: moeWhy(n, uses)}
		if l.why == "" {
			d, err := kdesc.RoutedOf(st.kernel.Name+"_split", n)
			if err != nil {
				return nil, err
			}
			if l.split, err = ptx.EmitRouted(&ptx.Routed{Routed: *d, Resident: d.E}); err != nil {
				return nil, fmt.Errorf("cuda: lowering %s's residency split: %w", n, err)
			}
			if l.add, err = addKernel(st.kernel.Name+"_addend", n); err != nil {
				return nil, err
			}
			ks = append(ks, l.split, l.add)
			copy(l.experts[:], n.Inputs[moeFirstExpert:])
			cut = append(cut, l.experts[:]...)
		}
		lw.moe = append(lw.moe, l)
	}
	lw.cut = cutWeights(p, cut)
	return ks, nil
}

// moeWhy says why an OpMoE node cannot run split, or "".
func moeWhy(n *graph.Node, uses map[*graph.Node]int) string {
	if n.DType != tensor.F32 {
		return fmt.Sprintf("the host part computes F32 only, the layer is %v", n.DType)
	}
	for _, w := range n.Inputs[moeFirstExpert:] {
		if w.Op != graph.OpParam {
			return fmt.Sprintf("expert weight %s is a %v, not a param", w, w.Op)
		}
		if uses[w] != 1 {
			return fmt.Sprintf("expert weight %s is read by other nodes too", w)
		}
	}
	return ""
}

// addKernel emits out = a + b over an MoE node's output shape (F32): the
// device's combine of the host's sum, run in place (out and a alike).
func addKernel(name string, n *graph.Node) (*ptx.Kernel, error) {
	g := graph.New()
	a, b := g.Input("a", tensor.F32, n.Shape...), g.Input("b", tensor.F32, n.Shape...)
	k, _, err := ptx.EmitNode(name, g.Add(a, b))
	if err != nil {
		return nil, fmt.Errorf("cuda: lowering %s's addend: %w", n, err)
	}
	return k, nil
}

// cutWeights lays the weight region out without nodes' slots: each cut
// slot takes the bytes up to the next slot's start (or the region's end),
// so every remaining offset keeps the plan's alignment.
func cutWeights(p *plan.Plan, nodes []*graph.Node) weightCut {
	w := weightCut{bytes: p.WeightBytes}
	if len(nodes) == 0 {
		return w
	}
	var starts []int
	for _, s := range p.Slots {
		if s.Region == plan.Weights && s.Bytes > 0 {
			starts = append(starts, s.Offset)
		}
	}
	slices.Sort(starts)
	for _, n := range nodes {
		s := p.Slots[n.ID]
		end := p.WeightBytes
		if i, _ := slices.BinarySearch(starts, s.Offset+s.Bytes); i < len(starts) {
			end = starts[i]
		}
		w.at, w.gap = append(w.at, s.Offset), append(w.gap, end-s.Offset)
		w.bytes -= end - s.Offset
	}
	return w
}

// expertOf finds the splittable layer and weight (0 gate, 1 up, 2 down)
// that param n is, or -1.
func (lw *lowered) expertOf(n *graph.Node) (layer, which int) {
	for i := range lw.moe {
		if j := slices.Index(lw.moe[i].experts[:], n); j >= 0 && lw.moe[i].why == "" {
			return i, j
		}
	}
	return -1, -1
}
