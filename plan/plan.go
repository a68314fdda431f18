package plan

import "github.com/kilnml/kiln/graph"

// Region says which memory a value lives in.
type Region uint8

const (
	// Arena: activations, graph inputs and outputs; one per compiled
	// program (each Clone owns its own).
	Arena Region = iota
	// Weights: params and constants; shared read-only between clones.
	Weights
)

// Slot is where one node's value lives.
type Slot struct {
	Region Region
	Offset int // bytes from the start of the region, 64-byte aligned for roots
	Bytes  int // size of the value
	// Alias is the node whose memory this value shares (a view of its
	// parent, or an in-place output reusing its input: its input 0; a
	// value placed in a joined concat's buffer: that concat, or the
	// concat whose buffer holds it, with the value Offset minus the
	// concat's Offset bytes in), or nil for a value with its own buffer.
	Alias *graph.Node
	// Joined marks a Concat whose inputs were written at their places in
	// its bytes (join.go): no step runs for it.
	Joined bool
	// Start and End are the schedule positions of the first and last step
	// during which the value's memory must stay intact (End includes
	// every use through views; outputs live to the end; graph inputs,
	// params and constants start at 0). On a root slot (Alias nil) they
	// span the whole buffer: every value sharing it, in-place successors
	// included, which is what placement keeps apart.
	Start, End int
}

// Options tune planning.
type Options struct {
	// Naive gives every value its own buffer (no reuse, no in-place;
	// views still alias). KILN_PLAN=naive forces it on in every Make.
	Naive bool
	// InPlace reports whether a node may write its output over input 0
	// (ops.InPlace: the ops catalogue's flag). Nil: no node does.
	InPlace func(n *graph.Node) bool
	// Overwritable reports graph inputs whose value nobody needs once a
	// run has read it: an input a handle is fed into after every run (a
	// KV cache replaced by its updated copy). A step may then write its
	// output over such an input's bytes, after its last read, like over
	// any value, so the fed output can land where the handle lives
	// (Residence: in place, no copy). Nil: no input is.
	Overwritable func(in *graph.Node) bool
	// JoinConcat lets the steps that compute a Concat's inputs write them
	// straight into its buffer where it can (join.go), so that no step
	// runs for the Concat (Slot.Joined). A backend that sets it skips the
	// steps Free reports.
	JoinConcat bool
	// Guard pads every root buffer (arena and weights) with a zone of at
	// least this many bytes before and after it, rounded up to Align, so
	// the executor can lay canaries there and catch a kernel writing out
	// of bounds. KILN_DEBUG=guard sets it to Align when it is 0.
	Guard int
}

// Plan is the memory layout of a graph.
type Plan struct {
	Order []*graph.Node // the schedule: every node after its inputs
	Slots []Slot        // by node ID

	ArenaBytes  int // size of the activation arena
	WeightBytes int // size of the weight region
	NaiveBytes  int // sum of all arena values without any reuse
	LowerBound  int // the largest total of simultaneously live arena bytes
	// Guard is the size of the zone before and after every root buffer
	// (0 when not guarding); the bytes from the end of a value to the end
	// of its aligned size are guard bytes too.
	Guard int

	// Subs are the plans of the Loop nodes' bodies, by the Loop node's
	// ID, laid inside this plan's regions (subs.go).
	Subs map[int]*Sub
	subs []*Sub // the same, in the order of their arena blocks

	g   *graph.Graph // what Check verifies the layout against
	opt Options      // what it was made with (Check: Overwritable)
}

// FreeView reports whether n is a view that shares its parent's bytes
// exactly, so no backend runs anything for it (a view the plan gave its
// own buffer is copied).
func (p *Plan) FreeView(n *graph.Node) bool {
	if !n.Op.IsView() {
		return false
	}
	s, ps := p.Slots[n.ID], p.Slots[n.Inputs[0].ID]
	return s.Alias == n.Inputs[0] && s.Region == ps.Region && s.Offset == ps.Offset
}

// Free reports whether no step need run for n: a free view, or a joined
// concat, whose inputs were written where its value lives.
func (p *Plan) Free(n *graph.Node) bool { return p.FreeView(n) || p.Slots[n.ID].Joined }
