package ops

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// Hand-computed tests of the quantization kernels: ties at .5 both ways
// (round half to even), saturation at 0, 255, -128 and 127, NaN and Inf,
// per-axis parameters, int32 wrap-around, and padding that counts as the
// zero point. Every expectation is exact.

// qExact fails unless got holds exactly want (integers or floats).
func qExact(t *testing.T, what string, got tensor.Tensor, want ...float64) {
	t.Helper()
	approx.Slices(t, what, got.Float64s(), want, 0, 0)
}

func TestQuantizeLinearExact(t *testing.T) {
	xs := []float64{0.25, 0.75, -0.25, -0.75, 1.25, 200, -200, math.NaN(), math.Inf(1), math.Inf(-1), 65, -62.5, -62}
	quant := func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.QuantizeLinear(in[0], in[1], in[2], 0) }
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.F16} {
		x, s := ewF(dt, []int{len(xs)}, xs...), ewF(dt, nil, 0.5)
		// x/0.5: .5 → 0, 1.5 → 2, -.5 → -0, -1.5 → -2, 2.5 → 2; then + 10 and saturate.
		qExact(t, dt.String()+" u8", ewEval(t, quant, x, s, ewT[uint8](tensor.U8, nil, 10)),
			10, 12, 10, 8, 12, 255, 0, 10, 255, 0, 140, 0, 0)
		// With zero point -3: -125-3 is -128 exactly, -124-3 = -127, 130-3 saturates.
		qExact(t, dt.String()+" i8", ewEval(t, quant, x, s, ewT[int8](tensor.I8, nil, -3)),
			-3, -1, -3, -5, -1, 127, -128, -3, 127, -128, 127, -128, -127)
	}
	// Per axis 0: row 0 scale 1, zero 0; row 1 scale 2, zero 1 (1/2 → 0, 3/2 → 2).
	x := ewF(tensor.F32, []int{2, 3}, 1, 2, 3, 1, 2, 3)
	y := ewEval(t, func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.QuantizeLinear(in[0], in[1], in[2], -2) },
		x, ewF(tensor.F32, []int{2}, 1, 2), ewT[uint8](tensor.U8, []int{2}, 0, 1))
	qExact(t, "per axis", y, 1, 2, 3, 1, 2, 3)
	// A nil zero point is U8 0: negatives saturate to 0.
	y = ewEval(t, func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.QuantizeLinear(in[0], in[1], nil, 0) },
		ewF(tensor.F32, []int{4}, -1, 0.5, 1.5, 300), ewF(tensor.F32, nil, 1))
	if y.DType != tensor.U8 {
		t.Fatalf("default result %v, want u8", y.DType)
	}
	qExact(t, "default zero point", y, 0, 0, 2, 255)
}

func TestDequantizeLinearExact(t *testing.T) {
	deq := func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.DequantizeLinear(in[0], in[1], in[2], 1) }
	qExact(t, "u8", ewEval(t, deq, ewT[uint8](tensor.U8, []int{4}, 0, 255, 128, 1), ewF(tensor.F32, nil, 0.5), ewT[uint8](tensor.U8, nil, 128)),
		-64, 63.5, 0, -63.5)
	qExact(t, "i8", ewEval(t, deq, ewT[int8](tensor.I8, []int{3}, -128, 127, 0), ewF(tensor.F32, []int{1}, 2), ewT[int8](tensor.I8, []int{1}, -1)),
		-254, 256, 2)
	// I32 extremes stay exact in F64.
	qExact(t, "i32", ewEval(t, deq, ewT[int32](tensor.I32, []int{2}, math.MaxInt32, math.MinInt32), ewF(tensor.F64, nil, 1), ewT[int32](tensor.I32, nil, 0)),
		math.MaxInt32, math.MinInt32)
	// Per axis 1: column 0 scale 0.5 zero 1, column 1 scale 4 zero -2.
	qExact(t, "per axis", ewEval(t, deq, ewT[int8](tensor.I8, []int{2, 2}, 3, 3, -128, 127), ewF(tensor.F32, []int{2}, 0.5, 4), ewT[int8](tensor.I8, []int{2}, 1, -2)),
		1, 20, -64.5, 516)
	// An F16 scale gives an F16 result: 255·0.1 rounds once to F16.
	y := ewEval(t, deq, ewT[uint8](tensor.U8, []int{2}, 255, 0), ewF(tensor.F16, nil, 0.1), ewT[uint8](tensor.U8, nil, 0))
	want := ewF(tensor.F16, []int{2}, 255*float64(tensor.F16ToF32(tensor.F32ToF16(0.1))), 0)
	qExact(t, "f16", y, want.Float64s()...)
}

// dynQuant runs the three outputs of DynamicQuantizeLinear on xs.
func dynQuant(t *testing.T, xs ...float64) (q, scale, zero tensor.Tensor) {
	t.Helper()
	x := ewF(tensor.F32, []int{len(xs)}, xs...)
	var outs [3]tensor.Tensor
	for i := range outs {
		outs[i] = ewEval(t, func(g *graph.Graph, in []*graph.Node) *graph.Node {
			q, s, z := g.DynamicQuantizeLinear(in[0])
			return []*graph.Node{q, s, z}[i]
		}, x)
	}
	return outs[0], outs[1], outs[2]
}

func TestDynamicQuantizeLinearExact(t *testing.T) {
	// Range [-51, 204]: scale 1, zero point 51; 0.5 → 0 and 2.5 → 2
	// (ties to even), NaN → the zero point.
	q, s, z := dynQuant(t, -51, 204, 0.5, 1.5, 2.5, math.NaN())
	qExact(t, "mixed q", q, 0, 255, 51, 53, 53, 51)
	qExact(t, "mixed scale", s, 1)
	qExact(t, "mixed zero", z, 51)
	// Positive only: the range starts at 0, scale 2, zero point 0.
	q, s, z = dynQuant(t, 0, 510, 3, 5, 7)
	qExact(t, "positive q", q, 0, 255, 2, 2, 4)
	qExact(t, "positive scale", s, 2)
	qExact(t, "positive zero", z, 0)
	// Negative only: the range ends at 0; zero point 255, -1.5 → -2.
	q, _, z = dynQuant(t, -510, -3)
	qExact(t, "negative q", q, 0, 253)
	qExact(t, "negative zero", z, 255)
	// All zeros: scale 1/255 (not 0/0), zero point 0.
	q, s, z = dynQuant(t, 0, 0)
	qExact(t, "zeros q", q, 0, 0)
	qExact(t, "zeros scale", s, float64(float32(1)/255))
	qExact(t, "zeros zero", z, 0)
	// ONNX's example: range [-3, 2], scale 5/255, zero point 153.
	q, s, z = dynQuant(t, 0, 2, -3, -2.5, 1.34, 0.5)
	qExact(t, "onnx q", q, 153, 255, 0, 26, 221, 179)
	qExact(t, "onnx scale", s, float64(float32(5)/255))
	qExact(t, "onnx zero", z, 153)
}

func TestMatMulIntegerExact(t *testing.T) {
	mm := func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.MatMulInteger(in[0], in[1], in[2], in[3]) }
	// A - [128, 0] per row = [[127, -128, 0], [1, 2, 3]];
	// B - [-128, 1] per column = [[0, 126], [128, 0], [133, -6]].
	a := ewT[uint8](tensor.U8, []int{2, 3}, 255, 0, 128, 1, 2, 3)
	b := ewT[int8](tensor.I8, []int{3, 2}, -128, 127, 0, 1, 5, -5)
	y := ewEval(t, mm, a, b, ewT[uint8](tensor.U8, []int{2, 1}, 128, 0), ewT[int8](tensor.I8, []int{2}, -128, 1))
	if y.DType != tensor.I32 {
		t.Fatalf("result %v, want i32", y.DType)
	}
	qExact(t, "per row and column", y, -16384, 16002, 655, 108)
	// The widest products: (255 - 0)·(-128 - 127) = -65025, summed twice.
	y = ewEval(t, mm, ewT[uint8](tensor.U8, []int{1, 2}, 255, 255), ewT[int8](tensor.I8, []int{2, 1}, -128, -128),
		ewT[uint8](tensor.U8, nil, 0), ewT[int8](tensor.I8, nil, 127))
	qExact(t, "extremes", y, -130050)
	// 33026·255·255 = 2147515650 wraps past int32 to 2147515650 - 2^32.
	const k = 33026
	ones := make([]uint8, k)
	for i := range ones {
		ones[i] = 255
	}
	y = ewEval(t, func(g *graph.Graph, in []*graph.Node) *graph.Node { return g.MatMulInteger(in[0], in[1], nil, nil) },
		ewT[uint8](tensor.U8, []int{k}, ones...), ewT[uint8](tensor.U8, []int{k, 1}, ones...))
	qExact(t, "wrap", y, 2147515650-1<<32)
}

func TestConvIntegerExact(t *testing.T) {
	// ONNX's example: x 2..10 minus 1, a 2×2 window of ones.
	x := ewT[uint8](tensor.U8, []int{1, 1, 3, 3}, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	w := ewT[uint8](tensor.U8, []int{1, 1, 2, 2}, 1, 1, 1, 1)
	conv := func(o graph.ConvOpts) func(g *graph.Graph, in []*graph.Node) *graph.Node {
		return func(g *graph.Graph, in []*graph.Node) *graph.Node {
			return g.ConvInteger(in[0], in[1], in[2], in[3], o)
		}
	}
	qExact(t, "valid", ewEval(t, conv(graph.ConvOpts{}), x, w, ewT[uint8](tensor.U8, nil, 1), ewT[uint8](tensor.U8, nil, 0)),
		12, 16, 24, 28)
	qExact(t, "padded", ewEval(t, conv(graph.ConvOpts{Pads: []int{1, 1, 1, 1}}), x, w, ewT[uint8](tensor.U8, nil, 1), ewT[uint8](tensor.U8, nil, 0)),
		1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9)
	// Per output channel: w - [1, 127] = [2, -255]; x - 10 = [0, 10, 20,
	// 30]; the padding ring reads as the zero point, so it gives 0.
	x = ewT[uint8](tensor.U8, []int{1, 1, 2, 2}, 10, 20, 30, 40)
	y := ewEval(t, conv(graph.ConvOpts{Pads: []int{1, 0, 0, 1}}), x, ewT[int8](tensor.I8, []int{2, 1, 1, 1}, 3, -128),
		ewT[uint8](tensor.U8, []int{1}, 10), ewT[int8](tensor.I8, []int{2}, 1, 127))
	qExact(t, "per channel", y,
		0, 0, 0, 0, 20, 0, 40, 60, 0,
		0, 0, 0, 0, -2550, 0, -5100, -7650, 0)
}
