package kiln_test

import (
	"math"
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestRunSlotsInputsInPlace: RunSlots, which lets the kernels read
// inputs where they lie, gives RunTyped's results (inputs copied) bit for
// bit, on a graph with an input read by two steps, one reshaped in place
// and one that is also an output, and on a fused attention; it leaves
// the caller's inputs as they were; and an earlier output passed back as
// an input (memory the run overwrites) still gives the right result.
func TestRunSlotsInputsInPlace(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 64)
	w := g.Input("w", tensor.F32, 8, 8)
	u := g.Input("u", tensor.F32, 4)
	g.Output(g.Mul(g.Exp(g.Add(x, g.Scalar(1))), x))
	g.Output(g.Add(g.Reshape(w, 64), g.Scalar(1)))
	g.Output(u)

	a := graph.New()
	s := tensor.Shape{1, 2, 40, 16}
	q, k, v := a.Input("q", tensor.F32, s...), a.Input("k", tensor.F32, s...), a.Input("v", tensor.F32, s...)
	a.Output(a.MatMul(a.Softmax(a.Mul(a.MatMul(q, a.Transpose(k, 0, 1, 3, 2)), a.Scalar(0.25)), -1), v))

	for _, gr := range []*graph.Graph{g, a} {
		cg, err := kiln.NewSession(kiln.CPU).Compile(gr)
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		var slots [][]float32
		var typed []kiln.TypedInput
		for i, n := range gr.Inputs() {
			d := make([]float32, n.Shape.NumElements())
			for j := range d {
				d[j] = float32(math.Sin(float64(7*i+j))) * 2
			}
			slots = append(slots, d)
			typed = append(typed, kiln.TypedInput{Name: n.Name, Data: tensor.Bytes(slices.Clone(d)), DType: tensor.F32})
		}
		kept := make([][]float32, len(slots))
		for i := range slots {
			kept[i] = slices.Clone(slots[i])
		}
		want, err := cg.RunTyped(typed...)
		if err != nil {
			t.Fatal(err)
		}
		var wantF [][]float32
		for _, o := range want {
			wantF = append(wantF, slices.Clone(tensor.Elems[float32](o.Data)))
		}
		if _, err := cg.RunSlots(slots...); err != nil {
			t.Fatal(err)
		}
		for i := range wantF {
			if got := cg.Output(i); !slices.Equal(got, wantF[i]) {
				t.Fatalf("graph with %d inputs, output %d: RunSlots %v, RunTyped %v", len(slots), i, got, wantF[i])
			}
		}
		for i := range slots {
			if !slices.Equal(slots[i], kept[i]) {
				t.Fatalf("input %d changed by RunSlots", i)
			}
		}
		// An output of the last run fed back as the first input: the run
		// may overwrite that memory, so it must be copied first.
		back := cg.Output(0)[:len(slots[0])]
		fed := slices.Clone(back)
		typed[0].Data = tensor.Bytes(fed)
		want2, err := cg.RunTyped(typed...)
		if err != nil {
			t.Fatal(err)
		}
		want2F := slices.Clone(tensor.Elems[float32](want2[0].Data))
		if _, err := cg.RunSlots(slots...); err != nil { // outputs as before, so back holds them again
			t.Fatal(err)
		}
		args := append([][]float32{back}, slots[1:]...)
		if _, err := cg.RunSlots(args...); err != nil {
			t.Fatal(err)
		}
		if got := cg.Output(0); !slices.Equal(got, want2F) {
			t.Fatalf("output fed back: %v, want %v", got, want2F)
		}
	}
}
