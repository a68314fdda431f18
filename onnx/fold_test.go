package onnx

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
)

// TestConstantShapeArithmeticFolds: a decoder export's causal mask, made
// of shape arithmetic over a static input (Shape → Gather → Range, a
// Trilu-style comparison of the row and column indices, Where, and a
// Mod-style (n - (n/2)·2) parity term), is computed at import by the
// reference kernels: the imported graph holds only the final Add over a
// constant, and the model runs.
func TestConstantShapeArithmeticFolds(t *testing.T) {
	g := &GraphProto{
		Nodes: []*NodeProto{
			nd("Shape", []string{"x"}, []string{"shape"}),
			nd("Gather", []string{"shape", "one"}, []string{"n"}, intAttr("axis", 0)),
			nd("Range", []string{"zero", "n", "one"}, []string{"r"}),
			nd("Unsqueeze", []string{"r", "ax0"}, []string{"row"}),
			nd("Unsqueeze", []string{"r", "ax1"}, []string{"col"}),
			nd("Greater", []string{"row", "col"}, []string{"upper"}),
			nd("Div", []string{"n", "two"}, []string{"half"}),
			nd("Mul", []string{"half", "two"}, []string{"even"}),
			nd("Sub", []string{"n", "even"}, []string{"parity"}), // n mod 2
			nd("Cast", []string{"parity"}, []string{"pf"}, intAttr("to", typeFloat)),
			nd("Where", []string{"upper", "neg", "pf"}, []string{"mask"}),
			nd("Add", []string{"x", "mask"}, []string{"y"}),
		},
		Initializers: []*TensorProto{
			i64Init("zero", nil, 0), i64Init("one", nil, 1), i64Init("two", nil, 2),
			i64Init("ax0", []int64{1}, 0), i64Init("ax1", []int64{1}, 1), f32Init("neg", nil, -100),
		},
		Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 3, 3)},
		Outputs: []*ValueInfo{tensorInfo("y", typeFloat, 3, 3)},
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	m, outs := runF32(t, model(13, g), map[string]any{"x": x})
	// n = 3, parity 1: mask[i][j] = -100 where j > i, else 1.
	want := []float32{2, -98, -97, 5, 6, -94, 8, 9, 10}
	approx.Slices(t, "masked x", outs[0], want, 0, 0)
	for _, n := range m.Graph.Nodes {
		if n.Op != graph.OpInput && n.Op != graph.OpConstant && n.Op != graph.OpAdd {
			t.Errorf("the constant subgraph left a %v node:\n%v", n.Op, m.Graph)
		}
	}
}

// tileModel: big = Tile([2 1], repeats) (1.2M int64s, past foldLimit),
// then either y = Reshape(x, big[:2]), which needs big's first elements
// at import, or y = x + ReduceSum(float(big)), which does not.
func tileModel(needed bool) *ModelProto {
	g := &GraphProto{
		Nodes: []*NodeProto{nd("Tile", []string{"base", "reps"}, []string{"big"})},
		Initializers: []*TensorProto{
			i64Init("base", []int64{2}, 2, 1), i64Init("reps", []int64{1}, 600000),
			i64Init("s0", []int64{1}, 0), i64Init("s2", []int64{1}, 2),
		},
		Inputs: []*ValueInfo{tensorInfo("x", typeFloat, 1, 2)},
	}
	if needed {
		g.Nodes = append(g.Nodes,
			nd("Slice", []string{"big", "s0", "s2"}, []string{"dims"}),
			nd("Reshape", []string{"x", "dims"}, []string{"y"}))
		g.Outputs = []*ValueInfo{tensorInfo("y", typeFloat, 2, 1)}
	} else {
		g.Nodes = append(g.Nodes,
			nd("Cast", []string{"big"}, []string{"bf"}, intAttr("to", typeFloat)),
			nd("ReduceSum", []string{"bf"}, []string{"sum"}, intAttr("keepdims", 0)),
			nd("Add", []string{"x", "sum"}, []string{"y"}))
		g.Outputs = []*ValueInfo{tensorInfo("y", typeFloat, 1, 2)}
	}
	return model(13, g)
}

// TestDeferredFold: a constant expression past foldLimit is built into
// the graph and computed at run time when nothing needs it at import;
// when a consumer (Reshape's shape) needs it, it is folded then.
func TestDeferredFold(t *testing.T) {
	m, outs := runF32(t, tileModel(true), map[string]any{"x": []float32{3, 4}})
	approx.Slices(t, "reshaped x", outs[0], []float32{3, 4}, 0, 0)
	if countOps(m.Graph, graph.OpTile) != 0 {
		t.Errorf("the Tile feeding a shape stayed in the graph:\n%v", m.Graph)
	}
	m, outs = runF32(t, tileModel(false), map[string]any{"x": []float32{3, 4}})
	approx.Slices(t, "x + sum", outs[0], []float32{3 + 1800000, 4 + 1800000}, 0, 0)
	if countOps(m.Graph, graph.OpTile) != 1 {
		t.Errorf("the large Tile was folded although no consumer needs it at import:\n%v", m.Graph)
	}
}
