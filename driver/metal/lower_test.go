package metal

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// compileCPU fuses and plans g the way a session does.
func compileCPU(t *testing.T, g *graph.Graph) *kiln.CompiledGraph {
	t.Helper()
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

// opGraphs covers every kernel family the backend lowers.
func opGraphs() map[string]func(g *graph.Graph) {
	return map[string]func(g *graph.Graph){
		"elementwise": func(g *graph.Graph) {
			x, b := g.Input("x", tensor.F32, 4, 5, 6), g.Param("b", tensor.F32, 5, 1)
			g.Output(g.Gelu(g.Div(g.Sub(g.Mul(x, b), b), g.Add(g.Abs(b), b))))
			g.Output(g.Exp(x))
		},
		"rows": func(g *graph.Graph) {
			x, s := g.Input("x", tensor.F32, 6, 300), g.Param("s", tensor.F32, 300)
			g.Output(g.Softmax(x, 1))
			g.Output(g.LogSoftmax(x, 0))
			g.Output(g.LayerNorm(x, s, s, 1, 1e-5))
			g.Output(g.RMSNorm(x, s, 1, 1e-6))
			g.Output(g.ReduceSum(x, false, 1))
			g.Output(g.ReduceMax(x, true, 0))
		},
		"matmul": func(g *graph.Graph) {
			a, b := g.Input("a", tensor.F32, 2, 70, 33), g.Param("b", tensor.F32, 33, 100)
			g.Output(g.MatMul(a, b))
			g.Output(g.Relu(g.Add(g.MatMul(a, b), g.Param("bias", tensor.F32, 100))))
		},
		"movement": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 4)
			g.Output(g.Transpose(x, 2, 0, 1))
			g.Output(g.Concat(1, x, x))
			g.Output(g.Pad(x, []int{0, 1, 1, 0, 1, 2}, graph.PadReflect, 0))
			g.Output(g.Slice(x, graph.SliceSpec{Starts: []int{3}, Ends: []int{0}, Axes: []int{2}, Steps: []int{-1}}))
			g.Output(g.Tile(x, 1, 2, 1))
			idx := g.Constant(tensor.Tensor{DType: tensor.I64, Shape: tensor.Shape{3}, Data: tensor.Bytes([]int64{2, -1, 0})})
			g.Output(g.Gather(x, idx, 1))
		},
		"conv": func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 1, 4, 9, 9)
			w, b := g.Param("w", tensor.F32, 6, 2, 3, 3), g.Param("cb", tensor.F32, 6)
			g.Output(g.Relu(g.Conv2D(x, w, b, graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Groups: 2})))
		},
	}
}

// newOpGraphs cover the ops this backend lowers besides opGraphs', each
// with the ops that must appear as steps of their own.
func newOpGraphs() map[string]struct {
	build func(g *graph.Graph)
	ops   []graph.Op
} {
	type entry = struct {
		build func(g *graph.Graph)
		ops   []graph.Op
	}
	return map[string]entry{
		"scan": {func(g *graph.Graph) {
			x, i := g.Input("x", tensor.F32, 4, 5, 6), g.Input("i", tensor.I32, 3, 7)
			g.Output(g.CumSum(x, 1, false, false))
			g.Output(g.CumSum(x, 2, true, true))
			g.Output(g.CumSum(i, 0, false, true))
			g.Output(g.ArgMax(x, 1, false))
			g.Output(g.ArgMin(x, 2, true))
			g.Output(g.ArgMax(i, 1, true))
		}, []graph.Op{graph.OpCumSum, graph.OpArgMax, graph.OpArgMin}},
		"pool": {func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 9, 8)
			g.Output(g.MaxPool2D(x, graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}))
			g.Output(g.AvgPool2D(x, graph.PoolOpts{Kernel: []int{2, 3}, Strides: []int{2, 1}, Pads: []int{1, 0, 0, 1}}))
			g.Output(g.AvgPool2D(x, graph.PoolOpts{Kernel: []int{3, 2}, Pads: []int{1, 1, 1, 1}, CountPad: true}))
			g.Output(g.GlobalAvgPool(x))
		}, []graph.Op{graph.OpMaxPool2D, graph.OpAvgPool2D, graph.OpGlobalAvgPool}},
		"batchnorm": {func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 4, 5)
			p := func(n string) *graph.Node { return g.Param(n, tensor.F32, 3) }
			// A run-time mean keeps the BatchNorm (fuse rewrites one over
			// params into x·s + t, an elementwise step).
			m := g.Input("m", tensor.F32, 3)
			g.Output(g.BatchNorm(x, p("s"), p("b"), m, p("v"), 1e-5))
		}, []graph.Op{graph.OpBatchNorm}},
		"rope": {func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 3, 5, 8)
			c, s := g.Input("cos", tensor.F32, 5, 4), g.Input("sin", tensor.F32, 5, 4)
			g.Output(g.RoPE(x, c, s, false))
			g.Output(g.RoPE(x, c, s, true))
		}, []graph.Op{graph.OpRoPE}},
		"conv_fused": {func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 2, 6, 11, 11)
			dw := g.Conv2D(x, g.Param("dw", tensor.F32, 6, 1, 3, 3), g.Param("db", tensor.F32, 6),
				graph.ConvOpts{Pads: []int{2, 2, 2, 2}, Dilations: []int{2, 2}, Groups: 6})
			y := g.Silu(dw)
			pw := g.Conv2D(y, g.Param("pw", tensor.F32, 6, 6, 1, 1), nil, graph.ConvOpts{})
			g.Output(g.Add(g.Relu(pw), y))
		}, []graph.Op{graph.OpFusedConv2D}},
		"conv_pooled": {func(g *graph.Graph) {
			x := g.Input("x", tensor.F32, 1, 3, 9, 10)
			y := g.Relu(g.Conv2D(x, g.Param("w", tensor.F32, 8, 3, 3, 3), g.Param("b", tensor.F32, 8), graph.ConvOpts{Pads: []int{1, 1, 1, 1}}))
			g.Output(g.MaxPool2D(y, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}))
		}, []graph.Op{graph.OpFusedConv2D}},
	}
}

// TestLowerNewOps: every op of newOpGraphs lowers to a kernel of its own,
// with both GEMM options.
func TestLowerNewOps(t *testing.T) {
	for name, e := range newOpGraphs() {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			e.build(g)
			cg := compileCPU(t, g)
			for _, sg := range []bool{false, true} {
				seen := map[graph.Op]bool{}
				for _, st := range checkLowered(t, cg.Graph(), cg.Plan(), LowerOptions{SimdGroup: sg}) {
					seen[st.Node.Op] = true
				}
				for _, op := range e.ops {
					if !seen[op] {
						t.Errorf("no %v step among %v", op, seen)
					}
				}
			}
		})
	}
}

// checkLowered: one step per node that computes (not a source, not a
// view sharing its parent's bytes), buffers matching the node's values,
// every kernel declared once in the library.
func checkLowered(t *testing.T, g *graph.Graph, p *plan.Plan, o LowerOptions) []Step {
	t.Helper()
	lib, steps, err := Lower(g, p, o)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, n := range p.Order {
		if n.Op.IsSource() || n.Shape.NumElements() == 0 {
			continue
		}
		if n.Op.IsView() {
			s, ps := p.Slots[n.ID], p.Slots[n.Inputs[0].ID]
			if s.Alias == n.Inputs[0] && s.Region == ps.Region && s.Offset == ps.Offset {
				continue
			}
		}
		want++
	}
	if len(steps) != want {
		t.Errorf("%d steps, want %d", len(steps), want)
	}
	for _, st := range steps {
		if len(st.Args) != len(st.Kernel.Buffers) {
			t.Errorf("%s: %d args for %d buffers", st.Node, len(st.Args), len(st.Kernel.Buffers))
		}
		if s := p.Slots[st.Node.ID]; st.Args[0] != (Location{s.Region, s.Offset}) {
			t.Errorf("%s writes %v, its slot is %v", st.Node, st.Args[0], s)
		}
		decl := regexp.MustCompile(`kernel void ` + st.Kernel.Name + `\(`)
		if c := len(decl.FindAllString(lib, -1)); c != 1 {
			t.Errorf("kernel %s declared %d times", st.Kernel.Name, c)
		}
	}
	return steps
}

func TestLowerOps(t *testing.T) {
	for name, build := range opGraphs() {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			build(g)
			cg := compileCPU(t, g)
			for _, sg := range []bool{false, true} {
				steps := checkLowered(t, cg.Graph(), cg.Plan(), LowerOptions{SimdGroup: sg})
				for _, st := range steps {
					op := st.Node.Op
					if op == graph.OpMatMul || op == graph.OpFusedMatMul {
						if want := map[bool]string{false: "tiled", true: "simdgroup"}[sg]; st.Kernel.Variant != want {
							t.Errorf("%s variant %s, want %s", st.Node, st.Kernel.Variant, want)
						}
					}
				}
			}
		})
	}
}

// TestLowerDemoEncoder: the demo encoder (attention, norms, GEMMs with
// epilogues, gathers) lowers entirely to MSL.
func TestLowerDemoEncoder(t *testing.T) {
	cg := compileCPU(t, demo.Encoder(demo.Tiny))
	steps := checkLowered(t, cg.Graph(), cg.Plan(), LowerOptions{SimdGroup: true})
	ops := map[graph.Op]bool{}
	for _, st := range steps {
		ops[st.Node.Op] = true
	}
	if !ops[graph.OpAttention] && !ops[graph.OpFusedMatMul] && !ops[graph.OpMatMul] {
		t.Errorf("no attention or GEMM among lowered ops %v", ops)
	}
}

// TestLowerUnsupported: a dtype without an MSL kernel is a named error.
func TestLowerUnsupported(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.I32, 4, 5)
	g.Output(g.ReduceSum(x, false, 1))
	cg := compileCPU(t, g)
	_, _, err := Lower(cg.Graph(), cg.Plan(), LowerOptions{})
	if err == nil || !strings.Contains(err.Error(), "ReduceSum") || !strings.Contains(err.Error(), "i32") {
		t.Errorf("err = %v, want one naming ReduceSum of i32", err)
	}
}
