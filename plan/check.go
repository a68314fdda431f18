package plan

import (
	"errors"
	"fmt"

	"github.com/kilnml/kiln/graph"
)

// Check verifies the plan against its graph, re-deriving every lifetime
// from the schedule rather than trusting the slots: the schedule holds
// each node once, after its inputs; every slot has its value's size and
// lies inside its region; buffers are 64-byte aligned; views and in-place
// steps alias their input 0 at the same place; a value placed in a joined
// concat lies inside it, aligned, and a joined concat's inputs lie at
// their places in it; params and constants (and
// views of them) live in Weights, everything else in the Arena; each
// slot's lifetime covers its value's, and each buffer's covers all the
// values sharing it; an in-place step overwrites nothing that is read
// later, is a graph output, a graph input or a weight; and no two arena
// buffers live at the same time share a byte (nor do any two weights).
func (p *Plan) Check() error {
	if p == nil || p.g == nil {
		return errors.New("plan: Check needs a plan made by Make")
	}
	g := p.g
	nn := len(g.Nodes)
	if len(p.Slots) != nn || len(p.Order) != nn {
		return fmt.Errorf("plan: %d slots and %d steps for %d nodes", len(p.Slots), len(p.Order), nn)
	}
	pos, err := positions(g, p.Order)
	if err != nil {
		return err
	}
	var errs []error
	bad := func(n *graph.Node, format string, args ...any) {
		errs = append(errs, fmt.Errorf("plan: node %d %q (%v): %s", n.ID, n.Name, n.Op, fmt.Sprintf(format, args...)))
	}
	first, last, isOut := needed(g, p.Order, pos)
	version := make([]int, nn) // how many in-place writes the buffer saw before this value
	for _, n := range p.Order {
		id, s := n.ID, p.Slots[n.ID]
		if !p.checkSlot(n, s, bad) {
			continue
		}
		if s.Start > first[id] || s.End < last[id] {
			bad(n, "slot lives over [%d, %d], the value over [%d, %d]", s.Start, s.End, first[id], last[id])
		}
		if s.Joined {
			p.checkJoined(n, bad)
		}
		if s.Alias == nil || p.placed(n) { // a placed value is a fresh write
			continue
		}
		version[id] = version[n.Inputs[0].ID]
		if !n.Op.IsView() {
			version[id]++
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	root, err := p.roots()
	if err != nil {
		return err
	}
	members := make([][]*graph.Node, nn)
	for _, n := range p.Order {
		r := root[n.ID]
		members[r] = append(members[r], n)
		if rs := p.Slots[r]; rs.Start > first[n.ID] || rs.End < last[n.ID] {
			bad(n, "buffer of %q lives over [%d, %d], this value over [%d, %d]",
				g.Nodes[r].Name, rs.Start, rs.End, first[n.ID], last[n.ID])
		}
	}
	for _, n := range p.Order {
		if s := p.Slots[n.ID]; s.Alias == nil || n.Op.IsView() || p.placed(n) {
			continue
		}
		r := g.Nodes[root[n.ID]]
		if r.Op.IsSource() && !overwritable(r, p.opt) {
			bad(n, "writes in place over %v %q", r.Op, r.Name)
		}
		if in0 := n.Inputs[0]; in0.DType != n.DType {
			bad(n, "writes %v in place over %v", n.DType, in0.DType)
		}
		for _, u := range members[r.ID] {
			if version[u.ID] < version[n.ID] && (last[u.ID] > pos[n.ID] || isOut[u.ID]) {
				bad(n, "writes in place at step %d over %q, needed until step %d (output: %v)",
					pos[n.ID], u.Name, last[u.ID], isOut[u.ID])
			}
		}
	}
	errs = append(errs, p.checkOverlap(root)...)
	errs = append(errs, p.checkSubs(root)...)
	if p.LowerBound > p.ArenaBytes {
		errs = append(errs, fmt.Errorf("plan: lower bound %d above arena size %d", p.LowerBound, p.ArenaBytes))
	}
	return errors.Join(errs...)
}

// positions maps node IDs to schedule positions, checking that the order
// is a permutation of the graph's nodes with every node after its inputs.
func positions(g *graph.Graph, order []*graph.Node) ([]int, error) {
	pos := make([]int, len(g.Nodes))
	for i := range pos {
		pos[i] = -1
	}
	for i, n := range order {
		if n == nil || n.ID < 0 || n.ID >= len(g.Nodes) || g.Nodes[n.ID] != n || pos[n.ID] >= 0 {
			return nil, fmt.Errorf("plan: step %d (%v) is not a node of the graph, or repeats one", i, n)
		}
		pos[n.ID] = i
	}
	for _, n := range order {
		for _, in := range n.Inputs {
			if pos[in.ID] >= pos[n.ID] {
				return nil, fmt.Errorf("plan: %q is scheduled at %d, before its input %q at %d", n.Name, pos[n.ID], in.Name, pos[in.ID])
			}
		}
	}
	return pos, nil
}

// needed is each value's own lifetime: from its step (0 for sources) to
// its last reader, counting readers of its views; weights and outputs to
// the end.
func needed(g *graph.Graph, order []*graph.Node, pos []int) (first, last []int, out []bool) {
	nn, end := len(g.Nodes), len(order)-1
	first, last, out = make([]int, nn), make([]int, nn), make([]bool, nn)
	for _, n := range order {
		first[n.ID], last[n.ID] = pos[n.ID], pos[n.ID]
		if n.Op.IsSource() {
			first[n.ID] = 0
		}
		if isWeight(n) || graph.PaddedRows(n) { // see liveness
			last[n.ID] = end
		}
		for _, in := range n.Inputs {
			last[in.ID] = max(last[in.ID], pos[n.ID])
		}
	}
	for _, o := range g.Outputs() {
		last[o.ID], out[o.ID] = end, true
	}
	for i := end; i >= 0; i-- {
		if n := order[i]; n.Op.IsView() {
			in := n.Inputs[0].ID
			last[in] = max(last[in], last[n.ID])
			out[in] = out[in] || out[n.ID]
		}
	}
	return first, last, out
}

// checkSlot checks one slot on its own and against its alias target; it
// reports whether the slot is sound enough to follow.
func (p *Plan) checkSlot(n *graph.Node, s Slot, bad func(*graph.Node, string, ...any)) bool {
	ok := true
	fail := func(format string, args ...any) { bad(n, format, args...); ok = false }
	if s.Bytes != nbytes(n) {
		fail("slot holds %d bytes, the value %d", s.Bytes, nbytes(n))
	}
	size := p.ArenaBytes
	if s.Region == Weights {
		size = p.WeightBytes
	} else if s.Region != Arena {
		fail("unknown region %d", s.Region)
	}
	if s.Offset < 0 || s.Offset+s.Bytes > size {
		fail("bytes [%d, %d) outside the %d-byte region", s.Offset, s.Offset+s.Bytes, size)
	}
	switch {
	case n.Op.IsView() && s.Alias == nil:
		fail("a view with its own buffer")
	case s.Alias == nil:
		if s.Offset%Align != 0 {
			fail("offset %d not %d-byte aligned", s.Offset, Align)
		}
		if want := isWeight(n); want != (s.Region == Weights) {
			fail("region %v for a %v", s.Region, n.Op)
		}
	case p.placed(n):
		t := p.Slots[s.Alias.ID]
		switch {
		case n.Op.IsView():
			fail("a view placed in %v, not at its input 0", s.Alias)
		case !t.Joined:
			fail("placed in %v, which is no joined concat", s.Alias)
		case t.Region != s.Region || s.Offset < t.Offset || s.Offset+s.Bytes > t.Offset+t.Bytes:
			fail("placed at %v+%d (%d bytes), outside %v at %v+%d (%d bytes)",
				s.Region, s.Offset, s.Bytes, s.Alias, t.Region, t.Offset, t.Bytes)
		case s.Offset%Align != 0:
			fail("placed at offset %d, not %d-byte aligned", s.Offset, Align)
		}
	default:
		t := p.Slots[s.Alias.ID]
		if t.Region != s.Region || t.Offset != s.Offset || t.Bytes != s.Bytes {
			fail("alias at %v+%d (%d bytes), its input at %v+%d (%d bytes)",
				s.Region, s.Offset, s.Bytes, t.Region, t.Offset, t.Bytes)
		}
	}
	return ok
}

// placed reports whether n's slot places it in a joined concat's buffer
// (its alias is not its input 0).
func (p *Plan) placed(n *graph.Node) bool {
	a := p.Slots[n.ID].Alias
	return a != nil && (len(n.Inputs) == 0 || a != n.Inputs[0])
}

// checkJoined checks that joined concat c's inputs lie where its value
// has them: input i at c's offset plus the sizes of the inputs before it.
func (p *Plan) checkJoined(c *graph.Node, bad func(*graph.Node, string, ...any)) {
	if !laysOut(c) {
		bad(c, "joined, but not a concat of its inputs back to back")
		return
	}
	s := p.Slots[c.ID]
	for i, off := range partOffsets(c) {
		x := c.Inputs[i]
		if t := p.Slots[x.ID]; t.Region != s.Region || t.Offset != s.Offset+off {
			bad(c, "joined, input %d %q at %v+%d, its place is %v+%d", i, x.Name, t.Region, t.Offset, s.Region, s.Offset+off)
		}
	}
}

// roots returns, by node ID, the node owning the buffer each value lives
// in, following aliases (a placed value's alias comes after it in the
// schedule, so they are followed rather than taken in order).
func (p *Plan) roots() ([]int, error) {
	const unseen, busy = -1, -2
	root := make([]int, len(p.Slots))
	for i := range root {
		root[i] = unseen
	}
	var follow func(id int) (int, error)
	follow = func(id int) (int, error) {
		switch root[id] {
		case busy:
			return 0, fmt.Errorf("plan: node %d %q: its aliases lead back to it", id, p.g.Nodes[id].Name)
		case unseen:
			root[id] = busy
			r := id
			if a := p.Slots[id].Alias; a != nil {
				var err error
				if r, err = follow(a.ID); err != nil {
					return 0, err
				}
			}
			root[id] = r
		}
		return root[id], nil
	}
	for id := range root {
		if _, err := follow(id); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// checkOverlap compares every pair of buffers of the same region: arena
// buffers may share bytes only if they are never live together.
func (p *Plan) checkOverlap(root []int) []error {
	var bufs []int
	for id, r := range root {
		if r == id && p.Slots[id].Bytes > 0 {
			bufs = append(bufs, id)
		}
	}
	var errs []error
	for i, a := range bufs {
		sa := p.Slots[a]
		for _, b := range bufs[i+1:] {
			sb := p.Slots[b]
			if sa.Region != sb.Region || sa.Offset >= sb.Offset+sb.Bytes || sb.Offset >= sa.Offset+sa.Bytes {
				continue
			}
			if sa.Region == Weights || (sa.Start <= sb.End && sb.Start <= sa.End) {
				errs = append(errs, fmt.Errorf("plan: %q [%d, %d) over steps [%d, %d] and %q [%d, %d) over [%d, %d] share bytes while both live",
					p.g.Nodes[a].Name, sa.Offset, sa.Offset+sa.Bytes, sa.Start, sa.End,
					p.g.Nodes[b].Name, sb.Offset, sb.Offset+sb.Bytes, sb.Start, sb.End))
			}
		}
	}
	return errs
}

// String names the region: "arena" or "weights".
func (r Region) String() string {
	switch r {
	case Arena:
		return "arena"
	case Weights:
		return "weights"
	}
	return fmt.Sprintf("region(%d)", uint8(r))
}
