package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// handle is a persistent buffer that feeds the input of the same name on
// every run, and optionally takes an output's value after each run.
type handle struct {
	input int // position among the graph inputs
	node  *graph.Node
	data  []float32
	feed  int // output index copied back after each run, or -1
}

func (cg *CompiledGraph) handleFor(input int) *handle {
	for i := range cg.handles {
		if cg.handles[i].input == input {
			return &cg.handles[i]
		}
	}
	return nil
}

// BindHandle binds a persistent buffer to the F32 input of the same name:
// it stays alive across runs and is fed to that input on every run, so the
// input may be left out of Run and passed as nil to RunSlots. Binding again
// replaces the contents.
func (cg *CompiledGraph) BindHandle(name string, data []float32) error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return errClosed
	}
	i := cg.inputIndex(name)
	if i < 0 {
		return fmt.Errorf("kiln: BindHandle: no input %q (inputs: %s)", name, names(cg.g.Inputs()))
	}
	n := cg.g.Inputs()[i]
	if n.DType != tensor.F32 {
		return fmt.Errorf("kiln: BindHandle %q: input is %v, handles hold f32", name, n.DType)
	}
	if len(data) != n.Shape.NumElements() {
		return fmt.Errorf("kiln: BindHandle %q: %v needs %d values, got %d", name, n.Shape, n.Shape.NumElements(), len(data))
	}
	if h := cg.handleFor(i); h != nil {
		copy(h.data, data)
		return nil
	}
	cg.handles = append(cg.handles, handle{input: i, node: n, data: append([]float32(nil), data...), feed: -1})
	return nil
}

// FeedHandle makes output i flow back into the handle after every run,
// the KV-cache pattern: the graph reads the cache as an input and returns
// the updated cache as an output of the same shape.
func (cg *CompiledGraph) FeedHandle(name string, output int) error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return errClosed
	}
	i := cg.inputIndex(name)
	h := cg.handleFor(i)
	if i < 0 || h == nil {
		return fmt.Errorf("kiln: FeedHandle: no handle bound to %q", name)
	}
	outs := cg.g.Outputs()
	if output < 0 || output >= len(outs) {
		return fmt.Errorf("kiln: FeedHandle %q: no output %d (graph has %d)", name, output, len(outs))
	}
	if o := outs[output]; o.DType != h.node.DType || !o.Shape.Equal(h.node.Shape) {
		return fmt.Errorf("kiln: FeedHandle %q: output %d is %v%v, handle is %v%v", name, output, o.DType, o.Shape, h.node.DType, h.node.Shape)
	}
	h.feed = output
	return nil
}

// ReadHandle returns a copy of a handle's current contents.
func (cg *CompiledGraph) ReadHandle(name string) ([]float32, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return nil, errClosed
	}
	h := cg.handleFor(cg.inputIndex(name))
	if h == nil {
		return nil, fmt.Errorf("kiln: ReadHandle: no handle bound to %q", name)
	}
	return append([]float32(nil), h.data...), nil
}

// feedHandles copies outputs into the handles that follow them.
func (cg *CompiledGraph) feedHandles() error {
	for i := range cg.handles {
		h := &cg.handles[i]
		if h.feed >= 0 {
			v := cg.outputTensor(h.feed) // actual-sized under SetActiveExtent
			copyLeading(tensor.Bytes(h.data), h.node.Shape, v.Data, v.Shape, 4)
		}
	}
	return nil
}
