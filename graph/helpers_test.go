package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// in declares an input with a generated unique name.
func in(g *Graph, dt tensor.DType, dims ...int) *Node {
	return g.Input(fmt.Sprintf("in%d", len(g.Nodes)), dt, dims...)
}

// f32 declares an F32 input.
func f32(g *Graph, dims ...int) *Node { return in(g, tensor.F32, dims...) }

// sh is a shape literal that is never nil, so a scalar reads as sh().
func sh(dims ...int) tensor.Shape { return append(tensor.Shape{}, dims...) }

// mustContain fails unless err is non-nil and mentions every word.
func mustContain(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}
