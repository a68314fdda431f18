package onnx

import (
	"strings"
	"testing"
)

// TestRecurrentAndLossRefusals: attribute values and inputs the recurrent
// and loss mappings refuse give an error naming the node, the op and what
// is wrong (an unsupported attribute value is listed as such), and a
// sequence past graph.MaxRNNSteps says so.
func TestRecurrentAndLossRefusals(t *testing.T) {
	rnn := func(steps int64, attrs ...*Attribute) *ModelProto {
		return model(14, &GraphProto{
			Nodes: []*NodeProto{{Name: "layer", OpType: "RNN", Inputs: []string{"x", "w", "r"}, Outputs: []string{"y", "yh"},
				Attrs: append([]*Attribute{{Name: "hidden_size", Type: AttrInt, I: 2}}, attrs...)}},
			Inputs: []*ValueInfo{tensorInfo("x", typeFloat, steps, 1, 3), tensorInfo("w", typeFloat, 1, 2, 3),
				tensorInfo("r", typeFloat, 1, 2, 2)},
			Outputs: []*ValueInfo{tensorInfo("y", typeFloat, steps, 1, 1, 2), tensorInfo("yh", typeFloat, 1, 1, 2)},
		})
	}
	loss := func(attrs ...*Attribute) *ModelProto {
		return model(13, &GraphProto{
			Nodes:   []*NodeProto{{Name: "nll", OpType: "NegativeLogLikelihoodLoss", Inputs: []string{"x", "t"}, Outputs: []string{"l"}, Attrs: attrs}},
			Inputs:  []*ValueInfo{tensorInfo("x", typeFloat, 2, 3), tensorInfo("t", typeInt64, 2)},
			Outputs: []*ValueInfo{{Name: "l", IsTensor: true, ElemType: typeFloat}},
		})
	}
	str := func(name, v string) *Attribute { return &Attribute{Name: name, Type: AttrString, S: []byte(v)} }
	cases := map[string]struct {
		m    *ModelProto
		want []string
	}{
		"direction": {rnn(2, str("direction", "sideways")), []string{`"layer"`, "RNN", `direction "sideways"`}},
		"activation": {rnn(2, &Attribute{Name: "activations", Type: AttrStrings, Strings: [][]byte{[]byte("Swish")}}),
			[]string{`"layer"`, "RNN", "activations", `"Swish"`}},
		"layout":    {rnn(2, &Attribute{Name: "layout", Type: AttrInt, I: 2}), []string{`"layer"`, "RNN", "layout 2"}},
		"clip":      {rnn(2, &Attribute{Name: "clip", Type: AttrFloat, F: -1}), []string{`"layer"`, "RNN", "clip -1"}},
		"too long":  {rnn(4097), []string{`"layer"`, "RNN", "sequence length 4097", "4096 steps"}},
		"reduction": {loss(str("reduction", "max")), []string{`"nll"`, "NegativeLogLikelihoodLoss", `reduction "max"`}},
	}
	for name, c := range cases {
		_, err := Parse(encModel(c.m))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one mentioning %s", name, err, w)
			}
		}
	}
}
