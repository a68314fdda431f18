package plan

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

// Root is the node owning the buffer n's value lives in: n itself, or the
// end of its chain of views, in-place steps and joined concats.
func (p *Plan) Root(n *graph.Node) *graph.Node {
	for p.Slots[n.ID].Alias != nil {
		n = p.Slots[n.ID].Alias
	}
	return n
}

// Report is a one-line summary for logs and the CLI: the arena against
// the lower bound and the naive layout, the weights, and how many values
// needed no buffer of their own (and, where concats were joined, how
// many and how many values they hold).
func (p *Plan) Report() string {
	views, inPlace, joined, placed := 0, 0, 0, 0
	for _, n := range p.Order {
		s := p.Slots[n.ID]
		if s.Joined {
			joined++
		}
		switch {
		case s.Alias == nil:
		case n.Op.IsView():
			views++
		case p.placed(n):
			placed++
		default:
			inPlace++
		}
	}
	r := fmt.Sprintf("plan: %d nodes; arena %s (%s of lower bound %s, %s of naive %s); weights %s; %d views, %d in place",
		len(p.Order), HumanBytes(p.ArenaBytes), ratio(p.ArenaBytes, p.LowerBound), HumanBytes(p.LowerBound),
		ratio(p.ArenaBytes, p.NaiveBytes), HumanBytes(p.NaiveBytes), HumanBytes(p.WeightBytes), views, inPlace)
	if joined > 0 {
		r += fmt.Sprintf(", %d concats joined (%d values in them)", joined, placed)
	}
	return r
}

// HumanBytes prints a byte count in the largest binary unit it reaches
// ("1.13 MiB"), as plan reports and the CLI show sizes.
func HumanBytes(b int) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}
