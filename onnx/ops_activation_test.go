package onnx

import (
	"errors"
	"strings"
	"testing"
)

// TestActivationAttrErrors: an attribute value kiln cannot map is
// reported as an unsupported feature of the node, naming the node, its op
// and the attribute, and a window whose size is computed at run time says
// so.
func TestActivationAttrErrors(t *testing.T) {
	unary := func(op string, elem int32, attrs ...*Attribute) *GraphProto {
		return &GraphProto{
			Nodes:   []*NodeProto{{Name: "bad", OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: attrs}},
			Inputs:  []*ValueInfo{tensorInfo("x", elem, 4)},
			Outputs: []*ValueInfo{tensorInfo("y", elem, 4)},
		}
	}
	binary := func(op string, elem int32, attrs ...*Attribute) *GraphProto {
		return &GraphProto{
			Nodes:   []*NodeProto{{Name: "bad", OpType: op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: attrs}},
			Inputs:  []*ValueInfo{tensorInfo("a", elem, 4), tensorInfo("b", elem, 4)},
			Outputs: []*ValueInfo{tensorInfo("y", elem, 4)},
		}
	}
	str := func(name, v string) *Attribute { return &Attribute{Name: name, Type: AttrString, S: []byte(v)} }
	for _, c := range []struct {
		name  string
		opset int64
		g     *GraphProto
		words []string
	}{
		{"BitShift direction", 13, binary("BitShift", typeUint8, str("direction", "UP")), []string{"direction", `"UP"`}},
		{"BitShift int32", 13, binary("BitShift", typeInt32, str("direction", "LEFT")), []string{"ShiftLeft", "i32"}},
		{"Mod fmod", 13, binary("Mod", typeInt32, intAttr("fmod", 2)), []string{"fmod=2"}},
		{"Celu alpha", 13, unary("Celu", typeFloat, &Attribute{Name: "alpha", Type: AttrFloat, F: 0}), []string{"alpha=0"}},
		{"Shrink int", 13, unary("Shrink", typeInt32), []string{"Shrink", "i32"}},
		{"IsNaN int", 13, unary("IsNaN", typeInt32), []string{"IsNaN", "i32"}},
		{"HannWindow run-time size", 17, unary("HannWindow", typeInt32), []string{"size", "run time"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(encModel(model(c.opset, c.g)))
			var ue *UnsupportedError
			if !errors.As(err, &ue) || len(ue.Ops) != 1 {
				t.Fatalf("want one unsupported node, got %v", err)
			}
			u := ue.Ops[0]
			if u.Node != "bad" || u.OpType != c.g.Nodes[0].OpType {
				t.Errorf("reported %+v", u)
			}
			for _, w := range c.words {
				if !strings.Contains(u.Reason, w) {
					t.Errorf("reason %q lacks %q", u.Reason, w)
				}
			}
		})
	}
}
