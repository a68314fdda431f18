package exec

import "github.com/kilnml/kiln/graph"

// MoEPlacer is an optional Executable interface for devices that decide
// where a mixture-of-experts layer's expert weights live (CUDA: the
// resident experts' weights in device memory, run there; the others'
// only on the host, their token rows computed by the CPU and added on
// the device) and keep each run's router expert ids for kiln's top-k
// capture and residency accounting. The CPU Program has no placement:
// kiln observes its MoE steps directly.
type MoEPlacer interface {
	// MoELayers lists the program's OpMoE nodes in forward (step) order.
	MoELayers() []*graph.Node
	// SetMoEResident sets every layer's resident experts: masks[i][e]
	// for expert e of layer i, a nil mask making every expert of its
	// layer resident. The placement changes before the next run (device
	// weights re-uploaded once), not per run. It fails, changing
	// nothing, for a mask of the wrong length or a layer the device
	// cannot split.
	SetMoEResident(masks [][]bool) error
	// MoEIDs waits for queued work and copies layer i's expert ids of
	// the last run (tokens × k, in the ids' dtype) into dst.
	MoEIDs(layer int, dst []byte) error
}
