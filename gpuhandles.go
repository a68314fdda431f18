package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/tensor"
)

// GPU handles are handles that live where the graph runs. On CUDA the
// value sits in device memory: the program reads it there, a fed output
// reaches it by a device-to-device copy after each run (or none, when the
// memory plan leaves the output in the handle's bytes; plan.Residence),
// the copies are part of the run (so a cuda.GraphModel captures and
// replays them), and the host sees the value only when it binds or reads
// it. On Metal it is a private MTLBuffer fed the same way. On the CPU,
// where host memory is device memory, a GPU handle is a host handle
// (BindHandle): the same calls work everywhere with the same results.
//
// A name has one handle: BindHandle and BindGPUHandle on the same input
// bind the same handle (BindGPUHandle moves a host handle to the device),
// FeedHandle and SetGPUHandleFeed set the same feed, ReadHandle and
// ReadGPUHandle read the same value. Clone copies every handle, so each
// clone decodes on its own.

// BindGPUHandle binds a persistent buffer kept on the device to the input
// of the same name, with data (float32, narrowed to an F16 or BF16 input)
// as its value: like BindHandle, the input is then left out of Run (nil in
// RunSlots). Binding again replaces the value (one host-to-device copy).
func (cg *CompiledGraph) BindGPUHandle(name string, data []float32) error {
	return cg.BindGPUHandleTyped(name, tensor.Bytes(data), tensor.F32)
}

// BindGPUHandleTyped is BindGPUHandle with data as raw little-endian
// bytes of dtype dt, converted to the input's dtype at the boundary: an
// F16 or BF16 KV cache is bound from its own bytes, with no float32 copy.
func (cg *CompiledGraph) BindGPUHandleTyped(name string, data []byte, dt tensor.DType) error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return errClosed
	}
	i := cg.inputIndex(name)
	if i < 0 {
		return fmt.Errorf("kiln: BindGPUHandle: no input %q (inputs: %s)", name, names(cg.g.Inputs()))
	}
	b, err := convertTo(cg.g.Inputs()[i], data, dt)
	if err != nil {
		return fmt.Errorf("kiln: BindGPUHandle %q: %w", name, err)
	}
	return cg.bind(i, b, true)
}

// HasGPUHandle reports whether BindGPUHandle bound a handle to the input
// name. It is false for a handle bound with BindHandle only, for an
// unknown name, once cg is closed, and while another goroutine is inside
// one of cg's methods (ErrConcurrentUse, which a bool cannot carry).
func (cg *CompiledGraph) HasGPUHandle(name string) bool {
	if err := cg.acquire(useGraph); err != nil {
		return false
	}
	defer cg.release(useGraph)
	if cg.closed {
		return false
	}
	h := cg.handleFor(cg.inputIndex(name))
	return h != nil && h.gpu
}

// SetGPUHandleFeed makes output (its index; the handle's dtype and shape)
// flow into the handle name on the device after every run: the KV-cache
// pattern, with the cache never leaving the device. Such an output is
// not copied to the host by a run; reading it (Run's result, Output,
// OutputTensor, RunTyped) copies it then.
func (cg *CompiledGraph) SetGPUHandleFeed(name string, output int) error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	return cg.setFeed("SetGPUHandleFeed", name, output)
}

// ReadGPUHandle copies a handle's value to the host as float32 (widened
// from F16 or BF16): one device-to-host copy.
func (cg *CompiledGraph) ReadGPUHandle(name string) ([]float32, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	return cg.readF32("ReadGPUHandle", name)
}

// ReadGPUHandleTyped copies a handle's value to the host in its dtype.
func (cg *CompiledGraph) ReadGPUHandleTyped(name string) (TypedOutput, error) {
	if err := cg.acquire(useGraph); err != nil {
		return TypedOutput{}, err
	}
	defer cg.release(useGraph)
	v, err := cg.read("ReadGPUHandle", name)
	if err != nil {
		return TypedOutput{}, err
	}
	return TypedOutput{Data: v.Data, DType: v.DType, Shape: v.Shape}, nil
}

// RunFeedGPUHandle runs with named inputs (the handle's input left out),
// then refreshes the handle name from output on the device, for this run
// (SetGPUHandleFeed does it after every run), and returns that output as
// float32: the seed's run_feed_gpu_handle.
func (cg *CompiledGraph) RunFeedGPUHandle(inputs []Input, name string, output int) ([]float32, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	if err := cg.runFeed(typedF32(inputs), name, output); err != nil {
		return nil, err
	}
	v := cg.outputTensor(output)
	if v.DType == tensor.F32 {
		return append([]float32(nil), tensor.Elems[float32](v.Data)...), nil
	}
	wide := tensor.New(tensor.F32, v.Shape...)
	if err := tensor.Convert(wide, v); err != nil {
		return nil, err
	}
	return wide.F32(), nil
}

// RunFeedGPUHandleTyped is RunFeedGPUHandle with typed inputs, returning
// the output in its declared dtype.
func (cg *CompiledGraph) RunFeedGPUHandleTyped(inputs []TypedInput, name string, output int) (TypedOutput, error) {
	if err := cg.acquire(useRun); err != nil {
		return TypedOutput{}, err
	}
	defer cg.release(useRun)
	if err := cg.runFeed(inputs, name, output); err != nil {
		return TypedOutput{}, err
	}
	v := cg.outputTensor(output)
	return TypedOutput{Data: append([]byte(nil), v.Data...), DType: v.DType, Shape: v.Shape.Clone()}, nil
}

// runFeed checks the handle and output, runs, refreshes the handle from
// the output unless its feed already did, and stages that output.
func (cg *CompiledGraph) runFeed(inputs []TypedInput, name string, output int) error {
	h, err := cg.feedable("RunFeedGPUHandle", name, output)
	if err != nil {
		return err
	}
	if err := cg.runNamed(inputs); err != nil {
		return err
	}
	if h.feed != output {
		if h.dev != nil {
			err = h.dev.RefreshResident(h.node, cg.g.Outputs()[output])
		} else {
			err = cg.refreshHost(h, output)
		}
		if err != nil {
			return fmt.Errorf("kiln: RunFeedGPUHandle %q: %w", name, err)
		}
	}
	return cg.fetch(output)
}

// Transfers is what a compiled graph copied between host and device
// memory: ToDevice and ToHost bytes.
type Transfers = exec.Transfers

// Transfers reports the bytes copied between host and device memory
// since compiling (params, inputs and host handles in; outputs read and
// GPU handles read out), for checking what crosses the bus per run: with
// the KV cache in GPU handles, a decode step moves its token in and its
// logits out, nothing that grows with the cache. Zero on the CPU. Safe
// to call while another goroutine runs cg.
func (cg *CompiledGraph) Transfers() Transfers {
	if tc, ok := cg.x.(exec.TransferCounter); ok {
		return tc.Transfers()
	}
	return Transfers{}
}
