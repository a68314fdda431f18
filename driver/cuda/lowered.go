package cuda

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
)

// Location is a place in a program's device memory: a plan region (the
// arena or the weights) and a byte offset into it.
type Location struct {
	Region plan.Region
	Offset int
}

// Step is one step of a lowered program: a kernel launch (Kernel
// non-nil; Args are its pointer parameters, in order) or a
// device-to-device copy of Bytes bytes. A custom op's kernel (Module
// set) lives in that module, not the program's, and takes Scalars after
// its pointers.
type Step struct {
	Node             *graph.Node
	Kernel           *ptx.Kernel
	Args             []Location
	CopyTo, CopyFrom Location
	Bytes            int
	Module           string
	Scalars          []any
}

// Lower is the device-independent half of the backend's Lower: the PTX
// module and the steps the backend would launch, in order, for a fused
// and planned graph. It needs no driver, so tools can run a program
// without a GPU (internal/ptxemu's end-to-end test runs the steps in its
// emulator). The steps are the program with every MoE expert resident;
// the module also holds the kernels a residency split launches instead
// (moe.go), which needs the backend's host step.
func Lower(g *graph.Graph, p *plan.Plan) (module string, steps []Step, err error) {
	lw, err := lowerGraph(g, p)
	if err != nil {
		return "", nil, err
	}
	loc := func(r ref) Location { return Location{Region: r.region, Offset: r.offset} }
	for _, s := range lw.steps {
		st := Step{Node: s.node, Kernel: s.kernel, CopyTo: loc(s.copyTo), CopyFrom: loc(s.copyFr), Bytes: s.bytes}
		for _, r := range s.ptrs {
			st.Args = append(st.Args, loc(r))
		}
		if s.custom != nil {
			st.Module, st.Scalars = s.custom.module, s.custom.scalars
		}
		steps = append(steps, st)
	}
	return lw.module, steps, nil
}
