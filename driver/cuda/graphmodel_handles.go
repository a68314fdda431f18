package cuda

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// onDevice reports whether n stays on the device across replays: an
// input bound to a GPU handle, or an output feeding one.
func (m *GraphModel) onDevice(n *graph.Node) bool {
	for _, r := range m.pr.res {
		if r.node == n || r.feed == n {
			return true
		}
	}
	return false
}

// countStaged sums the pinned bytes each replay copies in and out.
func (m *GraphModel) countStaged() {
	m.inBytes, m.outBytes = 0, 0
	for _, b := range m.inSl {
		m.inBytes += int64(len(b))
	}
	for _, b := range m.outSl {
		m.outBytes += int64(len(b))
	}
}

// ReadGPUHandle copies the model's own copy of the GPU handle bound to
// input name to the host, as float32 (widened from F16 or BF16).
func (m *GraphModel) ReadGPUHandle(name string) ([]float32, error) {
	if m.closed {
		return nil, errModelClosed
	}
	i := nodeIndex(m.ins, name)
	if i < 0 || m.pr.residentFor(m.ins[i]) == nil {
		return nil, fmt.Errorf("cuda: graph model: no GPU handle bound to %q", name)
	}
	n := m.ins[i]
	b := make([]byte, m.pr.sh.p.Slots[n.ID].Bytes)
	if err := m.pr.ReadResident(n, b); err != nil {
		return nil, err
	}
	v, err := tensor.View(n.DType, n.Shape, b)
	if err != nil {
		return nil, err
	}
	wide := tensor.New(tensor.F32, n.Shape...)
	if err := tensor.Convert(wide, v); err != nil {
		return nil, err
	}
	return wide.F32(), nil
}

// Transfers counts the bytes the model copied between host and device:
// per replay, its staged inputs in and outputs out (GPU handles and the
// outputs feeding them excluded), plus any handle read.
func (m *GraphModel) Transfers() exec.Transfers { return m.pr.Transfers() }
