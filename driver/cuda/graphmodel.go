package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// ErrNotCUDA: NewGraphModel was given a graph compiled for another device.
var ErrNotCUDA = errors.New("cuda: compiled graph does not run on CUDA")

var errModelClosed = errors.New("cuda: graph model is closed")

// GraphModel replays a compiled graph's whole forward pass, captured once
// into a CUDA graph, with one cuGraphLaunch per run: the per-kernel launch
// overhead of a run is paid once, at capture. Shapes are the compiled
// ones. Inputs and outputs pass through page-locked (pinned) staging
// buffers; RunInPlace uses them directly and allocates nothing.
//
// A GraphModel owns a clone of the compiled graph's program (its own
// arena and stream, the weights shared), so it outlives the
// CompiledGraph, and params set there later are seen here. GPU handles
// (kiln's BindGPUHandle) are copied into the model with their feeds, and
// the capture holds their device-to-device copies: such an input is left
// out of Run (its InputSlice is empty), an output feeding one stays on the
// device (its OutputSlice is empty; Run reads it from there), and
// ReadGPUHandle reads the model's copy. Host handles (BindHandle) are not
// fed: their inputs are inputs here. A program whose MoE residency masks
// split a layer between the GPU and the host cannot be captured (the
// host's step is no graph node): NewGraphModel fails naming the layer;
// masks set on the compiled graph later do not reach the model, and its
// replays are not counted by kiln's MoE capture and stats. A GraphModel is not safe for
// concurrent use.
type GraphModel struct {
	pr         *program
	ins, outs  []*graph.Node
	inPin      *pinned
	outPin     *pinned
	inSl       [][]byte // pinned views, by input
	outSl      [][]byte // pinned views, by output
	inDev      []Ptr    // device addresses of the inputs, outputs
	outDev     []Ptr
	graph      uintptr // CUgraph
	exec       uintptr // CUgraphExec
	start, end *Event
	timed      bool
	inBytes    int64 // staged bytes per replay, each way (Transfers)
	outBytes   int64
	ms         float32    // cuEventElapsedTime writes here: no allocation
	argv       [4]uintptr // driver-call arguments (drv)
	replayFn   func() error
	closed     bool
}

// NewGraphModel captures cg, compiled for a CUDA device with every param
// set, into a CUDA graph. It fails with ErrNotCUDA for another device, and
// with ErrUnavailable when the driver lacks the graph API.
func NewGraphModel(cg *kiln.CompiledGraph) (*GraphModel, error) {
	if cg == nil {
		return nil, fmt.Errorf("cuda: NewGraphModel: nil compiled graph")
	}
	x, err := cg.Executable()
	if err != nil {
		return nil, fmt.Errorf("cuda: NewGraphModel: %w", err)
	}
	src, ok := x.(*program)
	if !ok {
		return nil, fmt.Errorf("%w (it was compiled for %v)", ErrNotCUDA, cg.Device())
	}
	if err := src.sh.d.l.need(groupGraphs); err != nil {
		return nil, err
	}
	c, err := src.Clone()
	if err != nil {
		return nil, err
	}
	m := &GraphModel{pr: c.(*program), ins: src.sh.g.Inputs(), outs: src.sh.g.Outputs()}
	m.replayFn = m.replay
	if err := m.init(); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// init stages the inputs and outputs, creates the timing events and
// captures the graph.
func (m *GraphModel) init() error {
	d := m.pr.sh.d
	var err error
	if m.inPin, m.inSl, m.inDev, err = m.stage(m.ins); err != nil {
		return err
	}
	if m.outPin, m.outSl, m.outDev, err = m.stage(m.outs); err != nil {
		return err
	}
	m.countStaged()
	if m.start, err = d.NewEvent(); err != nil {
		return err
	}
	if m.end, err = d.NewEvent(); err != nil {
		return err
	}
	m.graph, m.exec, err = capture(m.pr)
	return err
}

// stage allocates pinned memory for nodes and finds their device
// addresses. Nodes that stay on the device (handles and the outputs
// feeding them: onDevice) get no staging.
func (m *GraphModel) stage(nodes []*graph.Node) (*pinned, [][]byte, []Ptr, error) {
	sizes, dev := make([]int, len(nodes)), make([]Ptr, len(nodes))
	for i, n := range nodes {
		buf, off, size, err := m.pr.slot(n)
		if err != nil {
			return nil, nil, nil, err
		}
		if m.onDevice(n) {
			size = 0
		}
		sizes[i], dev[i] = size, buf.Ptr+Ptr(off)
	}
	pm, views, err := newPinned(m.pr.sh.d, nodes, sizes)
	return pm, views, dev, err
}

// InputSlice is input i's pinned staging buffer, in the input's dtype
// (tensor.Elems[float32] views an F32 one). Fill it, then RunInPlace. It
// is nil for a bad index or after Close, when it must not be used.
func (m *GraphModel) InputSlice(i int) []byte {
	if m.closed || i < 0 || i >= len(m.inSl) {
		return nil
	}
	return m.inSl[i]
}

// OutputSlice is output i's pinned staging buffer, in the output's dtype,
// valid after RunInPlace until the next run (nil like InputSlice).
func (m *GraphModel) OutputSlice(i int) []byte {
	if m.closed || i < 0 || i >= len(m.outSl) {
		return nil
	}
	return m.outSl[i]
}

// OutputShapes are the outputs' shapes, in output order.
func (m *GraphModel) OutputShapes() [][]int {
	s := make([][]int, len(m.outs))
	for i, o := range m.outs {
		s[i] = append([]int(nil), o.Shape...)
	}
	return s
}

// RunInPlace copies the pinned inputs to the device, replays the graph,
// copies the outputs back to the pinned outputs and waits: a few driver
// calls and no allocation.
func (m *GraphModel) RunInPlace() error {
	_, err := m.run(false)
	return err
}

// RunTimedInPlace is RunInPlace that also returns the GPU milliseconds of
// the graph launch alone (CUDA events around it; the copies excluded).
func (m *GraphModel) RunTimedInPlace() (float32, error) { return m.run(true) }

// Run stages float32 inputs by name (converted to each input's dtype;
// every input once), replays the graph and returns every output as
// float32, like CompiledGraph.Run.
func (m *GraphModel) Run(inputs ...kiln.Input) ([][]float32, error) {
	outs, _, err := m.runCopy(inputs, false)
	return outs, err
}

// RunTimed is Run that also returns the GPU milliseconds of the graph
// launch alone.
func (m *GraphModel) RunTimed(inputs ...kiln.Input) ([][]float32, float32, error) {
	return m.runCopy(inputs, true)
}

func (m *GraphModel) runCopy(inputs []kiln.Input, timed bool) ([][]float32, float32, error) {
	if m.closed {
		return nil, 0, errModelClosed
	}
	if err := stageInputs(m.ins, inputs, m.inSl, m.onDevice); err != nil {
		return nil, 0, err
	}
	ms, err := m.run(timed)
	if err != nil {
		return nil, 0, err
	}
	outs := make([][]float32, len(m.outs))
	for i, o := range m.outs {
		b := m.outSl[i]
		if m.onDevice(o) { // feeds a handle: read it where it stays
			b = make([]byte, m.pr.sh.p.Slots[o.ID].Bytes)
			if err := m.pr.Read(o, b); err != nil {
				return nil, 0, err
			}
		}
		src, err := tensor.View(o.DType, o.Shape, b)
		if err != nil {
			return nil, 0, err
		}
		wide := tensor.New(tensor.F32, o.Shape...)
		if err := tensor.Convert(wide, src); err != nil {
			return nil, 0, err
		}
		outs[i] = wide.F32()
	}
	return outs, ms, nil
}

// run replays once; timed brackets the launch with events.
func (m *GraphModel) run(timed bool) (float32, error) {
	if m.closed {
		return 0, errModelClosed
	}
	m.timed, m.ms = timed, 0
	if err := m.pr.sh.d.do(m.replayFn); err != nil {
		return 0, fmt.Errorf("cuda: graph model: %w", err)
	}
	return m.ms, nil
}

// replay is the driver-call sequence of one run; the caller holds the
// context. Host addresses are pinned memory, outside Go's heap.
func (m *GraphModel) replay() error {
	l, s := m.pr.sh.d.l, m.pr.stream.h
	for i, b := range m.inSl {
		if len(b) > 0 {
			if err := m.drv("cuMemcpyHtoDAsync", l.cuMemcpyHtoDAsync, uintptr(m.inDev[i]), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), s); err != nil {
				return err
			}
		}
	}
	if m.timed {
		if err := m.drv("cuEventRecord", l.cuEventRecord, m.start.h, s); err != nil {
			return err
		}
	}
	if err := m.drv("cuGraphLaunch", l.cuGraphLaunch, m.exec, s); err != nil {
		return err
	}
	if m.timed {
		if err := m.drv("cuEventRecord", l.cuEventRecord, m.end.h, s); err != nil {
			return err
		}
	}
	for i, b := range m.outSl {
		if len(b) > 0 {
			if err := m.drv("cuMemcpyDtoHAsync", l.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(m.outDev[i]), uintptr(len(b)), s); err != nil {
				return err
			}
		}
	}
	if err := m.drv("cuStreamSynchronize", l.cuStreamSynchronize, s); err != nil {
		return err
	}
	m.pr.up.Add(m.inBytes)
	m.pr.down.Add(m.outBytes)
	if !m.timed {
		return nil
	}
	return m.drv("cuEventElapsedTime", l.cuEventElapsedTime, uintptr(unsafe.Pointer(&m.ms)), m.start.h, m.end.h)
}

// drv calls a driver function through m's argument buffer: call would
// allocate an argument slice per call, RunInPlace must not. &m.ms, the
// one Go address passed, is a field of m, which the caller holds.
func (m *GraphModel) drv(op string, fn uintptr, args ...uintptr) error {
	n := copy(m.argv[:], args)
	return m.pr.sh.d.l.check(op, callArgs(fn, m.argv[:n]))
}

// Close releases the graph, the pinned buffers, the events and the
// model's program. A second Close is a no-op; other methods then fail.
func (m *GraphModel) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	d := m.pr.sh.d
	err := errors.Join(destroyGraph(d, m.graph, m.exec), m.start.Destroy(), m.end.Destroy(),
		m.inPin.free(), m.outPin.free(), m.pr.Close())
	m.graph, m.exec, m.inSl, m.outSl = 0, 0, nil, nil
	return err
}
