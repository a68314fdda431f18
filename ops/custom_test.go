package ops_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// reverseRows is a custom op no builder op spells directly: each row of
// a matrix reversed. It checks that it gets its own dtype (no widening).
var reverseRows = &graph.CustomSpec{Name: "ReverseRows", Infer: graph.SameAsInput(0),
	CPU: func(out tensor.Tensor, ins ...tensor.Tensor) error {
		x := ins[0]
		if len(ins) != 1 || x.DType != out.DType || x.Shape.Rank() != 2 {
			return fmt.Errorf("want one matrix of the output's dtype, got %d inputs", len(ins))
		}
		w := x.Shape[1] * x.DType.Size()
		for r := 0; r < x.Shape[0]; r++ {
			for c := 0; c < x.Shape[1]; c++ {
				src, dst := x.Data[r*w+c*x.DType.Size():], out.Data[r*w+(x.Shape[1]-1-c)*x.DType.Size():]
				copy(dst[:x.DType.Size()], src)
			}
		}
		return nil
	}}

// TestCustomCompiledCPU: custom nodes run the user's function in a
// compiled CPU graph, with fusion on and off: between fusable
// elementwise ops, and on a constant (folded at compile time).
func TestCustomCompiledCPU(t *testing.T) {
	xs := []float32{1, 2, 3, 4, 5, 6}
	cs := []float32{10, 20, 30, 40, 50, 60}
	// out = reverse(x·2)·x + reverse(c), by hand.
	want := []float32{6*1 + 30, 4*2 + 20, 2*3 + 10, 12*4 + 60, 10*5 + 50, 8*6 + 40}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
		for _, off := range []bool{false, true} {
			g := graph.New()
			x := g.Input("x", tensor.F32, 2, 3)
			xd := g.Cast(x, dt)
			r := g.Custom(reverseRows, g.Mul(xd, g.Cast(g.Scalar(2), dt)))
			k := g.Custom(reverseRows, g.Cast(g.ConstF32(tensor.Shape{2, 3}, cs), dt))
			g.Output(g.Cast(g.Add(g.Mul(r, xd), k), tensor.F32))
			cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: off}}).Compile(g)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := cg.Run(kiln.In("x", xs))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(outs[0], want) {
				t.Errorf("%v fuse off %v: %v, want %v", dt, off, outs[0], want)
			}
			if !off && !strings.Contains(cg.Report(), "(Custom) folded") {
				t.Errorf("%v: the custom op on a constant was not folded:\n%s", dt, cg.Report())
			}
			cg.Close()
		}
	}
}

// TestCustomCPUErrors: no CPU function is a lowering error naming the
// op; the function's own error comes back from Run and Interpret.
func TestCustomCPUErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 4)
	g.Output(g.Custom(&graph.CustomSpec{Name: "GPUOnly", Infer: graph.SameAsInput(0),
		PTX: &graph.CustomPTX{Module: "not parsed here", Entry: "k"}}, x))
	if _, err := kiln.NewSession(kiln.CPU).Compile(g); err == nil || !strings.Contains(err.Error(), "custom op GPUOnly has no CPU implementation") {
		t.Errorf("Compile: %v", err)
	}

	boom := errors.New("boom")
	g = graph.New()
	x = g.Input("x", tensor.F32, 4)
	g.Output(g.Custom(&graph.CustomSpec{Name: "Fails", Infer: graph.SameAsInput(0),
		CPU: func(tensor.Tensor, ...tensor.Tensor) error { return boom }}, x))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if _, err := cg.Run(kiln.In("x", make([]float32, 4))); !errors.Is(err, boom) || !strings.Contains(err.Error(), "custom op Fails") {
		t.Errorf("Run: %v", err)
	}
	xt, _ := tensor.FromF32(tensor.Shape{4}, make([]float32, 4))
	if _, err := ops.Interpret(g, map[string]tensor.Tensor{"x": xt}); !errors.Is(err, boom) {
		t.Errorf("Interpret: %v", err)
	}
}
