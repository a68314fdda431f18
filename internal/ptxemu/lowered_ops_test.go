package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestLoweredOps runs every op the CUDA backend lowers (the graph of
// driver/cuda's TestLowerOps), fused and unfused, through cuda.Lower and
// the emulator, and compares each output with the CPU session's: this
// checks the backend's mapping of graph nodes onto kernel descriptions
// as well as the kernels.
func TestLoweredOps(t *testing.T) {
	t.Parallel()
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 8)
	h := g.Input("h", tensor.F16, 2, 3, 8)
	ids := g.Input("ids", tensor.I32, 5)
	mask := g.Input("mask", tensor.Bool, 1, 1, 3, 3)
	w := g.Param("w", tensor.F32, 8, 6)
	v := g.Param("v", tensor.F32, 8)
	c6 := g.Param("c6", tensor.F32, 6)
	outs := []*graph.Node{
		g.Sigmoid(g.Mul(x, v)),
		g.Cast(h, tensor.F32),
		g.Softmax(x, 1),
		g.LogSoftmax(x, 2),
		g.LayerNorm(x, v, v, 2, 1e-5),
		g.RMSNorm(h, nil, 1, 1e-6),
		g.ReduceMean(x, true, 1, 2),
		g.ReduceMax(h, false),
		g.MatMul(x, w),
		g.MatMul(v, w),
		g.MatMul(g.Reshape(x, 6, 8), v),
		g.Gemm(g.Reshape(x, 6, 8), w, c6, 0.5, 1, false, false),
		g.Gelu(g.Add(g.MatMul(g.Abs(x), w), c6)),
		g.LayerNorm(g.Add(x, v), v, v, 2, 1e-5),
		g.RMSNorm(g.Add(x, x), v, 2, 1e-5),
		g.Gemm(w, g.Reshape(x, 6, 8), nil, 1, 0, true, true),
		g.Transpose(x, 2, 0, 1),
		g.Slice(x, graph.SliceSpec{Starts: []int{1}, Ends: []int{3}, Axes: []int{2}}),
		g.Concat(1, x, x, g.Neg(x)),
		g.Gather(w, ids, 0),
		g.Pad(x, []int{0, 1, 0, 0, 1, 2}, graph.PadReflect, 0),
		g.Expand(v, 4, 8),
		g.Tile(v, 2),
		g.Where(g.Less(x, g.Scalar(0)), g.Exp(x), g.Tanh(x)),
	}
	outs = append(outs, g.Split(x, 2, 3, 5)...)
	q := g.Reshape(x, 1, 2, 3, 8)
	outs = append(outs, g.Attention(q, q, q, nil, graph.AttentionOpts{Causal: true}),
		g.Attention(q, q, q, mask, graph.AttentionOpts{Scale: 0.25}))
	for i, o := range outs {
		g.OutputNamed(fmt.Sprintf("out%d", i), o)
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(21, 22))
	feeds := map[string]tensor.Tensor{
		"x":    randTensor(r, tensor.F32, false, 2, 3, 8),
		"h":    randTensor(r, tensor.F16, false, 2, 3, 8),
		"mask": randTensor(r, tensor.Bool, false, 1, 1, 3, 3),
		"w":    randTensor(r, tensor.F32, false, 8, 6),
		"v":    randTensor(r, tensor.F32, false, 8),
		"c6":   randTensor(r, tensor.F32, false, 6),
	}
	feeds["ids"], _ = tensor.FromI32(tensor.Shape{5}, []int32{0, 7, -1, 3, -8})
	for _, off := range []bool{true, false} {
		cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: off}}).Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		inputs, params := map[string][]byte{}, map[string][]byte{}
		var typed []kiln.TypedInput
		for _, n := range cg.Graph().Inputs() {
			f := feeds[n.Name]
			inputs[n.Name] = f.Data
			typed = append(typed, kiln.TypedInput{Name: n.Name, Data: f.Data, DType: f.DType})
		}
		for _, n := range cg.Graph().Params() {
			params[n.Name] = feeds[n.Name].Data
			if err := cg.SetParamTyped(n.Name, feeds[n.Name].Data, n.DType); err != nil {
				t.Fatal(err)
			}
		}
		want, err := cg.RunTyped(typed...)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := runLowered(t, cg.Graph(), cg.Plan(), inputs, params)
		for i, o := range cg.Graph().Outputs() {
			wt, _ := tensor.View(want[i].DType, want[i].Shape, want[i].Data)
			gt, _ := tensor.View(o.DType, o.Shape, got[i])
			tl := tolFor(o.DType)
			tl.abs, tl.rel = max(tl.abs, 1e-5), max(tl.rel, 1e-5)
			compareTensors(t, fmt.Sprintf("fuse off %v: %s (%v)", off, cg.Graph().OutputNames()[i], o.Op), gt, wt, tl)
		}
		cg.Close()
	}
}
