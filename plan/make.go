package plan

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

// Align is the byte alignment of every buffer in both regions: a cache
// line, and the widest vector (AVX-512) the kernels load.
const Align = 64

func alignUp(n int) int { return (n + Align - 1) &^ (Align - 1) }

// nbytes is the size of a node's value.
func nbytes(n *graph.Node) int { return n.Shape.NumElements() * n.DType.Size() }

// isWeight reports whether a source lives in the Weights region.
func isWeight(n *graph.Node) bool { return n.Op == graph.OpParam || n.Op == graph.OpConstant }

// Make plans g: it verifies the graph, schedules it, computes lifetimes
// and places every value.
//
// The schedule is g.TopoOrder (creation order for graphs built through the
// builder). It contains every node, sources included; a source's step does
// no work. Ordering for a smaller live set is left to fusion, which sees
// the whole graph; placement quality is measured against the lower bound
// of the schedule it is given.
//
// A node writes its output over input 0 (in place, Slot.Alias = input 0)
// when all of these hold: Options.InPlace allows it (nil allows no node;
// the session passes ops.InPlace, the catalogue's flag), planning is not
// naive, input 0's buffer (its root, through views) is an arena
// intermediate (not a param or constant, nor a graph input unless
// Options.Overwritable lists it),
// no value in that buffer is a graph output, this step is the buffer's
// last use, the node has input 0's dtype and byte size, and every other
// input sharing that buffer has input 0's shape (so elementwise reads
// stay at the index being written).
func Make(g *graph.Graph, opt Options) (*Plan, error) {
	if err := graph.Verify(g); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	order, err := g.TopoOrder()
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	env := FromEnv()
	if env.Naive {
		opt.Naive = true
	}
	if opt.Guard == 0 {
		opt.Guard = env.Guard
	}
	guard := 0
	if opt.Guard > 0 {
		guard = alignUp(opt.Guard)
	}
	lv := liveness(g, order)
	pl := joinConcats(g, order, lv, opt)
	bufs := share(g, order, lv, opt, pl)

	p := &Plan{Order: order, Slots: make([]Slot, len(g.Nodes)), Guard: guard, g: g, opt: opt}
	last := len(order) - 1
	var arena []block
	for _, n := range order {
		id := n.ID
		s := Slot{Bytes: nbytes(n), Start: lv.pos[id], End: lv.last[id]}
		if n.Op.IsSource() {
			s.Start = 0
		}
		s.Joined = pl.joined[id]
		switch {
		case pl.host[id] >= 0:
			s.Alias = g.Nodes[pl.host[id]]
		case bufs.root[id] != id:
			s.Alias = n.Inputs[0]
		case isWeight(n):
			s.Region, s.Offset, s.End = Weights, p.WeightBytes+guard, last
			p.WeightBytes += alignUp(s.Bytes) + 2*guard
		default:
			s.Start, s.End = min(s.Start, bufs.start[id]), bufs.end[id]
			arena = append(arena, block{id: id, size: alignUp(s.Bytes) + 2*guard, start: s.Start, end: s.End})
		}
		if !n.Op.IsView() && !isWeight(n) {
			p.NaiveBytes += alignUp(s.Bytes)
		}
		p.Slots[id] = s
	}
	subBlocks, err := p.planSubs(order, lv.pos, opt, guard, len(g.Nodes))
	if err != nil {
		return nil, err
	}
	arena = append(arena, subBlocks...)
	if opt.Naive {
		p.ArenaBytes = placeNaive(arena)
	} else {
		p.ArenaBytes = placeBestFit(arena, len(order))
	}
	for _, b := range arena {
		if b.id >= len(g.Nodes) { // a body's arena (subs.go)
			p.subByBlock(b.id - len(g.Nodes)).Arena = b.off + guard
			continue
		}
		p.Slots[b.id].Offset = b.off + guard
	}
	// Aliases follow their roots: views and in-place steps sit at their
	// input 0, values placed in a joined concat at their delta into it.
	resolved := make([]bool, len(g.Nodes))
	var resolve func(n *graph.Node)
	resolve = func(n *graph.Node) {
		s := &p.Slots[n.ID]
		if resolved[n.ID] || s.Alias == nil {
			return
		}
		resolved[n.ID] = true
		resolve(s.Alias)
		r := p.Slots[s.Alias.ID]
		s.Region, s.Offset = r.Region, r.Offset
		if pl.host[n.ID] >= 0 {
			s.Offset += pl.delta[n.ID]
		}
	}
	for _, n := range order {
		resolve(n)
	}
	p.LowerBound = lowerBound(arena, len(order))
	return p, nil
}

// lifetimes holds what liveness derives from the schedule, by node ID.
type lifetimes struct {
	pos  []int  // schedule position
	last []int  // last step that reads the value, itself or through views; the end for outputs
	out  []bool // the value, or a view of it, is a graph output
}

func liveness(g *graph.Graph, order []*graph.Node) lifetimes {
	n := len(g.Nodes)
	lv := lifetimes{pos: make([]int, n), last: make([]int, n), out: make([]bool, n)}
	for i, v := range order {
		lv.pos[v.ID], lv.last[v.ID] = i, i
		for _, in := range v.Inputs {
			lv.last[in.ID] = max(lv.last[in.ID], i)
		}
	}
	for _, o := range g.Outputs() {
		lv.last[o.ID], lv.out[o.ID] = len(order)-1, true
	}
	for _, v := range order {
		if graph.PaddedRows(v) { // its result rows count the rows of outputs that follow it (graph.PaddedSource)
			lv.last[v.ID] = len(order) - 1
		}
	}
	// A view's uses are uses of its parent's bytes; walking backwards
	// carries them down chains of views.
	for i := len(order) - 1; i >= 0; i-- {
		if v := order[i]; v.Op.IsView() {
			p := v.Inputs[0].ID
			lv.last[p] = max(lv.last[p], lv.last[v.ID])
			lv.out[p] = lv.out[p] || lv.out[v.ID]
		}
	}
	return lv
}

// buffers groups values into the buffers that hold them, by node ID.
type buffers struct {
	root  []int  // ID of the node owning the buffer a value lives in
	start []int  // by root: first step any value in the buffer is written
	end   []int  // by root: last step any value in the buffer is needed
	out   []bool // by root: some value in the buffer is a graph output
}

// share decides, in schedule order, which values reuse another's buffer:
// values placed in a joined concat (joinConcats) the buffer that holds
// the concat, views always, in-place steps when Make's rule allows (a
// joined concat's input 0 already lives in its buffer). A part is
// written before its concat's step, so a buffer's first step is its
// earliest value's.
func share(g *graph.Graph, order []*graph.Node, lv lifetimes, opt Options, pl placement) buffers {
	n := len(g.Nodes)
	b := buffers{root: make([]int, n), start: make([]int, n), end: make([]int, n), out: make([]bool, n)}
	for i := range b.start {
		b.start[i] = len(order)
	}
	for _, v := range order {
		id, r := v.ID, v.ID
		switch {
		case pl.host[id] >= 0:
			r, _ = pl.top(id)
		case v.Op.IsView() || inPlace(g, v, lv, b, opt):
			r = b.root[v.Inputs[0].ID]
		}
		b.root[id] = r
		b.start[r] = min(b.start[r], lv.pos[id])
		b.end[r] = max(b.end[r], lv.last[id])
		b.out[r] = b.out[r] || lv.out[id]
	}
	return b
}

func inPlace(g *graph.Graph, v *graph.Node, lv lifetimes, b buffers, opt Options) bool {
	if opt.Naive || v.Op.IsSource() || len(v.Inputs) == 0 {
		return false
	}
	in0 := v.Inputs[0]
	r := b.root[in0.ID]
	switch {
	case g.Nodes[r].Op.IsSource() && !overwritable(g.Nodes[r], opt), b.out[r], b.end[r] != lv.pos[v.ID],
		v.DType != in0.DType, nbytes(v) != nbytes(in0):
		return false
	}
	for _, in := range v.Inputs[1:] {
		if b.root[in.ID] == r && !in.Shape.Equal(in0.Shape) {
			return false
		}
	}
	return opt.InPlace != nil && opt.InPlace(v)
}

// overwritable reports a graph input that Options.Overwritable lets steps
// write over.
func overwritable(n *graph.Node, opt Options) bool {
	return n.Op == graph.OpInput && opt.Overwritable != nil && opt.Overwritable(n)
}
