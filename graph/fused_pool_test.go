package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// A pooled FusedConv2D has the conv's shape with OH and OW halved,
// rounding down; ConvShape gives the conv's own.
func TestFusedConvPool2x2Shape(t *testing.T) {
	g := New()
	img := g.Input("img", tensor.F32, 2, 3, 9, 7)
	w := g.Param("w", tensor.F32, 4, 3, 3, 3)
	cb := g.Param("cb", tensor.F32, 4)
	for _, c := range []struct {
		a          Attrs
		ins        []*Node
		conv, want tensor.Shape
	}{
		// Pad 1: 9×7 conv output, pooled 4×3 (the odd row and column dropped).
		{Attrs{Pads: []int{1, 1, 1, 1}, Epilogue: Epilogue{Bias: true, Act: OpRelu, Pool2x2: true}}, []*Node{img, w, cb},
			tensor.Shape{2, 4, 9, 7}, tensor.Shape{2, 4, 4, 3}},
		// No pad, no bias: 7×5, pooled 3×2.
		{Attrs{Epilogue: Epilogue{Pool2x2: true}}, []*Node{img, w}, tensor.Shape{2, 4, 7, 5}, tensor.Shape{2, 4, 3, 2}},
	} {
		n, err := g.Insert(OpFusedConv2D, c.a, c.ins...)
		if err != nil {
			t.Fatal(err)
		}
		if !n.Shape.Equal(c.want) {
			t.Errorf("%+v: shape %v, want %v", c.a.Epilogue, n.Shape, c.want)
		}
		s, err := ConvShape(n)
		if err != nil || !s.Equal(c.conv) {
			t.Errorf("%+v: ConvShape %v (%v), want %v", c.a.Epilogue, s, err, c.conv)
		}
		g.Output(n)
	}
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(Dump(g), "Epilogue:{true Relu 0 0 false Invalid true}") {
		t.Errorf("the dump does not show the pooled epilogue:\n%s", Dump(g))
	}
}

func TestFusedConvPool2x2Errors(t *testing.T) {
	g := New()
	img := g.Input("img", tensor.F32, 1, 3, 8, 8)
	w := g.Param("w", tensor.F32, 4, 3, 3, 3)
	r := g.Input("r", tensor.F32, 1, 4, 6, 6)
	thin := g.Input("thin", tensor.F32, 1, 3, 3, 8) // a 1-row conv output
	a := g.Input("a", tensor.F32, 4, 5)
	b := g.Param("b", tensor.F32, 5, 6)
	for _, c := range []struct {
		name string
		op   Op
		e    Epilogue
		ins  []*Node
		want string
	}{
		{"matmul", OpFusedMatMul, Epilogue{Pool2x2: true}, []*Node{a, b}, "only FusedConv2D"},
		{"residual", OpFusedConv2D, Epilogue{Residual: true, Pool2x2: true}, []*Node{img, w, r}, "no residual"},
		{"one row", OpFusedConv2D, Epilogue{Pool2x2: true}, []*Node{thin, w}, "too small"},
	} {
		n, err := g.Insert(c.op, Attrs{Epilogue: c.e}, c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: node %v, error %v; want one containing %q", c.name, n, err, c.want)
		}
	}
	if _, err := ConvShape(img); err == nil {
		t.Error("ConvShape of an Input: no error")
	}
}
