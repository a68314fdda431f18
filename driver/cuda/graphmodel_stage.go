package cuda

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// stageInputs checks named float32 inputs against the graph's inputs
// (every one given exactly once, known names, the right element counts;
// handles, which resident reports, left out) and only then converts each
// into its staging buffer in dst, in the input's dtype, so a call that
// fails leaves dst as it was.
func stageInputs(ins []*graph.Node, given []kiln.Input, dst [][]byte, resident func(*graph.Node) bool) error {
	at := make([]int, len(ins)) // position in given + 1, by input
	for gi, in := range given {
		i := nodeIndex(ins, in.Name)
		switch {
		case i < 0:
			return fmt.Errorf("cuda: graph model: no input %q (inputs: %s)", in.Name, nodeNames(ins))
		case resident(ins[i]):
			return fmt.Errorf("cuda: graph model: input %q is a GPU handle; leave it out", in.Name)
		case at[i] != 0:
			return fmt.Errorf("cuda: graph model: input %q given twice", in.Name)
		case len(in.Data) != ins[i].Shape.NumElements():
			return fmt.Errorf("cuda: graph model: input %q: %v needs %d values, got %d", in.Name, ins[i].Shape, ins[i].Shape.NumElements(), len(in.Data))
		}
		at[i] = gi + 1
	}
	var missing []string
	for i, n := range ins {
		if at[i] == 0 && !resident(n) {
			missing = append(missing, n.Name)
		}
	}
	if missing != nil {
		return fmt.Errorf("cuda: graph model: missing inputs: %s (%d given, graph has %d)", strings.Join(missing, ", "), len(given), len(ins))
	}
	for i, n := range ins {
		if at[i] == 0 {
			continue // a handle
		}
		src, err := tensor.View(tensor.F32, n.Shape, tensor.Bytes(given[at[i]-1].Data))
		if err != nil {
			return err
		}
		out, err := tensor.View(n.DType, n.Shape, dst[i])
		if err != nil {
			return err
		}
		if err := tensor.Convert(out, src); err != nil {
			return fmt.Errorf("cuda: graph model: input %q: %w", n.Name, err)
		}
	}
	return nil
}

func nodeIndex(ns []*graph.Node, name string) int {
	for i, n := range ns {
		if n.Name == name {
			return i
		}
	}
	return -1
}

func nodeNames(ns []*graph.Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.Name
	}
	return strings.Join(s, ", ")
}
