package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Custom ops (graph.Custom) run the user's own CPU function: it takes any
// dtype natively, so no widening, and it is never run in place.
func init() {
	Register(Entry{Op: graph.OpCustom, DTypes: tensor.DTypes(), Reference: prepareCustom})
}

func prepareCustom(n *graph.Node) (Kernel, error) {
	s := n.Attrs.Custom
	if s == nil {
		return nil, fmt.Errorf("custom node without a CustomSpec")
	}
	if s.CPU == nil {
		return nil, fmt.Errorf("custom op %s has no CPU implementation", s.Name)
	}
	f := s.CPU
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := f(out, ins...); err != nil {
			return fmt.Errorf("custom op %s: %w", s.Name, err)
		}
		return nil
	}, nil
}
