package onnx

import (
	"errors"
	"strings"
	"testing"
)

// TestNewOpsUnsupported: what the new mappings cannot make static or do
// not support is reported per node, naming the node, the op and the
// argument, not a crash or a silent guess.
func TestNewOpsUnsupported(t *testing.T) {
	for _, c := range []struct {
		name   string
		opset  int64
		node   *NodeProto
		inputs []*ValueInfo
		want   string
	}{
		{"topk runtime K", 13, &NodeProto{Name: "tk", OpType: "TopK", Inputs: []string{"x", "k"}, Outputs: []string{"y", "i"}},
			[]*ValueInfo{tensorInfo("x", typeFloat, 2, 5), tensorInfo("k", typeInt64, 1)}, "K (input 1) must be known at import"},
		{"onehot runtime depth", 13, &NodeProto{Name: "oh", OpType: "OneHot", Inputs: []string{"x", "d", "v"}, Outputs: []string{"y"}},
			[]*ValueInfo{tensorInfo("x", typeInt64, 3), tensorInfo("d", typeInt64), tensorInfo("v", typeFloat, 2)}, "depth (input 1)"},
		{"trilu runtime k", 14, &NodeProto{Name: "tr", OpType: "Trilu", Inputs: []string{"x", "k"}, Outputs: []string{"y"}},
			[]*ValueInfo{tensorInfo("x", typeFloat, 3, 3), tensorInfo("k", typeInt64)}, "k (input 1) must be known at import"},
		{"lrn size", 13, &NodeProto{Name: "lrn", OpType: "LRN", Inputs: []string{"x"}, Outputs: []string{"y"}},
			[]*ValueInfo{tensorInfo("x", typeFloat, 1, 3, 2, 2)}, "attribute size = 0"},
		{"reduce_l1 ints", 13, &NodeProto{Name: "r", OpType: "ReduceL1", Inputs: []string{"x"}, Outputs: []string{"y"}},
			[]*ValueInfo{tensorInfo("x", typeInt64, 3)}, "input 0 is i64"},
	} {
		outs := []*ValueInfo{}
		for _, o := range c.node.Outputs {
			outs = append(outs, &ValueInfo{Name: o, IsTensor: true, ElemType: typeFloat})
		}
		_, err := Parse(encModel(model(c.opset, &GraphProto{Nodes: []*NodeProto{c.node}, Inputs: c.inputs, Outputs: outs})))
		var ue *UnsupportedError
		if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].OpType != c.node.OpType || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), c.node.Name) {
			t.Errorf("%s: got %v, want an unsupported %s naming %q and %q", c.name, err, c.node.OpType, c.node.Name, c.want)
		}
	}
}
