package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// TestFusedConvPostAct checks that a post-residual activation is
// accepted only on FusedConv2D, with a residual, and only as an
// epilogue activation.
func TestFusedConvPostAct(t *testing.T) {
	g := New()
	img := g.Input("img", tensor.F32, 1, 3, 8, 8)
	w := g.Param("w", tensor.F32, 4, 3, 3, 3)
	r := g.Input("r", tensor.F32, 1, 4, 6, 6)
	a := g.Input("a", tensor.F32, 4, 5)
	b := g.Param("b", tensor.F32, 5, 6)
	ra := g.Input("ra", tensor.F32, 4, 6)
	n, err := g.Insert(OpFusedConv2D, Attrs{Epilogue: Epilogue{Act: OpRelu, Residual: true, PostAct: OpRelu}}, img, w, r)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Shape.Equal(tensor.Shape{1, 4, 6, 6}) {
		t.Errorf("shape %v", n.Shape)
	}
	for _, c := range []struct {
		name string
		op   Op
		e    Epilogue
		ins  []*Node
		want string
	}{
		{"matmul", OpFusedMatMul, Epilogue{Residual: true, PostAct: OpRelu}, []*Node{a, b, ra}, "only FusedConv2D"},
		{"no residual", OpFusedConv2D, Epilogue{PostAct: OpRelu}, []*Node{img, w}, "needs a residual"},
		{"not an activation", OpFusedConv2D, Epilogue{Residual: true, PostAct: OpAdd}, []*Node{img, w, r}, "needs a residual"},
	} {
		n, err := g.Insert(c.op, Attrs{Epilogue: c.e}, c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: node %v, error %v; want one containing %q", c.name, n, err, c.want)
		}
	}
}
