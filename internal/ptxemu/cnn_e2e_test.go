package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/tensor"
)

// resNetGraph is a small ResNet-style CNN: a conv-BN-relu stem, a max
// pool, a residual block, a depthwise conv, an average pool, a global
// pool and a classifier GEMM; plus ArgMax, CumSum and RoPE heads so one
// lowered program holds every kernel family of the CNN lowering.
func resNetGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 12, 11)
	bn := func(name string, h *graph.Node, c int) *graph.Node {
		p := func(s string) *graph.Node { return g.Param(name+"_"+s, tensor.F32, c) }
		return g.BatchNorm(h, p("scale"), p("bias"), p("mean"), p("var"), 1e-5)
	}
	conv := func(name string, h *graph.Node, cin, cout, k int, o graph.ConvOpts, bias bool) *graph.Node {
		var b *graph.Node
		if bias {
			b = g.Param(name+"_b", tensor.F32, cout)
		}
		return g.Conv2D(h, g.Param(name+"_w", tensor.F32, cout, cin/max(o.Groups, 1), k, k), b, o)
	}
	pad1 := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
	h := g.Relu(bn("bn1", conv("stem", x, 3, 16, 3, pad1, true), 16))
	// A stem without BatchNorm: conv + Relu + 2×2 max pool (odd width:
	// floor mode) is one pooled FusedConv2D.
	g.OutputNamed("pooled", g.MaxPool2D(g.Relu(conv("stem2", x, 3, 8, 3, pad1, true)), graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}))
	h = g.MaxPool2D(h, graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}})
	r := g.Relu(bn("bn2", conv("c2", h, 16, 16, 3, pad1, false), 16))
	r = bn("bn3", conv("c3", r, 16, 16, 3, pad1, false), 16)
	h = g.Relu(g.Add(r, h))
	h = g.Relu(conv("dw", h, 16, 16, 3, graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Groups: 16}, true))
	h = g.AvgPool2D(h, graph.PoolOpts{Kernel: []int{2, 2}, Pads: []int{0, 0, 1, 1}})
	feat := g.Flatten(g.GlobalAvgPool(h), 1)
	logits := g.Gemm(feat, g.Param("fc_w", tensor.F32, 10, 16), g.Param("fc_b", tensor.F32, 10), 1, 1, false, true)
	g.OutputNamed("logits", logits)
	g.OutputNamed("class", g.ArgMax(logits, 1, false))
	g.OutputNamed("cum", g.CumSum(logits, 1, true, true))
	q := g.Reshape(conv("qk", h, 16, 8, 1, graph.ConvOpts{}, false), 2, 1, 9, 8)
	g.OutputNamed("rope", g.RoPE(q, g.Param("cos", tensor.F32, 9, 4), g.Param("sin", tensor.F32, 9, 4), false))
	return g
}

// TestLoweredCNN runs resNetGraph, fused and unfused, on the CPU and
// through cuda.Lower on the emulator, and compares every output.
func TestLoweredCNN(t *testing.T) {
	t.Parallel()
	g := resNetGraph()
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(51, 52))
	feeds := map[string]tensor.Tensor{"x": randTensor(r, tensor.F32, false, 2, 3, 12, 11)}
	for _, p := range g.Params() {
		v := randTensor(r, tensor.F32, false, p.Shape...)
		if strings.HasSuffix(p.Name, "_var") { // a variance is positive
			vs := make([]float64, p.Shape.NumElements())
			for i := range vs {
				vs[i] = 1 + 2*r.Float64()
			}
			v, _ = tensor.FromFloat64s(tensor.F32, p.Shape, vs)
		}
		feeds[p.Name] = scaleTensor(v, 0.5)
	}
	for _, off := range []bool{true, false} {
		compareLowered(t, fmt.Sprintf("fuse off %v", off), g, &fuse.Options{Off: off}, feeds, 1e-4)
	}
}

// compareLowered compiles g for the CPU, runs it on feeds (inputs and
// params by name), runs the same fused, planned graph lowered for CUDA
// on the emulator, and compares the outputs within rel (relative to
// 1+|cpu|; integers exactly).
func compareLowered(t *testing.T, name string, g *graph.Graph, fo *fuse.Options, feeds map[string]tensor.Tensor, rel float64) {
	t.Helper()
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: fo}).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
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
	got, launches := runLowered(t, cg.Graph(), cg.Plan(), inputs, params)
	for i, o := range cg.Graph().Outputs() {
		wt, _ := tensor.View(want[i].DType, want[i].Shape, want[i].Data)
		gt, _ := tensor.View(o.DType, o.Shape, got[i])
		compareTensors(t, fmt.Sprintf("%s: %s (%v)", name, cg.Graph().OutputNames()[i], o.Op), gt, wt, tol{rel, rel})
	}
	ops := map[graph.Op]int{}
	for _, n := range cg.Graph().Nodes {
		ops[n.Op]++
	}
	t.Logf("%s: %d launches; ops %v", name, launches, ops)
}

// TestONNXCNNEndToEnd lowers the ResNet-style CNN exported from PyTorch
// (onnx/testdata/models/cnn) entirely to CUDA kernels and runs it on the
// emulator against the CPU run of the same compiled graph.
func TestONNXCNNEndToEnd(t *testing.T) {
	t.Parallel()
	compareONNXDir(t, "onnx cnn", filepath.Join("..", "..", "onnx", "testdata", "models", "cnn"), 1e-4)
}

// compareONNXDir is compareLowered for dir/model.onnx, with its
// initializers as the parameters and dir/in_<input>.npy as the inputs.
func compareONNXDir(t *testing.T, name, dir string, rel float64) {
	t.Helper()
	compareONNXDirFused(t, name, dir, nil, rel)
}

// compareONNXDirFused is compareONNXDir with fusion options fo (nil:
// KILN_FUSE's).
func compareONNXDirFused(t *testing.T, name, dir string, fo *fuse.Options, rel float64) {
	t.Helper()
	m, err := onnx.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	feeds := map[string]tensor.Tensor{}
	for _, init := range m.Proto.Graph.Initializers {
		w, err := init.Tensor()
		if err != nil {
			t.Fatal(err)
		}
		feeds[init.Name] = w.Clone()
	}
	for _, in := range m.Graph.Inputs() {
		v, err := npy.ReadFile(filepath.Join(dir, "in_"+in.Name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		feeds[in.Name] = tensor.Tensor{DType: v.DType, Shape: v.Shape, Data: v.Data}
	}
	compareLowered(t, name, m.Graph, fo, feeds, rel)
}

// TestLoweredModelOps lowers the CNN-lowering ops at other ranks and
// dtypes than resNetGraph: GlobalAvgPool of 3-D and 5-D inputs, F16
// pools and convs, integer ArgMin and CumSum, interleaved BF16 RoPE.
func TestLoweredModelOps(t *testing.T) {
	t.Parallel()
	g := graph.New()
	h := g.Input("h", tensor.F16, 2, 4, 6, 5)
	ids := g.Input("ids", tensor.I32, 3, 7)
	big := g.Input("big", tensor.I64, 3, 7)
	b := g.Input("b", tensor.BF16, 2, 3, 4)
	w := g.Param("w", tensor.F16, 16, 2, 3, 3)
	cs := g.Param("cs", tensor.BF16, 3, 2)
	outs := []*graph.Node{
		g.GlobalAvgPool(g.Reshape(h, 2, 4, 30)),
		g.GlobalAvgPool(g.Reshape(h, 2, 4, 3, 2, 5)),
		g.MaxPool2D(h, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 1}}),
		g.Conv2D(h, w, nil, graph.ConvOpts{Groups: 2, Pads: []int{1, 0, 1, 2}}),
		g.ArgMin(ids, 0, true),
		g.CumSum(big, 1, true, true),
		g.CumSum(ids, 0, false, false),
		g.RoPE(b, cs, cs, true),
	}
	for i, o := range outs {
		g.OutputNamed(fmt.Sprintf("out%d", i), o)
	}
	r := rand.New(rand.NewPCG(61, 62))
	feeds := map[string]tensor.Tensor{
		"h": randTensor(r, tensor.F16, false, 2, 4, 6, 5), "ids": tiedTensor(r, tensor.I32, false, 3, 7),
		"big": randTensor(r, tensor.I64, true, 3, 7), "b": randTensor(r, tensor.BF16, false, 2, 3, 4),
		"w": randTensor(r, tensor.F16, false, 16, 2, 3, 3), "cs": randTensor(r, tensor.BF16, false, 3, 2),
	}
	compareLowered(t, "model ops", g, nil, feeds, 8e-3) // a BF16 ulp
}
