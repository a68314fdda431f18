package plan

import "github.com/kilnml/kiln/graph"

// Joined concats. A Concat along an axis with only size-1 axes before it
// (a channel concat of one image) holds its inputs whole, one after
// another: input i is the output's bytes from the sizes of the inputs
// before it on. Where every input is computed by a step of its own, those
// steps can write straight into the concat's buffer, each at its place,
// and the concat has nothing left to do: it is joined (Slot.Joined) and
// no step runs for it. A SqueezeNet Fire module's two expand convs so
// write the two halves of its output; on two threads the copy they save
// read what the other core had written (every Concat of SqueezeNet 1.1 at
// 224², one thread 137 µs a run, two 396).
//
// A Concat whose inputs already lie one after another in a joined
// concat's buffer is joined too, as a view of that stretch: DenseNet's
// concats, each of the block input and the features so far, are prefixes
// of the block's last one, so the whole block is one buffer the dense
// layers append to.
//
// An input qualifies (a part) when it is computed each run from a graph
// input (not a graph input, weight or view, nor a value computed from
// weights only, which the executor keeps outside the arena), is no graph
// output, appears once in the concat, has no place already, and every
// part starts at a multiple of Align, as every buffer does. Concats are
// considered from the last scheduled back, so a value read by several
// concats belongs to the last that can take it and the earlier ones can
// view it there.

// placement is where joining puts values, by node ID.
type placement struct {
	host   []int  // the node whose buffer holds the value, or -1
	delta  []int  // bytes from the host's start to the value's
	joined []bool // a Concat that runs no step
}

// top follows id's hosts to the buffer that holds them all, returning
// its node and the value's offset in it.
func (pl *placement) top(id int) (int, int) {
	off := 0
	for pl.host[id] >= 0 {
		id, off = pl.host[id], off+pl.delta[id]
	}
	return id, off
}

// joinConcats decides which concats are joined and where their parts go.
func joinConcats(g *graph.Graph, order []*graph.Node, lv lifetimes, opt Options) placement {
	n := len(g.Nodes)
	pl := placement{host: make([]int, n), delta: make([]int, n), joined: make([]bool, n)}
	for i := range pl.host {
		pl.host[i] = -1
	}
	if !opt.JoinConcat || opt.Naive {
		return pl
	}
	fed := make([]bool, n) // computed from a graph input
	for _, v := range order {
		fed[v.ID] = v.Op == graph.OpInput
		for _, in := range v.Inputs {
			fed[v.ID] = fed[v.ID] || fed[in.ID]
		}
	}
	part := func(c, x *graph.Node) bool {
		return fed[x.ID] && !x.Op.IsSource() && !x.Op.IsView() && x.Op != graph.OpLoop && !lv.out[x.ID] &&
			!graph.PaddedRows(x) && x.DType == c.DType && pl.host[x.ID] < 0
	}
	for i := len(order) - 1; i >= 0; i-- {
		c := order[i]
		if !laysOut(c) {
			continue
		}
		if pl.host[c.ID] < 0 && !lv.out[c.ID] && pl.viewJoin(c) {
			continue
		}
		offs, ok, seen := partOffsets(c), true, map[int]bool{}
		for j, x := range c.Inputs {
			ok = ok && part(c, x) && !seen[x.ID] && offs[j]%Align == 0
			seen[x.ID] = true
		}
		if !ok {
			continue
		}
		for j, x := range c.Inputs {
			pl.host[x.ID], pl.delta[x.ID] = c.ID, offs[j]
		}
		pl.joined[c.ID] = true
	}
	return pl
}

// viewJoin joins c as a view where its inputs lie one after another in
// one buffer already, and reports whether it did.
func (pl *placement) viewJoin(c *graph.Node) bool {
	buf, start := -1, 0
	for j, off := range partOffsets(c) {
		x := c.Inputs[j]
		if pl.host[x.ID] < 0 {
			return false
		}
		t, at := pl.top(x.ID)
		if j == 0 {
			buf, start = t, at
		}
		if t != buf || at != start+off {
			return false
		}
	}
	pl.host[c.ID], pl.delta[c.ID], pl.joined[c.ID] = buf, start, true
	return true
}

// laysOut reports whether c is a Concat whose output is its inputs' bytes
// back to back: every axis before the concat axis has size 1, and every
// input has the output's dtype.
func laysOut(c *graph.Node) bool {
	ax := c.Attrs.Axis
	if c.Op != graph.OpConcat || len(c.Inputs) == 0 || ax < 0 || ax >= len(c.Shape) {
		return false
	}
	for _, d := range c.Shape[:ax] {
		if d != 1 {
			return false
		}
	}
	for _, x := range c.Inputs {
		if x.DType != c.DType {
			return false
		}
	}
	return true
}

// partOffsets is the byte offset of each input of a laysOut concat in its
// output.
func partOffsets(c *graph.Node) []int {
	offs, at := make([]int, len(c.Inputs)), 0
	for i, x := range c.Inputs {
		offs[i], at = at, at+nbytes(x)
	}
	return offs
}
