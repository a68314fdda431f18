package onnx

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// nmsConsumers extends nmsGraph (run-time boxes and scores, max 3 a
// class: a bound of 3 rows) with what detection exports do with the
// selection: the box indices (column 2), the selected boxes and scores
// gathered by them, the boxes doubled and joined with their scores, and
// the indices cast to float. Outputs: sel, joined, idxf.
func nmsConsumers() *GraphProto {
	g := nmsGraph(nmsNode(), false, false,
		nd("Gather", []string{"sel", "two"}, []string{"idx"}, intAttr("axis", 1)),
		nd("Reshape", []string{"boxes", "flat4"}, []string{"b2"}),
		nd("Gather", []string{"b2", "idx"}, []string{"picked"}, intAttr("axis", 0)),
		nd("Reshape", []string{"scores", "flat"}, []string{"s1"}),
		nd("Gather", []string{"s1", "idx"}, []string{"sc"}, intAttr("axis", 0)),
		nd("Mul", []string{"picked", "k2"}, []string{"scaled"}),
		nd("Unsqueeze", []string{"sc", "one"}, []string{"sc2"}),
		nd("Concat", []string{"scaled", "sc2"}, []string{"joined"}, intAttr("axis", 1)),
		nd("Cast", []string{"idx"}, []string{"idxf"}, intAttr("to", int64(typeFloat))),
	)
	g.Initializers = append(g.Initializers, i64Init("two", nil, 2), i64Init("flat4", []int64{2}, -1, 4),
		i64Init("flat", []int64{1}, -1), i64Init("one", []int64{1}, 1), f32Init("k2", nil, 2))
	g.Outputs = []*ValueInfo{tensorInfo("sel", typeInt64, 2, 3), tensorInfo("joined", typeFloat, 2, 5), tensorInfo("idxf", typeFloat, 2)}
	return g
}

// TestNMSFeedsNodes: nodes reading NonMaxSuppression's selection row by
// row compute at its bound (3 rows) and their outputs come back trimmed
// to the selection's 2 rows, with the values worked out by hand from the
// suite's suppress_by_IOU data: boxes 3 then 0 are selected ([0 10 1
// 11] and [0 0 1 1], scores 0.95 and 0.9). The model declares the
// counts of one run (2 rows), as exporters do.
func TestNMSFeedsNodes(t *testing.T) {
	m, err := Parse(encModel(model(13, nmsConsumers())))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := m.SetParams(cg); err != nil {
		t.Fatal(err)
	}
	boxes := []float32{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}
	scores := []float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.3}
	bx, err := tensor.FromF32(tensor.Shape{1, 6, 4}, boxes)
	if err != nil {
		t.Fatal(err)
	}
	sx, err := tensor.FromF32(tensor.Shape{1, 1, 6}, scores)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second run reuses the plan: nothing stale
		outs, err := cg.RunTyped(kiln.TypedInput{Name: "boxes", DType: tensor.F32, Data: bx.Data},
			kiln.TypedInput{Name: "scores", DType: tensor.F32, Data: sx.Data})
		if err != nil {
			t.Fatal(err)
		}
		view := func(i int) tensor.Tensor {
			return tensor.Tensor{DType: outs[i].DType, Shape: outs[i].Shape, Data: outs[i].Data}
		}
		if sel := view(0); !sel.Shape.Equal(tensor.Shape{2, 3}) || !slices.Equal(sel.I64(), []int64{0, 0, 3, 0, 0, 0}) {
			t.Fatalf("sel %v %v", sel.Shape, sel.I64())
		}
		joined, idxf := view(1), view(2)
		if !joined.Shape.Equal(tensor.Shape{2, 5}) || !idxf.Shape.Equal(tensor.Shape{2}) {
			t.Fatalf("joined %v, idxf %v: want [2 5] and [2]", joined.Shape, idxf.Shape)
		}
		approx.Slices(t, "joined", joined.F32(), []float32{0, 20, 2, 22, 0.95, 0, 0, 2, 2, 0.9}, 0, 0)
		approx.Slices(t, "idxf", idxf.F32(), []float32{3, 0}, 0, 0)
	}
}

// TestNMSReadAcrossRows: a node mixing the selection's rows (a sum over
// them would count the -1 filler) is refused at import, naming it.
func TestNMSReadAcrossRows(t *testing.T) {
	g := nmsGraph(nmsNode(), false, false,
		nd("ReduceSum", []string{"sel"}, []string{"y"}, intAttr("keepdims", 0)))
	g.Outputs = []*ValueInfo{tensorInfo("y", typeInt64)}
	_, err := Parse(encModel(model(11, g)))
	if err == nil || !strings.Contains(err.Error(), "ReduceSum") || !strings.Contains(err.Error(), "other than row by row") {
		t.Fatalf("got %v, want the ReduceSum refused for reading the padded rows", err)
	}
}
