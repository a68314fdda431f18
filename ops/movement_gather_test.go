package ops

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestMovementGatherAxis0(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.I32, 3, 2)
	idx := g.Input("i", tensor.I64, 4)
	iv, _ := tensor.FromI64(tensor.Shape{4}, []int64{-1, 0, -3, 2})
	got := mvEval(t, g, g.Gather(x, idx, 0), map[string]tensor.Tensor{"x": mvIota(tensor.Shape{3, 2}), "i": iv})
	mvWantI32(t, got, tensor.Shape{4, 2}, 4, 5, 0, 1, 0, 1, 4, 5)
}

func TestMovementGatherMiddleAxis(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.I32, 2, 3, 2)
	idx := g.Input("i", tensor.I32, 2, 2)
	got := mvEval(t, g, g.Gather(x, idx, -2), map[string]tensor.Tensor{
		"x": mvIota(tensor.Shape{2, 3, 2}),
		"i": mvI32(t, tensor.Shape{2, 2}, 2, 0, -1, 1),
	})
	// x[a][b][c] = 6a + 2b + c; indices resolve to [[2 0] [2 1]].
	mvWantI32(t, got, tensor.Shape{2, 2, 2, 2},
		4, 5, 0, 1, 4, 5, 2, 3,
		10, 11, 6, 7, 10, 11, 8, 9)
}

func TestMovementGatherScalarIndex(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F16, 2, 3)
	xv := mvPattern(tensor.F16, tensor.Shape{2, 3})
	got := mvEval(t, g, g.Gather(x, g.Input("i", tensor.I32), 1), map[string]tensor.Tensor{"x": xv, "i": mvI32(t, nil, -2)})
	mvWantShape(t, got, tensor.F16, 2)
	if f := got.F16(); f[0] != xv.F16()[1] || f[1] != xv.F16()[4] {
		t.Fatalf("got %x, want column 1 of %x", f, xv.F16())
	}
}

func TestMovementGatherOutOfRange(t *testing.T) {
	cases := []struct {
		name  string
		xs    []int
		axis  int
		idx   tensor.Tensor
		words []string // the error must name the bad index and the bound
	}{
		{"axis0-high", []int{3, 2}, 0, mvI64(t, tensor.Shape{2}, 1, 3), []string{"index 3", "size 3"}},
		{"axis0-low", []int{3, 2}, 0, mvI64(t, tensor.Shape{3}, 0, -4, 1), []string{"index -4", "size 3"}},
		{"middle-2d", []int{2, 3, 2}, 1, mvI32(t, tensor.Shape{2, 2}, 0, 1, 2, 7), []string{"index 7", "size 3"}},
		{"empty-axis", []int{2, 0}, 1, mvI32(t, tensor.Shape{1}, 0), []string{"index 0", "size 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.I32, c.xs...)
			n := g.Gather(x, g.Input("i", c.idx.DType, c.idx.Shape...), c.axis)
			g.Output(n)
			_, err := Interpret(g, map[string]tensor.Tensor{"x": mvIota(tensor.Shape(c.xs)), "i": c.idx})
			if err == nil {
				t.Fatal("out-of-range index accepted")
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func mvI64(t *testing.T, s tensor.Shape, v ...int64) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromI64(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
