package kiln

import "errors"

// activeExtent is a program specialised to the first actual rows of the
// bucketed axis.
type activeExtent struct {
	actual, upper int
}

// SetActiveExtent is being written (see issue 3); until then it refuses.
func (cg *CompiledGraph) SetActiveExtent(actual, upper int) error {
	return errors.New("kiln: SetActiveExtent: not implemented yet")
}

// runProgram runs the full program, or the active-extent one.
func (cg *CompiledGraph) runProgram() error { return cg.x.Run() }
