package plan

import "github.com/kilnml/kiln/graph"

// Residence says where a device-resident handle (a persistent graph input
// such as a KV cache, kept on the device between runs) can live, and
// which device-to-device copies each run then needs.
type Residence uint8

const (
	// OwnBuffer: the handle needs memory of its own. Each run copies it
	// into the input's slot before the first step and, when fed, the
	// output into it after the last.
	OwnBuffer Residence = iota
	// InSlot: the handle lives in the input's own arena bytes between
	// runs; a fed output is copied there after the last step. No copy
	// before a run.
	InSlot
	// InPlace: the handle lives in the input's arena bytes and the fed
	// output is already there when the run ends (the plan placed it
	// there, reusing the input's bytes after its last read, or as a view
	// of the input): no copy at all.
	InPlace
)

// String names the residence.
func (r Residence) String() string {
	switch r {
	case InSlot:
		return "in slot"
	case InPlace:
		return "in place"
	}
	return "own buffer"
}

// Residence says where the handle bound to graph input in can live when
// output out (nil: none) feeds it after every run. It is a pure function
// of the layout: the same plan always answers the same way.
//
// The input's bytes hold its value until its last read in every plan.
// Fed, the handle can live there when the output is exactly there (it
// was placed over the input once the input was dead, and being an output
// nothing writes over it later), or else when the copy of the output
// there after the run clobbers no value still wanted: the output itself
// and every other output must lie elsewhere. Not fed, it can live
// there only if no other value of the program ever writes those bytes.
func (p *Plan) Residence(in, out *graph.Node) Residence {
	s := p.Slots[in.ID]
	if p.g == nil || in.Op != graph.OpInput || s.Region != Arena || s.Alias != nil {
		return OwnBuffer
	}
	overlaps := func(t Slot) bool {
		return t.Region == Arena && t.Bytes > 0 && s.Bytes > 0 &&
			t.Offset < s.Offset+s.Bytes && s.Offset < t.Offset+t.Bytes
	}
	if out != nil {
		so := p.Slots[out.ID]
		switch {
		case so.Region == Arena && so.Offset == s.Offset && so.Bytes == s.Bytes:
			return InPlace
		case overlaps(so):
			return OwnBuffer
		}
		// The copy after the run must not clobber another output, which
		// the caller reads then (the input itself among them).
		for _, o := range p.g.Outputs() {
			if o != out && overlaps(p.Slots[o.ID]) {
				return OwnBuffer
			}
		}
		return InSlot
	}
	for _, n := range p.Order {
		if n == in || p.FreeView(n) && p.Root(n) == in {
			continue // the input, or a view reading it where it lies
		}
		if overlaps(p.Slots[n.ID]) {
			return OwnBuffer
		}
	}
	return InSlot
}
