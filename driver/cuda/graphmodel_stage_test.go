package cuda

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestStageInputs: named float32 inputs land in their staging buffers in
// each input's dtype, and every bad call fails before writing any.
func TestStageInputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 2)
	ids := g.Input("ids", tensor.I64, 3)
	ins := []*graph.Node{x, ids}
	dst := [][]byte{make([]byte, 16), make([]byte, 24)}
	xs, is := []float32{1, -2, 3.5, 0}, []float32{4, 0, 7}
	if err := stageInputs(ins, []kiln.Input{kiln.In("ids", is), kiln.In("x", xs)}, dst, none); err != nil {
		t.Fatal(err)
	}
	if got := tensor.Elems[float32](dst[0]); !slices.Equal(got, xs) {
		t.Errorf("x staged as %v", got)
	}
	if got := tensor.Elems[int64](dst[1]); !slices.Equal(got, []int64{4, 0, 7}) {
		t.Errorf("ids staged as %v", got)
	}
	before := [][]byte{bytes.Clone(dst[0]), bytes.Clone(dst[1])}
	for _, c := range []struct {
		name string
		in   []kiln.Input
		want string
	}{
		{"unknown", []kiln.Input{kiln.In("x", xs), kiln.In("y", is)}, `no input "y" (inputs: x, ids)`},
		{"twice", []kiln.Input{kiln.In("x", xs), kiln.In("x", xs)}, `"x" given twice`},
		{"size", []kiln.Input{kiln.In("x", xs[:3]), kiln.In("ids", is)}, "needs 4 values, got 3"},
		{"missing", []kiln.Input{kiln.In("x", []float32{9, 9, 9, 9})}, "missing inputs: ids (1 given, graph has 2)"},
		{"none", nil, "missing inputs: x, ids"},
	} {
		err := stageInputs(ins, c.in, dst, none)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if !bytes.Equal(dst[0], before[0]) || !bytes.Equal(dst[1], before[1]) {
			t.Fatalf("%s: a failed call changed the staging buffers", c.name)
		}
	}
}

// none: no input is a handle.
func none(*graph.Node) bool { return false }
