package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// activeExtent is the state SetActiveExtent leaves: the extent in use and
// the programs specialised so far, by extent pair. cur is nil when actual
// equals upper (ClearActiveExtent), which runs the full program.
type activeExtent struct {
	actual, upper int
	cur           *extentProgram
	cache         map[[2]int]*extentProgram
}

// extentProgram is the graph resized to an actual extent, lowered over
// the full program's weights.
type extentProgram struct {
	g      *graph.Graph
	prog   *exec.Program
	mirror *exec.Mirror
	ins    []boxCopy // per graph input: the full program's value → this one's
	spans  []Span
	padSrc []*graph.Node // per output: as CompiledGraph.padSrc
}

// boxCopy moves the leading box of src (the full program's input) into
// dst (the specialised program's).
type boxCopy struct {
	dst, src tensor.Tensor
}

// SetActiveExtent makes runs process only the first actual rows of the
// bucketed dims, for a graph compiled at the bucket extent upper. Every
// graph input dim equal to upper, on any axis, is bucketed; the rest of
// the graph follows by shape inference (see graph.Resize for how
// reshapes, slices and the like are adapted).
//
// Inputs are still given at the compiled (upper) size, to Run, RunSlots,
// RunTyped and handles alike; each run copies the first actual rows of
// every bucketed dim into a program compiled for actual (the same
// kernels, so results equal a graph compiled at actual) and runs that.
// Outputs (Run, RunSlots' spans, Output, OutputTensor, Arena) are then
// actual-sized; a handle fed from an output receives it in its first
// rows. Inputs(), Outputs() and Params() keep describing the compiled
// graph. Weights are shared with the full program, so params set before
// or after apply to both.
//
// Specialised programs are cached per extent: switching back is cheap.
// actual == upper runs the full program. It is an error if no input has
// a dim of upper, actual is outside [1, upper], the graph is closed or
// not on the CPU, or the graph cannot be resized (e.g. a param or
// constant whose shape holds the extent).
func (cg *CompiledGraph) SetActiveExtent(actual, upper int) error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	if cg.closed {
		return errClosed
	}
	if cg.cpu == nil {
		return fmt.Errorf("kiln: SetActiveExtent: not supported on %v yet (CPU only)", cg.sess.dev)
	}
	if !cg.hasInputDim(upper) {
		return fmt.Errorf("kiln: SetActiveExtent(%d, %d): no input has a dim of %d; the graph was not compiled at extent %d (inputs: %s)",
			actual, upper, upper, upper, describeInputs(cg.g.Inputs()))
	}
	if actual < 1 || actual > upper {
		return fmt.Errorf("kiln: SetActiveExtent(%d, %d): actual extent must be in [1, %d]", actual, upper, upper)
	}
	e := cg.extent
	if e == nil {
		e = &activeExtent{cache: map[[2]int]*extentProgram{}}
	}
	var cur *extentProgram
	if actual < upper {
		key := [2]int{actual, upper}
		if cur = e.cache[key]; cur == nil {
			var err error
			if cur, err = cg.specialise(actual, upper); err != nil {
				return fmt.Errorf("kiln: SetActiveExtent(%d, %d): %w", actual, upper, err)
			}
			e.cache[key] = cur
		}
	}
	e.actual, e.upper, e.cur = actual, upper, cur
	cg.extent = e
	return nil
}

// ClearActiveExtent returns to running the full compiled size. The
// specialised programs stay cached.
func (cg *CompiledGraph) ClearActiveExtent() {
	if e := cg.extent; e != nil {
		e.actual, e.cur = e.upper, nil
	}
}

// ActiveExtent reports the extent in use: (actual, upper, true) after
// SetActiveExtent with actual < upper, else false.
func (cg *CompiledGraph) ActiveExtent() (actual, upper int, ok bool) {
	if e := cg.extent; e != nil && e.cur != nil {
		return e.actual, e.upper, true
	}
	return 0, 0, false
}

func (cg *CompiledGraph) hasInputDim(d int) bool {
	for _, in := range cg.g.Inputs() {
		for _, x := range in.Shape {
			if x == d {
				return true
			}
		}
	}
	return false
}

func describeInputs(ns []*graph.Node) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n.Name + " " + n.Shape.String()
	}
	return s
}

// specialise resizes the compiled graph to actual, fuses, plans and
// lowers it over the full program's weights.
func (cg *CompiledGraph) specialise(actual, upper int) (*extentProgram, error) {
	rg, err := graph.Resize(cg.g, upper, actual)
	if err != nil {
		return nil, err
	}
	_, p, err := cg.sess.fuseAndPlan(rg)
	if err != nil {
		return nil, err
	}
	prog, mirror, err := exec.LowerShared(rg, p, cg.sess.opts.Exec, cg.cpu)
	if err != nil {
		return nil, err
	}
	ins, full := rg.Inputs(), cg.g.Inputs()
	if len(ins) != len(full) || len(rg.Outputs()) != len(cg.g.Outputs()) {
		return nil, fmt.Errorf("resized graph has %d inputs and %d outputs, want %d and %d",
			len(ins), len(rg.Outputs()), len(full), len(cg.g.Outputs()))
	}
	cg.moe.wrap(prog) // its MoE layers record into cg's capture
	ep := &extentProgram{g: rg, prog: prog, mirror: mirror, padSrc: paddedSources(rg)}
	for i, n := range ins {
		if n.Name != full[i].Name {
			return nil, fmt.Errorf("resized graph's input %d is %q, want %q", i, n.Name, full[i].Name)
		}
		ep.ins = append(ep.ins, boxCopy{dst: prog.Values[n.ID], src: cg.cpu.Values[full[i].ID]})
	}
	for _, o := range rg.Outputs() {
		ep.spans = append(ep.spans, Span{Offset: p.Slots[o.ID].Offset, Len: o.Shape.NumElements()})
	}
	return ep, nil
}

// active is the specialised program in use, or nil for the full one.
func (cg *CompiledGraph) active() *extentProgram {
	if cg.extent == nil {
		return nil
	}
	return cg.extent.cur
}

// runProgram runs the full program, or the active-extent one after
// copying the leading rows of every input into it. It does not allocate.
func (cg *CompiledGraph) runProgram() error {
	ep := cg.active()
	if ep == nil {
		if err := cg.x.Run(); err != nil {
			return err
		}
		cg.moe.pending = cg.moe.placer != nil // its ids are read back when asked (moe.go)
		return nil
	}
	for i := range ep.ins {
		c := &ep.ins[i]
		copyLeading(c.dst.Data, c.dst.Shape, c.src.Data, c.src.Shape, c.dst.DType.Size())
	}
	ep.mirror.Sync()
	return ep.prog.Run()
}

// activeSpans are the output spans of the program in use.
func (cg *CompiledGraph) activeSpans() []Span {
	if ep := cg.active(); ep != nil {
		return ep.spans
	}
	return cg.spans
}

// activeArena is the arena of the program in use.
func (cg *CompiledGraph) activeArena() []byte {
	if ep := cg.active(); ep != nil {
		return ep.prog.Arena
	}
	return cg.cpu.Arena
}

// copyLeading copies the leading box shared by two row-major buffers of
// the same rank (dims min(ds, ss) on every axis) from src to dst: a
// gather from a larger buffer or a scatter into one. Elements are e bytes.
// It recurses once per axis and does not allocate.
func copyLeading(dst []byte, ds tensor.Shape, src []byte, ss tensor.Shape, e int) {
	if len(ds) != len(ss) {
		return
	}
	if len(ds) == 0 {
		copy(dst[:e], src[:e])
		return
	}
	rows := min(ds[0], ss[0])
	dr, sr := e, e // bytes per row
	same := true
	for i := 1; i < len(ds); i++ {
		dr, sr = dr*ds[i], sr*ss[i]
		same = same && ds[i] == ss[i]
	}
	if same { // rows are contiguous in both
		copy(dst[:rows*dr], src[:rows*sr])
		return
	}
	for r := range rows {
		copyLeading(dst[r*dr:], ds[1:], src[r*sr:], ss[1:], e)
	}
}
