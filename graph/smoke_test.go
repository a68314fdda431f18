package graph

import (
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func TestSmokeEncoderBuilds(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 2, 8, 16)
	w := g.Param("wqkv", tensor.F32, 16, 48)
	qkv := g.MatMul(x, w)
	parts := g.Split(qkv, -1, 16, 16, 16)
	heads := func(n *Node) *Node { return g.Transpose(g.Reshape(n, 2, 8, 4, 4), 0, 2, 1, 3) }
	att := g.Attention(heads(parts[0]), heads(parts[1]), heads(parts[2]), nil, AttentionOpts{Causal: true})
	y := g.Reshape(g.Transpose(att, 0, 2, 1, 3), 2, 8, 16)
	y = g.LayerNorm(g.Add(x, y), g.Param("ln_s", tensor.F32, 16), g.Param("ln_b", tensor.F32, 16), -1, 1e-5)
	s := g.Slice(y, SliceSpec{Axes: []int{1}, Starts: []int{-1}, Ends: []int{-100}, Steps: []int{-2}})
	g.Output(g.Gelu(y), s)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if got := s.Shape; !got.Equal(tensor.Shape{2, 4, 16}) {
		t.Fatalf("slice shape %v", got)
	}
	t.Log(Dump(g))
}
