package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// MoEHost is the host's part of an OpMoE layer split between a GPU and
// the host (issue 26, part 4): the weighted sum, per token, over the
// slots routed to experts that are not resident on the device, computed
// by the routed F32 kernel from the host copy of the weights. The device
// computes the resident slots and adds this sum to its own
// (ptx.Routed.Resident). Its cost scales with the non-resident slots:
// the resident ones get no row.
type MoEHost struct {
	m *moeFast
	e int
	k Kernel
}

// NewMoEHost prepares the host part of an F32 OpMoE node; env is as for
// PrepareFast (the weights are packed per WeightsVersion when they are
// params).
func NewMoEHost(n *graph.Node, env Env) (*MoEHost, error) {
	if n.Op != graph.OpMoE {
		return nil, fmt.Errorf("ops: MoEHost of a %v node, want MoE", n.Op)
	}
	m, err := newMoEFast(n, env)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("ops: %v: no host part for an MoE of %v over %v (F32 with tokens, experts and widths, only)", n, n.DType, n.Inputs[3].Shape)
	}
	return &MoEHost{m: m, e: m.d.e, k: sizeChecked(n, m.run)}, nil
}

// Run writes into out [T, H] the weighted sum of each token's slots whose
// expert resident does not name (zeros for a token with none); ins are the
// node's inputs. Expert ids outside [0, E) are errors, as for the node.
func (h *MoEHost) Run(ins []tensor.Tensor, out tensor.Tensor, resident []bool) error {
	if len(resident) != h.e {
		return fmt.Errorf("ops: MoEHost: a residency mask of %d experts for an MoE of %d", len(resident), h.e)
	}
	h.m.resident = resident
	defer func() { h.m.resident = nil }()
	return h.k(ins, out)
}
