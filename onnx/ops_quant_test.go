package onnx

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// Hand-computed checks of the quantization mappings the node suite does
// not reach: per-row and per-column QLinearMatMul, 1-D QLinearConv with
// a bias and per-channel weights, int32 QuantizeLinear and output_dtype,
// and the attribute errors.

// qInit is an 8- or 32-bit integer initializer (ONNX keeps them in
// int32_data).
func qInit(name string, elem int32, dims []int64, v ...int32) *TensorProto {
	return &TensorProto{Name: name, Dims: dims, DataType: elem, Int32Data: v}
}

// qRun imports a one-node model at opset with the given run-time inputs
// and initializers and interprets it; out is the output's ONNX type.
func qRun(t *testing.T, opset int64, node *NodeProto, out int32, inits []*TensorProto, feeds map[string]tensor.Tensor) tensor.Tensor {
	t.Helper()
	var infos []*ValueInfo
	for _, name := range node.Inputs {
		if x, ok := feeds[name]; ok {
			dims := make([]int64, len(x.Shape))
			for i, d := range x.Shape {
				dims[i] = int64(d)
			}
			elem := map[tensor.DType]int32{tensor.U8: typeUint8, tensor.I8: typeInt8, tensor.I32: typeInt32, tensor.F32: typeFloat}[x.DType]
			infos = append(infos, tensorInfo(name, elem, dims...))
		}
	}
	g := &GraphProto{Nodes: []*NodeProto{node}, Inputs: infos, Initializers: inits,
		Outputs: []*ValueInfo{{Name: node.Outputs[0], IsTensor: true, ElemType: out}}}
	m, err := Parse(encModel(model(opset, g)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, p := range m.Graph.Params() { // the initializers kiln keeps as weights
		w, ok := m.Weight(p.Name)
		if !ok {
			t.Fatalf("no weight for %s", p.Name)
		}
		feeds[p.Name] = w
	}
	got, err := ops.Interpret(m.Graph, feeds)
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

func qTensor[T any](dt tensor.DType, dims []int, v ...T) tensor.Tensor {
	x := tensor.New(dt, dims...)
	copy(tensor.Elems[T](x.Data), v)
	return x
}

func TestQLinearMatMulPerRowColumn(t *testing.T) {
	// a - [1, 255] per row = [[2, 4], [-255, 0]]; b - [0, 1] per column =
	// [[1, -2], [2, 126]]; acc = [[10, 500], [-255, 510]]; times a_scale
	// [0.5, 0.25] per row and b_scale [1, 0.5] per column = [[5, 125],
	// [-63.75, 63.75]]; / 2.5 = [[2, 50], [-25.5, 25.5]], ties to even
	// [[2, 50], [-26, 26]], + -10.
	node := &NodeProto{Name: "qmm", OpType: "QLinearMatMul", Outputs: []string{"y"},
		Inputs: []string{"a", "as", "az", "b", "bs", "bz", "ys", "yz"}}
	inits := []*TensorProto{f32Init("as", []int64{2}, 0.5, 0.25), qInit("az", typeUint8, []int64{2}, 1, 255),
		f32Init("bs", []int64{2}, 1, 0.5), qInit("bz", typeInt8, []int64{2}, 0, 1),
		f32Init("ys", nil, 2.5), qInit("yz", typeInt8, nil, -10)}
	y := qRun(t, 13, node, typeInt8, inits, map[string]tensor.Tensor{
		"a": qTensor[uint8](tensor.U8, []int{2, 2}, 3, 5, 0, 255),
		"b": qTensor[int8](tensor.I8, []int{2, 2}, 1, -1, 2, 127)})
	approx.Slices(t, "QLinearMatMul", y.Float64s(), []float64{-8, 40, -36, 16}, 0, 0)
}

func TestQLinearConv1DBias(t *testing.T) {
	// x - 10 = [0, 10, 20, 30], one pad cell in front (the zero point);
	// w - [0, 1] per channel = [[1, 2], [-2, 2]]; acc + bias [4, -8] =
	// [[4, 24, 54, 84], [-8, 12, 12, 12]]; times 0.5·[1, 0.25] = [[2, 12,
	// 27, 42], [-1, 1.5, 1.5, 1.5]]; / 0.25 + 100, saturated at 255.
	node := &NodeProto{Name: "qc", OpType: "QLinearConv", Outputs: []string{"y"}, Attrs: []*Attribute{intsAttr("pads", 1, 0)},
		Inputs: []string{"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"}}
	inits := []*TensorProto{f32Init("xs", nil, 0.5), qInit("xz", typeUint8, nil, 10),
		qInit("w", typeInt8, []int64{2, 1, 2}, 1, 2, -1, 3), f32Init("ws", []int64{2}, 1, 0.25), qInit("wz", typeInt8, []int64{2}, 0, 1),
		f32Init("ys", nil, 0.25), qInit("yz", typeUint8, nil, 100), qInit("bias", typeInt32, []int64{2}, 4, -8)}
	y := qRun(t, 13, node, typeUint8, inits, map[string]tensor.Tensor{"x": qTensor[uint8](tensor.U8, []int{1, 1, 4}, 10, 20, 30, 40)})
	if !y.Shape.Equal(tensor.Shape{1, 2, 4}) {
		t.Fatalf("shape %v, want [1 2 4]", y.Shape)
	}
	approx.Slices(t, "QLinearConv", y.Float64s(), []float64{108, 148, 208, 255, 96, 106, 106, 106}, 0, 0)
}

func TestQuantizeLinearInt32AndOutputDType(t *testing.T) {
	x := qTensor[int32](tensor.I32, []int{3}, 5, -7, 300)
	// 5/2 = 2.5 → 2, -3.5 → -4, 150; uint8 saturates -4 to 0.
	node := &NodeProto{Name: "q", OpType: "QuantizeLinear", Inputs: []string{"x", "s", "z"}, Outputs: []string{"y"}}
	y := qRun(t, 13, node, typeUint8, []*TensorProto{f32Init("s", nil, 2), qInit("z", typeUint8, nil, 0)}, map[string]tensor.Tensor{"x": x})
	approx.Slices(t, "int32 x", y.Float64s(), []float64{2, 0, 150}, 0, 0)
	// Opset 21's output_dtype (int8) without a zero point.
	node = &NodeProto{Name: "q", OpType: "QuantizeLinear", Inputs: []string{"x", "s"}, Outputs: []string{"y"},
		Attrs: []*Attribute{intAttr("output_dtype", typeInt8)}}
	y = qRun(t, 21, node, typeInt8, []*TensorProto{f32Init("s", nil, 2)}, map[string]tensor.Tensor{"x": x})
	if y.DType != tensor.I8 {
		t.Fatalf("dtype %v, want i8", y.DType)
	}
	approx.Slices(t, "output_dtype", y.Float64s(), []float64{2, -4, 127}, 0, 0)
}

// TestQuantAttributeErrors checks that what kiln lacks is reported per
// node with the op and the attribute or operand.
func TestQuantAttributeErrors(t *testing.T) {
	f := func(name string, dims ...int64) *ValueInfo { return tensorInfo(name, typeFloat, dims...) }
	u8 := func(name string, dims ...int64) *ValueInfo { return tensorInfo(name, typeUint8, dims...) }
	for _, c := range []struct {
		name        string
		opset       int64
		node        *NodeProto
		inputs      []*ValueInfo
		want        string
		unsupported bool
	}{
		{"block_size", 21, &NodeProto{Name: "qb", OpType: "QuantizeLinear", Inputs: []string{"x", "s"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intAttr("block_size", 2)}}, []*ValueInfo{f("x", 4), f("s", 2)}, "block_size=2", true},
		{"output_dtype int32", 21, &NodeProto{Name: "qo", OpType: "QuantizeLinear", Inputs: []string{"x", "s"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intAttr("output_dtype", typeInt32)}}, []*ValueInfo{f("x", 4), f("s")}, "output_dtype=i32", true},
		{"dequantize output_dtype", 23, &NodeProto{Name: "do", OpType: "DequantizeLinear", Inputs: []string{"x", "s"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intAttr("output_dtype", 10)}}, []*ValueInfo{u8("x", 4), f("s")}, "output_dtype=f16", true},
		{"output_dtype disagrees", 21, &NodeProto{Name: "qd", OpType: "QuantizeLinear", Inputs: []string{"x", "s", "z"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intAttr("output_dtype", typeInt8)}}, []*ValueInfo{f("x", 4), f("s"), u8("z")}, "output_dtype i8 differs", false},
		{"per-axis at opset 11", 11, &NodeProto{Name: "dq", OpType: "DequantizeLinear", Inputs: []string{"x", "s", "z"}, Outputs: []string{"y"}},
			[]*ValueInfo{u8("x", 2, 3), f("s", 3), u8("z", 3)}, "needs opset 13", false},
		{"per-axis output", 13, &NodeProto{Name: "qm", OpType: "QLinearMatMul", Inputs: []string{"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, Outputs: []string{"y"}},
			[]*ValueInfo{u8("a", 2, 3), f("as"), u8("az"), u8("b", 3, 2), f("bs"), u8("bz"), f("ys", 2), u8("yz", 2)}, "requantizes per tensor", true},
		{"float conv input", 13, &NodeProto{Name: "ci", OpType: "ConvInteger", Inputs: []string{"x", "w"}, Outputs: []string{"y"}},
			[]*ValueInfo{f("x", 1, 1, 3, 3), u8("w", 1, 1, 2, 2)}, "input 0 is f32", true},
	} {
		_, err := Parse(encModel(model(c.opset, &GraphProto{Nodes: []*NodeProto{c.node}, Inputs: c.inputs,
			Outputs: []*ValueInfo{{Name: "y", IsTensor: true, ElemType: typeUint8}}})))
		var ue *UnsupportedError
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.node.Name) ||
			!strings.Contains(err.Error(), c.node.OpType) || errors.As(err, &ue) != c.unsupported {
			t.Errorf("%s: got %v, want an error (unsupported: %v) naming %s, %q and %q", c.name, err, c.unsupported, c.node.OpType, c.node.Name, c.want)
		}
	}
}
