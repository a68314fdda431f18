package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// TestFastMatMulCompiled runs batched MatMul and Gemm with weight params
// through the real executor (kiln.Compile) against ops.Interpret, then
// sets a weight again: the packed copy must follow SetParam.
func TestFastMatMulCompiled(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	randT := func(dims ...int) tensor.Tensor {
		x := tensor.New(tensor.F32, dims...)
		for i := range x.F32() {
			x.F32()[i] = float32(2*r.Float64() - 1)
		}
		return x
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 5, 24)
	w := g.Param("w", tensor.F32, 24, 40)
	a := g.Input("a", tensor.F32, 7, 24)
	w2 := g.Param("w2", tensor.F32, 40, 24)
	c := g.Param("c", tensor.F32, 40)
	q := g.Input("q", tensor.F32, 3, 9, 16)
	k := g.Input("k", tensor.F32, 3, 16, 11)
	g.Output(g.MatMul(x, w), g.Gemm(a, w2, c, 0.5, 2, false, true), g.MatMul(q, k))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds := map[string]tensor.Tensor{"x": randT(2, 5, 24), "w": randT(24, 40), "a": randT(7, 24),
		"w2": randT(40, 24), "c": randT(40), "q": randT(3, 9, 16), "k": randT(3, 16, 11)}
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for _, p := range []string{"w", "w2", "c"} {
		if err := cg.SetParam(p, feeds[p].F32()); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		t.Helper()
		want, err := ops.Interpret(g, feeds)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cg.Run(kiln.In("x", feeds["x"].F32()), kiln.In("a", feeds["a"].F32()), kiln.In("q", feeds["q"].F32()), kiln.In("k", feeds["k"].F32()))
		if err != nil {
			t.Fatal(err)
		}
		for o := range want {
			scale := 1.0
			for _, v := range want[o].F32() {
				scale = max(scale, math.Abs(float64(v)))
			}
			for i, v := range got[o] {
				if approx.Far(float64(v), float64(want[o].F32()[i]), 1e-5*scale) {
					t.Fatalf("%s: output %d element %d = %v, want %v", what, o, i, v, want[o].F32()[i])
				}
			}
		}
	}
	check("first run")
	check("second run")
	feeds["w"], feeds["w2"] = randT(24, 40), randT(40, 24)
	for _, p := range []string{"w", "w2"} {
		if err := cg.SetParam(p, feeds[p].F32()); err != nil {
			t.Fatal(err)
		}
	}
	check("after SetParam")
}
