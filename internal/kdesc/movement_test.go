package kdesc

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestMovementOf(t *testing.T) {
	g := graph.New()
	a := g.Input("a", tensor.F32, 2, 3, 4)
	b := g.Input("b", tensor.F32, 2, 5, 4)
	idx := g.Input("idx", tensor.I32, 2, 6)
	cat := g.Concat(1, a, b)
	gat := g.Gather(a, idx, 1)
	pad := g.Pad(a, []int{0, 1, 2, 1, 0, 3}, graph.PadReflect, 0)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	c, err := ConcatOf("c", cat)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Concat{Name: "c", DType: tensor.F32, Shape: []int{2, 8, 4}, Axis: 1, Sizes: []int{3, 5}}); !reflect.DeepEqual(c, want) {
		t.Errorf("ConcatOf = %+v, want %+v", c, want)
	}
	gd, err := GatherOf("g", gat)
	if err != nil {
		t.Fatal(err)
	}
	// a [2,3,4] gathered on axis 1 by 12 indices: 2 outer blocks of 3 rows of 4.
	if want := (&Gather{Name: "g", DType: tensor.F32, Outer: 2, D: 3, N: 12, Inner: 4, Index: tensor.I32}); !reflect.DeepEqual(gd, want) {
		t.Errorf("GatherOf = %+v, want %+v", gd, want)
	}
	pd, err := PadOf("p", pad)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Pad{Name: "p", DType: tensor.F32, In: []int{2, 3, 4}, Begins: []int{0, 1, 2}, Mode: graph.PadReflect, Out: []int{3, 4, 9}}); !reflect.DeepEqual(pd, want) {
		t.Errorf("PadOf = %+v, want %+v", pd, want)
	}
	for _, f := range []func(string, *graph.Node) error{
		func(s string, n *graph.Node) error { _, err := ConcatOf(s, n); return err },
		func(s string, n *graph.Node) error { _, err := GatherOf(s, n); return err },
		func(s string, n *graph.Node) error { _, err := PadOf(s, n); return err },
	} {
		if err := f("wrong", a); err == nil || !strings.Contains(err.Error(), "wrong") {
			t.Errorf("describing an Input: err = %v", err)
		}
	}
}
