package kiln

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// handle is a persistent buffer that feeds the input of the same name on
// every run, and optionally takes an output's value after each run.
type handle struct {
	input int // position among the graph inputs
	node  *graph.Node
	data  []byte // the value in node's dtype, on the host; nil when dev holds it
	feed  int    // output index copied back after each run, or -1
	gpu   bool   // bound with BindGPUHandle (gpuhandles.go)
	// dev is the executable keeping the value in device memory (a GPU
	// handle on a device with exec.Resident), fed there; nil: the value
	// is data, written before every run.
	dev exec.Resident
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
// replaces the contents. On a GPU the buffer stays on the host and crosses
// to the device every run; BindGPUHandle keeps it on the device.
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
		return fmt.Errorf("kiln: BindHandle %q: input is %v, handles hold f32 (BindGPUHandleTyped takes any dtype)", name, n.DType)
	}
	if len(data) != n.Shape.NumElements() {
		return fmt.Errorf("kiln: BindHandle %q: %v needs %d values, got %d", name, n.Shape, n.Shape.NumElements(), len(data))
	}
	return cg.bind(i, tensor.Bytes(data), false)
}

// bind stores data (already in the input's dtype and size) as input i's
// handle: a new one, or the value of the one bound already, which keeps
// its kind unless gpu asks to move it to the device.
func (cg *CompiledGraph) bind(i int, data []byte, gpu bool) error {
	n := cg.g.Inputs()[i]
	h := cg.handleFor(i)
	if h == nil {
		cg.handles = append(cg.handles, handle{input: i, node: n, feed: -1})
		h = &cg.handles[len(cg.handles)-1]
	}
	if gpu && !h.gpu {
		if err := cg.makeResident(h, data); err != nil {
			if h.data == nil && h.dev == nil { // new: leave nothing behind
				cg.handles = cg.handles[:len(cg.handles)-1]
			}
			return err
		}
		return nil
	}
	if h.dev != nil {
		return h.dev.BindResident(n, data)
	}
	if h.data == nil {
		h.data = make([]byte, len(data))
	}
	copy(h.data, data)
	return nil
}

// makeResident turns h into a GPU handle holding data: in device memory
// where the executable keeps handles there, else on the host (the CPU,
// whose memory is the device's).
func (cg *CompiledGraph) makeResident(h *handle, data []byte) error {
	r, ok := cg.x.(exec.Resident)
	if !ok {
		h.data, h.gpu = slices.Clone(data), true
		if h.data == nil {
			h.data = []byte{}
		}
		return nil
	}
	if err := r.BindResident(h.node, data); err != nil {
		return err
	}
	if h.feed >= 0 {
		if err := r.FeedResident(h.node, cg.g.Outputs()[h.feed]); err != nil {
			return err
		}
	}
	h.data, h.dev, h.gpu = nil, r, true
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
	return cg.setFeed("FeedHandle", name, output)
}

// setFeed is FeedHandle and SetGPUHandleFeed for callers holding cg.
func (cg *CompiledGraph) setFeed(op, name string, output int) error {
	h, err := cg.feedable(op, name, output)
	if err != nil {
		return err
	}
	if h.dev != nil {
		if err := h.dev.FeedResident(h.node, cg.g.Outputs()[output]); err != nil {
			return err
		}
	}
	h.feed = output
	return nil
}

// feedable finds name's handle and checks that output can feed it.
func (cg *CompiledGraph) feedable(op, name string, output int) (*handle, error) {
	if cg.closed {
		return nil, errClosed
	}
	i := cg.inputIndex(name)
	h := cg.handleFor(i)
	if i < 0 || h == nil {
		return nil, fmt.Errorf("kiln: %s: no handle bound to %q", op, name)
	}
	outs := cg.g.Outputs()
	if output < 0 || output >= len(outs) {
		return nil, fmt.Errorf("kiln: %s %q: no output %d (graph has %d)", op, name, output, len(outs))
	}
	if o := outs[output]; o.DType != h.node.DType || !o.Shape.Equal(h.node.Shape) {
		return nil, fmt.Errorf("kiln: %s %q: output %d is %v%v, handle is %v%v", op, name, output, o.DType, o.Shape, h.node.DType, h.node.Shape)
	}
	return h, nil
}

// ReadHandle returns a copy of a handle's current contents (as float32
// when the handle holds F16 or BF16; from the device for a GPU handle).
func (cg *CompiledGraph) ReadHandle(name string) ([]float32, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	return cg.readF32("ReadHandle", name)
}

// readF32 reads name's handle and widens it to float32.
func (cg *CompiledGraph) readF32(op, name string) ([]float32, error) {
	v, err := cg.read(op, name)
	if err != nil {
		return nil, err
	}
	if v.DType == tensor.F32 {
		return slices.Clone(tensor.Elems[float32](v.Data)), nil
	}
	wide := tensor.New(tensor.F32, v.Shape...)
	if err := tensor.Convert(wide, v); err != nil {
		return nil, fmt.Errorf("kiln: %s %q: %w", op, name, err)
	}
	return wide.F32(), nil
}

// read copies name's handle out in its dtype.
func (cg *CompiledGraph) read(op, name string) (tensor.Tensor, error) {
	if cg.closed {
		return tensor.Tensor{}, errClosed
	}
	h := cg.handleFor(cg.inputIndex(name))
	if h == nil {
		return tensor.Tensor{}, fmt.Errorf("kiln: %s: no handle bound to %q", op, name)
	}
	v := tensor.Tensor{DType: h.node.DType, Shape: h.node.Shape.Clone()}
	if h.dev == nil {
		v.Data = slices.Clone(h.data)
		return v, nil
	}
	v.Data = make([]byte, cg.plan.Slots[h.node.ID].Bytes)
	if err := h.dev.ReadResident(h.node, v.Data); err != nil {
		return tensor.Tensor{}, fmt.Errorf("kiln: %s %q: %w", op, name, err)
	}
	return v, nil
}

// writeHandles writes the host handles into their inputs before a run;
// device-resident ones are already where the program reads them.
func (cg *CompiledGraph) writeHandles() error {
	for i := range cg.handles {
		if h := &cg.handles[i]; h.dev == nil {
			if err := cg.x.Write(h.node, h.data); err != nil {
				return err
			}
		}
	}
	return nil
}

// feedHandles copies outputs into the host handles that follow them;
// the executable feeds device-resident ones itself.
func (cg *CompiledGraph) feedHandles() error {
	for i := range cg.handles {
		h := &cg.handles[i]
		if h.feed >= 0 && h.dev == nil {
			if err := cg.refreshHost(h, h.feed); err != nil {
				return err
			}
		}
	}
	return nil
}

// refreshHost copies output o of the last run into host handle h.
func (cg *CompiledGraph) refreshHost(h *handle, o int) error {
	if err := cg.fetch(o); err != nil {
		return err
	}
	v := cg.outputTensor(o) // actual-sized under SetActiveExtent
	copyLeading(h.data, h.node.Shape, v.Data, v.Shape, h.node.DType.Size())
	return nil
}

// residentFed reports whether output o feeds a device-resident handle:
// such an output stays on the device after a run unless it is read.
func (cg *CompiledGraph) residentFed(o int) bool {
	for i := range cg.handles {
		if h := &cg.handles[i]; h.dev != nil && h.feed == o {
			return true
		}
	}
	return false
}

// fetch copies output o to its host stage if the last run left it on the
// device (residentFed).
func (cg *CompiledGraph) fetch(o int) error {
	if cg.cpu != nil || !cg.unstaged[o] {
		return nil
	}
	if err := cg.x.Read(cg.g.Outputs()[o], cg.stage[o]); err != nil {
		return err
	}
	cg.unstaged[o] = false
	return nil
}
