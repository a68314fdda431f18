package kiln

import (
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// TestPaddedOutputRows runs NonMaxSuppression, whose result length
// depends on the scores, twice on one compiled graph: each run returns
// only the selected rows (hand-computed: boxes 1 and 2 overlap box 0 with
// IoU 0.82, box 4 overlaps box 3), while the arena span keeps the bound.
func TestPaddedOutputRows(t *testing.T) {
	g := graph.New()
	boxes := g.Input("boxes", tensor.F32, 1, 6, 4)
	scores := g.Input("scores", tensor.F32, 1, 1, 6)
	g.Output(g.NonMaxSuppression(boxes, scores, graph.NMSSpec{MaxPerClass: 5, IOU: 0.5, MinScore: 0.4, HasMinScore: true}))
	cg, err := NewSession(CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	b := []float32{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}
	for _, c := range []struct {
		scores []float32
		want   []int64
	}{
		{[]float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.3}, []int64{0, 0, 3, 0, 0, 0}},          // box 5 under the 0.4 floor
		{[]float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.8}, []int64{0, 0, 3, 0, 0, 0, 0, 0, 5}}, // box 5 selected
	} {
		outs, err := cg.RunTyped(TypedInput{Name: "boxes", Data: tensor.Bytes(b), DType: tensor.F32},
			TypedInput{Name: "scores", Data: tensor.Bytes(c.scores), DType: tensor.F32})
		if err != nil {
			t.Fatal(err)
		}
		got := tensor.Tensor{DType: outs[0].DType, Shape: outs[0].Shape, Data: outs[0].Data}
		if want := (tensor.Shape{len(c.want) / 3, 3}); !got.Shape.Equal(want) || !slices.Equal(got.I64(), c.want) {
			t.Errorf("scores %v: got %v %v, want %v %v", c.scores, got.Shape, got.I64(), want, c.want)
		}
		v, err := cg.OutputTensor(0)
		if err != nil || !v.Shape.Equal(got.Shape) {
			t.Errorf("OutputTensor: %v, %v; want shape %v", v.Shape, err, got.Shape)
		}
	}
	if spans := cg.spans; len(spans) != 1 || spans[0].Len != 5*3 {
		t.Errorf("spans %v, want one of the 5×3 bound", spans)
	}
}

// TestPaddedDerivedRows: values computed from the selection row by row
// (its box indices, gathered by column, cast and put through arithmetic
// that fusion merges) come back trimmed to the selection's rows of each
// run, counted on the selection, while a node summing over the rows is
// refused at Compile, naming it.
func TestPaddedDerivedRows(t *testing.T) {
	g := graph.New()
	boxes := g.Input("boxes", tensor.F32, 1, 6, 4)
	scores := g.Input("scores", tensor.F32, 1, 1, 6)
	sel := g.NonMaxSuppression(boxes, scores, graph.NMSSpec{MaxPerClass: 5, IOU: 0.5, MinScore: 0.4, HasMinScore: true})
	two, err := tensor.FromI64(tensor.Shape{}, []int64{2})
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tensor.FromF32(tensor.Shape{}, []float32{10})
	if err != nil {
		t.Fatal(err)
	}
	idx := g.Gather(sel, g.Constant(two), 1)                                                  // [5]
	picked := g.Gather(g.Reshape(boxes, 6, 4), idx, 0)                                        // [5, 4]
	g.Output(g.Add(g.Mul(g.Cast(idx, tensor.F32), g.Constant(ten)), g.Constant(ten)), picked) // 10·idx + 10
	cg, err := NewSession(CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	b := []float32{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}
	for _, c := range []struct {
		scores       []float32
		want, wantPk []float32
	}{
		{[]float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.3}, []float32{40, 10}, []float32{0, 10, 1, 11, 0, 0, 1, 1}},
		{[]float32{0.9, 0.75, 0.6, 0.95, 0.5, 0.8}, []float32{40, 10, 60}, []float32{0, 10, 1, 11, 0, 0, 1, 1, 0, 100, 1, 101}},
	} {
		outs, err := cg.Run(In("boxes", b), In("scores", c.scores))
		if err != nil {
			t.Fatal(err)
		}
		approx.Slices(t, "10·idx + 10", outs[0], c.want, 0, 0)
		approx.Slices(t, "picked boxes", outs[1], c.wantPk, 0, 0)
	}

	bad := graph.New()
	sel = bad.NonMaxSuppression(bad.Input("boxes", tensor.F32, 1, 6, 4), bad.Input("scores", tensor.F32, 1, 1, 6), graph.NMSSpec{MaxPerClass: 5})
	bad.Output(bad.ReduceSum(bad.Cast(sel, tensor.F32), false, 0))
	if _, err := NewSession(CPU).Compile(bad); err == nil || !strings.Contains(err.Error(), "ReduceSum") {
		t.Errorf("a sum over the selection's rows compiled (err %v)", err)
	}
}
