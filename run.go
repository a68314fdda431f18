package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/tensor"
)

// Input is a named float32 input for Run.
type Input struct {
	Name string
	Data []float32
}

// In pairs an input name with its data.
func In(name string, data []float32) Input { return Input{Name: name, Data: data} }

// TypedInput is a named input in any dtype, as raw little-endian bytes.
type TypedInput struct {
	Name  string
	Data  []byte
	DType tensor.DType
}

// TypedOutput is an output in its declared dtype.
type TypedOutput struct {
	Data  []byte
	DType tensor.DType
	Shape tensor.Shape
}

// Run feeds inputs by name, runs the graph and returns a copy of every
// output as float32 (other dtypes are converted). Inputs bound to a
// handle may be left out.
func (cg *CompiledGraph) Run(inputs ...Input) ([][]float32, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	return cg.run(inputs)
}

// run is Run for callers that hold the graph (CommitNoWait, RunPipelined).
func (cg *CompiledGraph) run(inputs []Input) ([][]float32, error) {
	if err := cg.runNamed(typedF32(inputs)); err != nil {
		return nil, err
	}
	return cg.outputsF32()
}

// outputsF32 copies every output of the last run as float32.
func (cg *CompiledGraph) outputsF32() ([][]float32, error) {
	outs := make([][]float32, len(cg.g.Outputs()))
	for i, o := range cg.g.Outputs() {
		if err := cg.fetch(i); err != nil {
			return nil, err
		}
		v := cg.outputTensor(i)
		if o.DType == tensor.F32 {
			outs[i] = append([]float32(nil), tensor.Elems[float32](v.Data)...)
			continue
		}
		wide := tensor.New(tensor.F32, v.Shape...)
		if err := tensor.Convert(wide, v); err != nil {
			return nil, err
		}
		outs[i] = wide.F32()
	}
	return outs, nil
}

// RunTyped feeds inputs in any dtype (converted to each input's declared
// dtype at the boundary) and returns the outputs in their declared dtypes.
func (cg *CompiledGraph) RunTyped(inputs ...TypedInput) ([]TypedOutput, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	if err := cg.runNamed(inputs); err != nil {
		return nil, err
	}
	outs := make([]TypedOutput, len(cg.g.Outputs()))
	for i, o := range cg.g.Outputs() {
		if err := cg.fetch(i); err != nil {
			return nil, err
		}
		v := cg.outputTensor(i)
		outs[i] = TypedOutput{Data: append([]byte(nil), v.Data...), DType: o.DType, Shape: v.Shape.Clone()}
	}
	return outs, nil
}

// runNamed matches named inputs to graph inputs, writes them and runs.
// Every input is checked (and converted) before any is written, so a call
// that fails leaves the arena as the last run left it.
func (cg *CompiledGraph) runNamed(inputs []TypedInput) error {
	data, err := cg.namedInputs(inputs)
	if err != nil {
		return err
	}
	ins := cg.g.Inputs()
	for i, b := range data {
		if b == nil {
			continue
		}
		if err := cg.x.Write(ins[i], b); err != nil {
			return err
		}
	}
	return cg.execute()
}

// namedInputs checks the params and matches named inputs to graph
// inputs, converted to their dtypes: the bytes of every input by slot,
// nil for those bound to a handle.
func (cg *CompiledGraph) namedInputs(inputs []TypedInput) ([][]byte, error) {
	if cg.closed {
		return nil, errClosed
	}
	if err := cg.checkParams(); err != nil {
		return nil, err
	}
	ins := cg.g.Inputs()
	data := make([][]byte, len(ins)) // converted bytes by slot; nil if not given
	for _, in := range inputs {
		i := cg.inputIndex(in.Name)
		if i < 0 {
			return nil, fmt.Errorf("kiln: no input %q (inputs: %s)", in.Name, names(ins))
		}
		if data[i] != nil {
			return nil, fmt.Errorf("kiln: input %q given twice", in.Name)
		}
		if cg.handleFor(i) != nil {
			return nil, fmt.Errorf("kiln: input %q is bound to a handle; leave it out", in.Name)
		}
		b, err := convertTo(ins[i], in.Data, in.DType)
		if err != nil {
			return nil, fmt.Errorf("kiln: input %q: %w", in.Name, err)
		}
		if b == nil { // zero elements: still given
			b = []byte{}
		}
		data[i] = b
	}
	var missing []string
	for i, b := range data {
		if b == nil && cg.handleFor(i) == nil {
			missing = append(missing, ins[i].Name)
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("kiln: missing inputs: %v", missing)
	}
	return data, nil
}

func (cg *CompiledGraph) inputIndex(name string) int {
	for i, n := range cg.g.Inputs() {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// RunSlots is the fastest way to run: float32 inputs by position (the
// order of Inputs(); nil for an input bound to a handle), no name lookups,
// no conversions and no allocation. On the CPU the kernels read each
// input where it lies, without copying it into the arena, when nothing
// else needs the input's slot (it is not also an output, nor reshaped in
// place, nor memory of this graph, such as an earlier output): so the
// inputs must not change while RunSlots runs. It returns the outputs'
// spans in Arena(); Output(i) gives the same data as a slice. Both stay
// valid until the next run.
func (cg *CompiledGraph) RunSlots(inputs ...[]float32) ([]Span, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	if cg.closed {
		return nil, errClosed
	}
	if err := cg.checkParams(); err != nil {
		return nil, err
	}
	ins := cg.g.Inputs()
	if len(inputs) != len(ins) {
		return nil, fmt.Errorf("kiln: RunSlots: %d inputs given, graph has %d", len(inputs), len(ins))
	}
	// Check every input before writing any, so a failed call leaves the
	// arena as the last run left it.
	for i, n := range ins {
		if cg.handleFor(i) != nil {
			if inputs[i] != nil {
				return nil, fmt.Errorf("kiln: RunSlots: input %d %q is bound to a handle; pass nil", i, n.Name)
			}
			continue
		}
		if n.DType != tensor.F32 {
			return nil, fmt.Errorf("kiln: RunSlots: input %d %q is %v; use RunTyped", i, n.Name, n.DType)
		}
		if want := n.Shape.NumElements(); len(inputs[i]) != want {
			return nil, fmt.Errorf("kiln: RunSlots: input %d %q: %v needs %d values, got %d", i, n.Name, n.Shape, want, len(inputs[i]))
		}
	}
	inPlace := cg.cpu != nil && cg.active() == nil // else the arena's input slots are read
	if inPlace {
		defer cg.cpu.UnbindInputs()
	}
	for i, n := range ins {
		if inputs[i] == nil {
			continue // bound to a handle: checked above
		}
		data := tensor.Bytes(inputs[i])
		if inPlace {
			if ok, err := cg.cpu.BindInput(n, data); err != nil || ok {
				if err != nil {
					return nil, fmt.Errorf("kiln: RunSlots: input %d %q: %w", i, n.Name, err)
				}
				continue
			}
		}
		if err := cg.x.Write(n, data); err != nil {
			return nil, fmt.Errorf("kiln: RunSlots: input %d %q: %w", i, n.Name, err)
		}
	}
	if err := cg.execute(); err != nil {
		return nil, err
	}
	return cg.activeSpans(), nil
}

// execute runs once with the inputs already written and the params
// checked: host handles in, run, outputs staged (off-CPU) and fed back
// into host handles. An output feeding a device-resident handle stays on
// the device until something reads it (fetch).
func (cg *CompiledGraph) execute() error {
	if err := cg.writeHandles(); err != nil {
		return err
	}
	if err := cg.runProgram(); err != nil {
		return err
	}
	if err := cg.x.Sync(); err != nil {
		return err
	}
	if cg.cpu == nil {
		for i, o := range cg.g.Outputs() {
			if cg.unstaged[i] = cg.residentFed(i); cg.unstaged[i] {
				continue
			}
			if err := cg.x.Read(o, cg.stage[i]); err != nil {
				return err
			}
		}
	}
	return cg.feedHandles()
}

// outputTensor views output i after a run.
func (cg *CompiledGraph) outputTensor(i int) tensor.Tensor {
	o := cg.g.Outputs()[i]
	if ep := cg.active(); ep != nil {
		eo := ep.g.Outputs()[i]
		return trimPadded(eo, ep.padSrc[i], ep.prog.Values[eo.ID], ep.prog.Values)
	}
	if cg.cpu != nil {
		return trimPadded(o, cg.padSrc[i], cg.cpu.Values[o.ID], cg.cpu.Values)
	}
	return trimPadded(o, cg.padSrc[i], tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: cg.stage[i]}, nil)
}

// Output views output i of the last run as float32. It is nil when i is
// out of range, the output is not F32 or the graph is closed:
// OutputTensor returns an error that says which. The view is valid until
// the next run.
func (cg *CompiledGraph) Output(i int) []float32 {
	if cg.closed || i < 0 || i >= len(cg.spans) || cg.g.Outputs()[i].DType != tensor.F32 || cg.fetch(i) != nil {
		return nil
	}
	return tensor.Elems[float32](cg.outputTensor(i).Data)
}

// OutputTensor views output i of the last run in its declared dtype.
func (cg *CompiledGraph) OutputTensor(i int) (tensor.Tensor, error) {
	if cg.closed {
		return tensor.Tensor{}, errClosed
	}
	if i < 0 || i >= len(cg.spans) {
		return tensor.Tensor{}, fmt.Errorf("kiln: no output %d (graph has %d)", i, len(cg.spans))
	}
	if err := cg.fetch(i); err != nil {
		return tensor.Tensor{}, err
	}
	return cg.outputTensor(i), nil
}

// Arena is the CPU activation arena (nil on other devices): the memory
// RunSlots' spans point into.
func (cg *CompiledGraph) Arena() []byte {
	if cg.cpu == nil || cg.closed {
		return nil
	}
	return cg.activeArena()
}

// RunRaw runs with named float32 inputs and returns views of the outputs
// (float32 outputs only; nil for others), valid until the next run.
func (cg *CompiledGraph) RunRaw(inputs ...Input) ([][]float32, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	if err := cg.runNamed(typedF32(inputs)); err != nil {
		return nil, err
	}
	outs := make([][]float32, len(cg.spans))
	for i := range outs {
		outs[i] = cg.Output(i)
	}
	return outs, nil
}

// Clone makes a compiled graph that shares the weights read-only and owns
// its arena and handles, so it can run concurrently with the original.
// Params set later on either are seen by both.
func (cg *CompiledGraph) Clone() (*CompiledGraph, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return nil, errClosed
	}
	x, err := cg.x.Clone()
	if err != nil {
		return nil, err
	}
	c := newCompiled(cg.sess, cg.g, cg.plan, x, cg.fusion)
	c.paramSet = cg.paramSet // shared weights: set once, set for all
	c.weights = cg.weights   // and written while none of the clones runs
	cg.cloneMoE(c)
	for _, h := range cg.handles {
		if h.dev != nil { // the executable's clone copied the value
			h.dev = x.(exec.Resident)
		} else {
			h.data = append([]byte(nil), h.data...)
		}
		c.handles = append(c.handles, h)
	}
	if cg.extent != nil {
		if err := c.SetActiveExtent(cg.extent.actual, cg.extent.upper); err != nil {
			return nil, err
		}
	}
	return c, nil
}
