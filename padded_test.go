package kiln

import (
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
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
