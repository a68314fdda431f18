package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// TestRecurrentShapes: the outputs' shapes in both layouts, and operands
// of the wrong shape or dtype are the graph's error, not a panic.
func TestRecurrentShapes(t *testing.T) {
	const S, B, I, H = 5, 3, 4, 2
	for _, c := range []struct {
		o         RNNOpts
		y, yh, yc string
	}{
		{RNNOpts{Cell: CellLSTM, Hidden: H}, "[5 1 3 2]", "[1 3 2]", "[1 3 2]"},
		{RNNOpts{Cell: CellGRU, Hidden: H, Direction: RNNBidirectional, BatchFirst: true}, "[3 5 2 2]", "[3 2 2]", ""},
		{RNNOpts{Cell: CellRNN, Hidden: H, Direction: RNNReverse}, "[5 1 3 2]", "[1 3 2]", ""},
	} {
		g := New()
		d, gates := 1, c.o.Cell.Gates()
		if c.o.Direction == RNNBidirectional {
			d = 2
		}
		x := g.Input("x", tensor.F32, S, B, I)
		if c.o.BatchFirst {
			x = g.Input("xb", tensor.F32, B, S, I)
		}
		y, yh, yc := g.Recurrent(RNNInputs{X: x, W: g.Param("w", tensor.F32, d, gates*H, I), R: g.Param("r", tensor.F32, d, gates*H, H)}, c.o)
		if err := g.Err(); err != nil {
			t.Fatalf("%v: %v", c.o.Cell, err)
		}
		got := []string{y.Shape.String(), yh.Shape.String(), ""}
		if yc != nil {
			got[2] = yc.Shape.String()
		}
		if got[0] != c.y || got[1] != c.yh || got[2] != c.yc {
			t.Errorf("%v: shapes %v, want [%s %s %s]", c.o.Cell, got, c.y, c.yh, c.yc)
		}
	}
	bad := map[string]func(g *Graph) RNNInputs{
		"W is": func(g *Graph) RNNInputs {
			return RNNInputs{X: g.Input("x", tensor.F32, S, B, I), W: g.Param("w", tensor.F32, 1, 4*H, I+1), R: g.Param("r", tensor.F32, 1, 4*H, H)}
		},
		"X, W and R": func(g *Graph) RNNInputs { return RNNInputs{X: g.Input("x", tensor.F32, S, B, I)} },
		"3-D float": func(g *Graph) RNNInputs {
			return RNNInputs{X: g.Input("x", tensor.I32, S, B, I), W: g.Param("w", tensor.F32, 1, 4*H, I), R: g.Param("r", tensor.F32, 1, 4*H, H)}
		},
		"sequence_lens is": func(g *Graph) RNNInputs {
			return RNNInputs{X: g.Input("x", tensor.F32, S, B, I), W: g.Param("w", tensor.F32, 1, 4*H, I), R: g.Param("r", tensor.F32, 1, 4*H, H), SeqLens: g.Input("s", tensor.F32, B)}
		},
	}
	for want, in := range bad {
		g := New()
		g.Recurrent(in(g), RNNOpts{Cell: CellLSTM, Hidden: H})
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one mentioning %q", err, want)
		}
	}
	g := New()
	g.Recurrent(RNNInputs{X: g.Input("x", tensor.F32, S, B, I), W: g.Param("w", tensor.F32, 1, H, I), R: g.Param("r", tensor.F32, 1, H, H)},
		RNNOpts{Cell: CellRNN, Hidden: H, Activations: []RNNActivation{{Name: "Swish"}}})
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), `"Swish"`) {
		t.Errorf("error %v, want one naming the activation", err)
	}
}

// TestLossShapes: reductions give scalars, none keeps the target's shape;
// a target of the wrong shape is the graph's error.
func TestLossShapes(t *testing.T) {
	g := New()
	x, tg := g.Input("x", tensor.F32, 2, 4, 3), g.Input("t", tensor.I64, 2, 3)
	none := g.NLLLoss(x, tg, nil, LossOpts{Reduction: LossNone})
	mean, lp := g.SoftmaxCrossEntropy(x, tg, g.Param("w", tensor.F32, 4), LossOpts{HasIgnore: true, IgnoreIndex: -1})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if none.Shape.String() != "[2 3]" || mean.Shape.String() != "[]" || lp.Shape.String() != "[2 4 3]" {
		t.Errorf("shapes %v %v %v", none.Shape, mean.Shape, lp.Shape)
	}
	g2 := New()
	g2.NLLLoss(g2.Input("x", tensor.F32, 2, 4, 3), g2.Input("t", tensor.I64, 2, 4), nil, LossOpts{})
	if err := g2.Err(); err == nil || !strings.Contains(err.Error(), "target is") {
		t.Errorf("error %v, want one about the target", err)
	}
}
