package ops

import (
	"math"
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
)

// vecOps are the ops of the elementwise table whose asm kernel has the
// given arity (1 or 2).
func vecOps(arity int) []graph.Op {
	var ops []graph.Op
	for _, r := range ElementwiseOps() {
		if r.Vec.Arity == arity {
			ops = append(ops, r.Op)
		}
	}
	return ops
}

// TestElementwiseTable checks the table's rows against each other and
// against what other packages list: one formula of the op's arity per
// row, the catalogue entry registered from it, the epilogue activations
// those of graph.EpilogueActs, whose asm formula is the row's.
func TestElementwiseTable(t *testing.T) {
	var acts []graph.Op
	for _, r := range ElementwiseOps() {
		formulas := 0
		for _, set := range []bool{r.Unary != nil, r.Binary != nil, r.WithAttrs != nil} {
			if set {
				formulas++
			}
		}
		if formulas != 1 || !r.Op.IsElementwise() || (r.Binary != nil) != r.Op.IsBinary() {
			t.Errorf("%v: %d formulas (want one, of the op's arity)", r.Op, formulas)
		}
		arity := 1
		if r.Op.IsBinary() {
			arity = 2
		}
		if r.Vec.Arity != 0 && r.Vec.Arity != arity {
			t.Errorf("%v: asm kernel of arity %d", r.Op, r.Vec.Arity)
		}
		e, err := Lookup(r.Op)
		if err != nil || !slices.Equal(e.DTypes, r.DTypes) || e.Tol != r.Tol || e.InPlace != r.InPlace || !r.InPlace {
			t.Errorf("%v: catalogue entry %+v (err %v) differs from the row", r.Op, e, err)
		}
		if r.Act != asm.ActNone {
			acts = append(acts, r.Op)
			if _, ok := epilogueEw(r.Op); !ok {
				t.Errorf("%v: epilogue activation without an asm kernel", r.Op)
			}
			for _, x := range []float64{-3, -0.5, 0, 0.25, 2, math.Inf(1)} {
				if got, want := r.Act.Formula()(x), r.Unary(x); got != want {
					t.Errorf("%v(%v): activation %v, formula %v", r.Op, x, got, want)
				}
			}
		}
	}
	slices.Sort(acts)
	want := slices.Clone(graph.EpilogueActs)
	slices.Sort(want)
	if !slices.Equal(acts, want) {
		t.Errorf("epilogue activations %v, graph.EpilogueActs %v", acts, want)
	}
}
