package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestMoELayerLowered runs a whole SwiGLU MoE layer (graph.MoE: router,
// softmax, TopK, renormalisation, the routed experts, a shared expert)
// through cuda.Lower and the emulator, fused and unfused, against the CPU
// session's output: an MoE model runs on CUDA end to end.
func TestMoELayerLowered(t *testing.T) {
	t.Parallel()
	const T, H, F, E, K, Fs = 6, 16, 24, 4, 2, 8
	g := graph.New()
	x := g.Input("x", tensor.F32, T, H)
	p := func(name string, dims ...int) *graph.Node { return g.Param(name, tensor.F32, dims...) }
	g.OutputNamed("y", g.MoE(x, graph.MoESpec{Router: p("router", H, E), Gate: p("gate", E, H, F), Up: p("up", E, H, F),
		Down: p("down", E, F, H), K: K, Renormalize: true, SharedGate: p("sg", H, Fs), SharedUp: p("su", H, Fs), SharedDown: p("sd", Fs, H)}))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(26, 6))
	feeds := map[string]tensor.Tensor{"x": randTensor(r, tensor.F32, false, T, H)}
	for _, n := range g.Params() {
		feeds[n.Name] = scaled(randTensor(r, tensor.F32, false, n.Shape...), n.Shape[len(n.Shape)-2])
	}
	for _, off := range []bool{true, false} {
		cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: off}}).Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cg.Graph().Nodes, func(n *graph.Node) bool { return n.Op == graph.OpMoE }) {
			t.Fatal("the compiled graph has no OpMoE node")
		}
		inputs, params := map[string][]byte{"x": feeds["x"].Data}, map[string][]byte{}
		for _, n := range cg.Graph().Params() {
			params[n.Name] = feeds[n.Name].Data
			if err := cg.SetParamTyped(n.Name, feeds[n.Name].Data, n.DType); err != nil {
				t.Fatal(err)
			}
		}
		want, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: feeds["x"].Data, DType: tensor.F32})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := runLowered(t, cg.Graph(), cg.Plan(), inputs, params)
		wt, _ := tensor.View(tensor.F32, want[0].Shape, want[0].Data)
		gt, _ := tensor.View(tensor.F32, want[0].Shape, got[0])
		compareTensors(t, fmt.Sprintf("MoE layer, fuse off %v", off), gt, wt, tol{1e-5, 1e-4})
		cg.Close()
	}
}
