package onnx

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// arange is a float32 tensor of shape dims holding 0, 1, 2, ...
func arange(t *testing.T, dims ...int) tensor.Tensor {
	t.Helper()
	v := make([]float64, tensor.Shape(dims).NumElements())
	for i := range v {
		v[i] = float64(i)
	}
	x, err := tensor.FromFloat64s(tensor.F32, tensor.Shape(dims), v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// interpretNodes imports a one-input graph of nodes (input "x" [dims],
// outputs outs: float, or int64 for a name starting with "i") and runs
// it through the reference kernels.
func interpretNodes(t *testing.T, x tensor.Tensor, outs []string, nodes ...*NodeProto) []tensor.Tensor {
	t.Helper()
	dims := make([]int64, len(x.Shape))
	for i, d := range x.Shape {
		dims[i] = int64(d)
	}
	var ov []*ValueInfo
	for _, o := range outs {
		elem := int32(typeFloat)
		if strings.HasPrefix(o, "i") {
			elem = typeInt64
		}
		ov = append(ov, &ValueInfo{Name: o, IsTensor: true, ElemType: elem})
	}
	m, err := Parse(encModel(model(13, &GraphProto{Nodes: nodes, Inputs: []*ValueInfo{tensorInfo("x", typeFloat, dims...)}, Outputs: ov})))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := ops.Interpret(m.Graph, map[string]tensor.Tensor{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPool3D checks the 3-D pools, both index orders and MaxUnpool
// against values computed by hand on x = 0..53 as [1, 2, 3, 3, 3]:
// element (c, d, h, w) is 27c + 9d + 3h + w.
func TestPool3D(t *testing.T) {
	x := arange(t, 1, 2, 3, 3, 3)
	k2 := intsAttr("kernel_shape", 2, 2, 2)
	for _, order := range []int64{0, 1} {
		got := interpretNodes(t, x, []string{"y", "i", "u"},
			&NodeProto{OpType: "MaxPool", Inputs: []string{"x"}, Outputs: []string{"y", "i"}, Attrs: []*Attribute{k2, intAttr("storage_order", order)}},
			&NodeProto{OpType: "MaxUnpool", Inputs: []string{"y", "i"}, Outputs: []string{"u"}, Attrs: []*Attribute{k2}})
		// The window at (d, h, w) peaks at its far corner (d+1, h+1, w+1).
		var vals []float32
		var idx []int64
		unpooled := make([]float32, 54)
		for c := range 2 {
			for d := range 2 {
				for h := range 2 {
					for w := range 2 {
						v := 27*c + 9*(d+1) + 3*(h+1) + (w + 1)
						vals = append(vals, float32(v))
						unpooled[v] = float32(v)
						if order == 0 {
							idx = append(idx, int64(v))
						} else { // spatial offset column-major: d fastest
							idx = append(idx, int64(27*c+(d+1)+3*(h+1)+9*(w+1)))
						}
					}
				}
			}
		}
		approx.Slices(t, "MaxPool 3-D values", got[0].F32(), vals, 0, 0)
		if d := cmp.Diff(idx, got[1].I64()); d != "" {
			t.Errorf("storage_order %d: indices (-want +got):\n%s", order, d)
		}
		if order == 0 { // MaxUnpool addresses its output row-major
			approx.Slices(t, "MaxUnpool 3-D", got[2].F32(), unpooled, 0, 0)
			if !got[2].Shape.Equal(tensor.Shape{1, 2, 3, 3, 3}) {
				t.Errorf("MaxUnpool shape %v", got[2].Shape)
			}
		}
	}

	// AveragePool, kernel 2, stride 1: each window's mean is its first
	// cell plus (9 + 3 + 1)/2.
	got := interpretNodes(t, x, []string{"y"}, &NodeProto{OpType: "AveragePool", Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: []*Attribute{k2}})
	var want []float32
	for c := range 2 {
		for d := range 2 {
			for h := range 2 {
				for w := range 2 {
					want = append(want, float32(27*c+9*d+3*h+w)+6.5)
				}
			}
		}
	}
	approx.Slices(t, "AveragePool 3-D", got[0].F32(), want, 1e-6, 0)

	// Padding 1, stride 2: per axis the windows cover cell {0} (mean 0,
	// 1 real cell) or {1, 2} (mean 1.5, 2 cells). Without
	// count_include_pad the mean is 9·md + 3·mh + mw; with it, the real
	// cells' sum over the window's 8.
	x1 := arange(t, 1, 1, 3, 3, 3)
	pad := []*Attribute{k2, intsAttr("strides", 2, 2, 2), intsAttr("pads", 1, 1, 1, 1, 1, 1)}
	for _, countPad := range []int64{0, 1} {
		got := interpretNodes(t, x1, []string{"y"}, &NodeProto{OpType: "AveragePool", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: append(slices.Clone(pad), intAttr("count_include_pad", countPad))})
		want := []float32{0, 1.5, 4.5, 6, 13.5, 15, 18, 19.5}
		if countPad == 1 {
			want = []float32{0, 3.0 / 8, 9.0 / 8, 3, 27.0 / 8, 7.5, 9, 19.5}
		}
		approx.Slices(t, "AveragePool 3-D padded", got[0].F32(), want, 1e-6, 0)
	}
}

// TestPoolErrors: bad pool and unpool attributes are errors (or, for
// what kiln lacks, unsupported features) naming the node and the problem.
func TestPoolErrors(t *testing.T) {
	x4 := tensorInfo("x", typeFloat, 1, 1, 4, 4)
	k2 := intsAttr("kernel_shape", 2, 2)
	for _, c := range []struct {
		name        string
		node        *NodeProto
		inputs      []*ValueInfo
		unsupported bool
		want        string
	}{
		{"storage_order", &NodeProto{Name: "mp", OpType: "MaxPool", Inputs: []string{"x"}, Outputs: []string{"y", "i"},
			Attrs: []*Attribute{k2, intAttr("storage_order", 2)}}, []*ValueInfo{x4}, false, "storage_order 2"},
		{"kernel length", &NodeProto{Name: "mp", OpType: "MaxPool", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intsAttr("kernel_shape", 2, 2, 2)}}, []*ValueInfo{x4}, false, "kernel [2 2 2] for 2 spatial dims"},
		{"zero dilation", &NodeProto{Name: "ap", OpType: "MaxPool", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*Attribute{k2, intsAttr("dilations", 0, 1)}}, []*ValueInfo{x4}, false, "at least 1"},
		{"4 spatial dims", &NodeProto{Name: "mp", OpType: "MaxPool", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intsAttr("kernel_shape", 1, 1, 1, 1)}}, []*ValueInfo{tensorInfo("x", typeFloat, 1, 1, 2, 2, 2, 2)}, true, "4 spatial dims"},
		{"ceil with count_include_pad", &NodeProto{Name: "ap", OpType: "AveragePool", Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: []*Attribute{intsAttr("kernel_shape", 3, 3), intsAttr("strides", 2, 2), intAttr("ceil_mode", 1), intAttr("count_include_pad", 1)}},
			[]*ValueInfo{x4}, true, "count_include_pad=1"},
		{"unpool output_shape too small", &NodeProto{Name: "up", OpType: "MaxUnpool", Inputs: []string{"x", "i", "s"}, Outputs: []string{"y"},
			Attrs: []*Attribute{k2, intsAttr("strides", 2, 2)}},
			[]*ValueInfo{x4, tensorInfo("i", typeInt64, 1, 1, 4, 4)}, false, "output_shape [1 1 7 8] must be"},
		{"unpool run-time output_shape", &NodeProto{Name: "up", OpType: "MaxUnpool", Inputs: []string{"x", "i", "r"}, Outputs: []string{"y"},
			Attrs: []*Attribute{k2}},
			[]*ValueInfo{x4, tensorInfo("i", typeInt64, 1, 1, 4, 4), tensorInfo("r", typeInt64, 4)}, true, "output_shape (input 2) must be known"},
		{"unpool no kernel", &NodeProto{Name: "up", OpType: "MaxUnpool", Inputs: []string{"x", "i"}, Outputs: []string{"y"}},
			[]*ValueInfo{x4, tensorInfo("i", typeInt64, 1, 1, 4, 4)}, false, "missing kernel_shape"},
	} {
		var outs []*ValueInfo
		for _, o := range c.node.Outputs {
			outs = append(outs, &ValueInfo{Name: o, IsTensor: true, ElemType: typeFloat})
		}
		g := &GraphProto{Nodes: []*NodeProto{c.node}, Inputs: c.inputs, Outputs: outs,
			Initializers: []*TensorProto{i64Init("s", []int64{4}, 1, 1, 7, 8)}}
		_, err := Parse(encModel(model(13, g)))
		var ue *UnsupportedError
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.node.Name) ||
			!strings.Contains(err.Error(), c.node.OpType) || errors.As(err, &ue) != c.unsupported {
			t.Errorf("%s: got %v, want an error (unsupported: %v) naming %s %q and %q", c.name, err, c.unsupported, c.node.OpType, c.node.Name, c.want)
		}
	}
}
