package onnx

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
)

// scanModel is a Scan of n steps over x [2, n] along axis 1, last step
// first, and w [n] along axis 0, first step first, with one state s
// [2] (initially s0): s ← s + x_t·w_t. Scan outputs: the running s
// stacked along axis -1 (y [2, n]), and x_t stacked along axis 0 in
// reverse (z [n, 2]: row i is the x_t of the step n-1-i, so z's rows
// come out in x's column order).
func scanModel(n int64) *ModelProto {
	body := &GraphProto{
		Nodes: []*NodeProto{
			nd("Mul", []string{"x_t", "w_t"}, []string{"p"}),
			nd("Add", []string{"s_in", "p"}, []string{"s_out"}),
			nd("Identity", []string{"s_out"}, []string{"y_t"}),
			nd("Identity", []string{"x_t"}, []string{"z_t"}),
		},
		Inputs: []*ValueInfo{tensorInfo("s_in", typeFloat, 2), tensorInfo("x_t", typeFloat, 2), tensorInfo("w_t", typeFloat)},
		Outputs: []*ValueInfo{tensorInfo("s_out", typeFloat, 2), tensorInfo("y_t", typeFloat, 2),
			tensorInfo("z_t", typeFloat, 2)},
	}
	g := &GraphProto{
		Nodes: []*NodeProto{nd("Scan", []string{"s0", "x", "w"}, []string{"s", "y", "z"}, graphAttr("body", body),
			intAttr("num_scan_inputs", 2), intsAttr("scan_input_axes", 1, 0), intsAttr("scan_input_directions", 1, 0),
			intsAttr("scan_output_axes", -1, 0), intsAttr("scan_output_directions", 0, 1))},
		Initializers: []*TensorProto{f32Init("s0", []int64{2}, 1, -1)},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2, n), tensorInfo("w", typeFloat, n)},
		Outputs:      []*ValueInfo{tensorInfo("s", typeFloat, 2), tensorInfo("y", typeFloat, 2, n), tensorInfo("z", typeFloat, n, 2)},
	}
	return model(16, g)
}

// TestScanRunTime: a Scan too long to unroll (4 nodes a step, 20000
// steps: past maxUnrolled) runs as one OpLoop, and a short one of the
// same model unrolls; both against the Scan's definition computed here
// with the same float32 operations (small integers: every sum exact).
func TestScanRunTime(t *testing.T) {
	for _, n := range []int{20000, 7} {
		x, w := make([]float32, 2*n), make([]float32, n)
		for i := range x {
			x[i] = float32(i%7 - 3)
		}
		for i := range w {
			w[i] = float32(i % 3)
		}
		m, outs := runF32(t, scanModel(int64(n)), map[string]any{"x": x, "w": w})
		if loops, want := countOps(m.Graph, graph.OpLoop), map[bool]int{true: 1, false: 0}[n > 1000]; loops != want {
			t.Fatalf("n=%d: %d OpLoops, want %d", n, loops, want)
		}
		s := []float32{1, -1}
		y, z := make([]float32, 2*n), make([]float32, 2*n)
		for step := range n {
			col := n - 1 - step // x is read last column first, w first element first
			for r := range 2 {
				s[r] += x[r*n+col] * w[step]
				y[r*n+step] = s[r]
				z[(n-1-step)*2+r] = x[r*n+col]
			}
		}
		approx.Slices(t, "final state", outs[0], s, 0, 0)
		approx.Slices(t, "y", outs[1], y, 0, 0)
		approx.Slices(t, "z", outs[2], z, 0, 0)
	}
}
