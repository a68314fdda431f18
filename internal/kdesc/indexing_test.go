package kdesc

import (
	"reflect"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestDescribeIndexing: an indexing node carries its shapes, index dtype
// and attributes, and reads all three of a scatter's inputs.
func TestDescribeIndexing(t *testing.T) {
	g := graph.New()
	x, i, u := g.Input("x", tensor.F16, 4, 3), g.Input("i", tensor.I32, 2, 1), g.Input("u", tensor.F16, 2, 3)
	sc := g.ScatterND(x, i, u, graph.ScatterMax)
	ge := g.GatherElements(x, g.Input("j", tensor.I64, 4, 5), -1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	d, ins, err := Describe("k", sc)
	want := &Scatter{Indexing{Name: "k", Op: graph.OpScatterND, DType: tensor.F16, Index: tensor.I32, Data: []int{4, 3},
		Indices: []int{2, 1}, Reduction: graph.ScatterMax}}
	if err != nil || !reflect.DeepEqual(d, want) || len(ins) != 3 || KindOf(graph.OpScatterND) != KindScatter {
		t.Errorf("ScatterND: %+v %v %v", d, ins, err)
	}
	if d, _, err := Describe("k", ge); err != nil || d.(*Indexing).Axis != 1 || d.(*Indexing).Index != tensor.I64 {
		t.Errorf("GatherElements: %+v %v", d, err)
	}
	if _, err := IndexingOf("k", sc); err == nil {
		t.Error("IndexingOf(ScatterND): no error")
	}
	if _, err := ScatterOf("k", ge); err == nil {
		t.Error("ScatterOf(GatherElements): no error")
	}
}
