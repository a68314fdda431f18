package graph

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// TestEpilogueClipChecked: a FusedConv2D may clip with ordered bounds; a
// FusedMatMul may not, nor a post-residual Clip, NaN or unordered
// bounds, or bounds without a Clip.
func TestEpilogueClipChecked(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 1, 3, 5, 5)
	w := g.Param("w", tensor.F32, 4, 3, 1, 1)
	r := g.Input("r", tensor.F32, 1, 4, 5, 5)
	a := g.Input("a", tensor.F32, 2, 3)
	m := g.Param("m", tensor.F32, 3, 5)
	if _, err := g.Insert(OpFusedConv2D, Attrs{Epilogue: Epilogue{Act: OpClip, Min: 0, Max: 6}}, x, w); err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		op   Op
		e    Epilogue
		ins  []*Node
		want string
	}{
		{"matmul", OpFusedMatMul, Epilogue{Act: OpClip, Max: 6}, []*Node{a, m}, "clips"},
		{"unordered", OpFusedConv2D, Epilogue{Act: OpClip, Min: 2, Max: 1}, []*Node{x, w}, "not ordered"},
		{"nan", OpFusedConv2D, Epilogue{Act: OpClip, Min: nan, Max: 1}, []*Node{x, w}, "not ordered"},
		{"no clip", OpFusedConv2D, Epilogue{Act: OpRelu, Max: 6}, []*Node{x, w}, "without a Clip"},
		{"post", OpFusedConv2D, Epilogue{Residual: true, PostAct: OpClip}, []*Node{x, w, r}, "post-residual"},
	} {
		n, err := g.Insert(c.op, Attrs{Epilogue: c.e}, c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: node %v, error %v; want one containing %q", c.name, n, err, c.want)
		}
	}
}
