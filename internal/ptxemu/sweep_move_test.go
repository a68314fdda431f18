package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The data-movement sweep mirrors moveVariants of the ptx package: every
// copy (transposes, a negative-step slice, expand, tile, split), concat,
// gather with I32 and I64 indices (negative ones included), and pad in
// all three modes, for 1-, 2-, 4- and 8-byte dtypes. Movement is exact.

// moveCase pairs a kernel with the graph node it implements.
type moveCase struct {
	k     *ptx.Kernel
	node  *graph.Node
	feeds []*graph.Node // the node's inputs, fed in this order after out
}

func moveCases(t testing.TB) (*graph.Graph, []moveCase) {
	g := graph.New()
	var cs []moveCase
	add := func(n *graph.Node, k *ptx.Kernel, err error) {
		if err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		cs = append(cs, moveCase{k: k, node: n, feeds: n.Inputs})
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.I64, tensor.Bool} {
		x := g.Input("x_"+dt.String(), dt, 2, 3, 4, 5)
		nodes := []*graph.Node{
			g.Transpose(x, 0, 2, 1, 3),
			g.Transpose(x, 3, 2, 1, 0),
			g.Slice(x, graph.SliceSpec{Starts: []int{1, -1}, Ends: []int{3, 0}, Axes: []int{1, 3}, Steps: []int{1, -2}}),
			g.Expand(g.Input("e_"+dt.String(), dt, 3, 1, 5), 2, 3, 4, 5),
			g.Tile(x, 2, 1, 3, 1),
		}
		nodes = append(nodes, g.Split(x, 2, 1, 3)...)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		for i, n := range nodes {
			k, _, err := ptx.EmitNode(fmt.Sprintf("copy_%v_%d_%v", dt, i, n.Op), n)
			add(n, k, err)
		}
		a, b, c := g.Input("ca_"+dt.String(), dt, 2, 3, 5), g.Input("cb_"+dt.String(), dt, 2, 1, 5), g.Input("cc_"+dt.String(), dt, 2, 5, 5)
		n := g.Concat(1, a, b, c)
		k, err := ptx.EmitConcat(&ptx.Concat{Concat: kdesc.Concat{Name: "concat_" + dt.String(), DType: dt, Shape: n.Shape, Axis: 1, Sizes: []int{3, 1, 5}}})
		add(n, k, err)
		n = g.Concat(0, g.Input("c1_"+dt.String(), dt, 2, 3))
		k, err = ptx.EmitConcat(&ptx.Concat{Concat: kdesc.Concat{Name: "concat1_" + dt.String(), DType: dt, Shape: n.Shape, Axis: 0, Sizes: []int{2}}})
		add(n, k, err)
		table := g.Input("table_"+dt.String(), dt, 3, 50, 5)
		for _, it := range []tensor.DType{tensor.I32, tensor.I64} {
			idx := g.Input(fmt.Sprintf("idx_%v_%v", dt, it), it, 7)
			n := g.Gather(table, idx, 1)
			k, err := ptx.EmitGather(&ptx.Gather{Gather: kdesc.Gather{Name: fmt.Sprintf("gather_%v_%v", dt, it), DType: dt, Outer: 3, D: 50, N: 7, Inner: 5, Index: it}})
			add(n, k, err)
		}
		px := g.Input("px_"+dt.String(), dt, 2, 3, 4)
		// The graph has no negative pads: the reference crops with a
		// Slice first (the same as mirroring over the full input here).
		cropped := g.Slice(px, graph.SliceSpec{Starts: []int{1}, Ends: []int{4}, Axes: []int{2}})
		for _, m := range []graph.PadMode{graph.PadConstant, graph.PadReflect, graph.PadEdge} {
			n := g.Pad(cropped, []int{0, 2, 0, 0, 1, 2}, m, -2.5)
			k, err := ptx.EmitPad(&ptx.Pad{Pad: kdesc.Pad{Name: fmt.Sprintf("pad_%v_%v", dt, m), DType: dt, In: []int{2, 3, 4}, Begins: []int{0, 2, -1},
				Out: []int{2, 6, 5}, Mode: m, Value: -2.5}})
			add(n, k, err)
			cs[len(cs)-1].feeds = []*graph.Node{px}
		}
	}
	ex := g.Input("pad_empty_in", tensor.F32, 0, 3)
	n := g.Pad(ex, []int{1, 0, 1, 0}, graph.PadConstant, 1)
	k, err := ptx.EmitPad(&ptx.Pad{Pad: kdesc.Pad{Name: "pad_empty", DType: tensor.F32, In: []int{0, 3}, Begins: []int{1, 0}, Out: []int{2, 3}, Value: 1}})
	add(n, k, err)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return g, cs
}

func TestSweepMove(t *testing.T) {
	t.Parallel()
	g, cs := moveCases(t)
	r := rand.New(rand.NewPCG(5, 6))
	feeds := map[string]tensor.Tensor{}
	for _, n := range g.Inputs() {
		x := randTensor(r, n.DType, true, n.Shape...)
		if n.DType == tensor.I32 || n.DType == tensor.I64 {
			// Gather indices in [-50, 50): negative ones count from the end.
			v := make([]float64, n.Shape.NumElements())
			for i := range v {
				v[i] = float64(r.IntN(100) - 50)
			}
			x, _ = tensor.FromFloat64s(n.DType, n.Shape, v)
		}
		feeds[n.Name] = x
	}
	for _, c := range cs {
		g.Output(c.node)
	}
	want := interpret(t, g, feeds)
	for i, c := range cs {
		ins := make([]tensor.Tensor, len(c.feeds))
		for j, in := range c.feeds {
			ins[j] = feeds[in.Name]
		}
		if c.k.Params[len(c.k.Params)-1].Name == "in" && len(ins) > 1 {
			ins = ins[:1] // copies read their first input only
		}
		got := sentinel(c.node.DType, c.node.Shape...)
		if err := runKernel(t, c.k, Options{}, got, ins...); err != nil {
			t.Errorf("%s: %v", c.k.Name, err)
			continue
		}
		compareTensors(t, c.k.Name, got, want[i], tol{})
	}
}

// TestGatherOutOfRange: an index outside [-D, D) yields zeros (a kernel
// cannot fail), which the CPU reference reports as an error instead.
func TestGatherOutOfRange(t *testing.T) {
	k, err := ptx.EmitGather(&ptx.Gather{Gather: kdesc.Gather{Name: "g", DType: tensor.F32, Outer: 1, D: 4, N: 5, Inner: 2, Index: tensor.I64}})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tensor.FromF32(tensor.Shape{4, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	idx, _ := tensor.FromI64(tensor.Shape{5}, []int64{0, -1, 4, -5, 2})
	got := sentinel(tensor.F32, 5, 2)
	if err := runKernel(t, k, Options{}, got, x, idx); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 7, 8, 0, 0, 0, 0, 5, 6}
	for i, v := range got.F32() {
		if v != want[i] {
			t.Errorf("element %d = %v, want %v (all: %v)", i, v, want[i], got.F32())
		}
	}
}
