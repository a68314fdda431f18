package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// TestFastMatMulSharedWeight: products that read the same weight under
// the same plan keep one packed copy in Env.Shared (an unrolled recurrent
// layer has one product per step over R), which follows weight updates
// for all of them; another plan packs its own.
func TestFastMatMulSharedWeight(t *testing.T) {
	for _, v := range asm.GemmVariants() {
		r := rand.New(rand.NewPCG(8, 9))
		g := graph.New()
		w := g.Param("w", tensor.F32, 40, 24)
		a1, a2, a3 := g.Input("a1", tensor.F32, 5, 40), g.Input("a2", tensor.F32, 5, 40), g.Input("a3", tensor.F32, 11, 40)
		mms := []*graph.Node{g.MatMul(a1, w), g.MatMul(a2, w), g.MatMul(a3, w)}
		g.Output(mms...)
		env := mfEnv(1)
		env.Shared = map[any]any{}
		kerns := make([]Kernel, len(mms))
		for i, mm := range mms {
			k, _, err := prepareMatMulFast(mm, env, v)
			if err != nil {
				t.Fatal(err)
			}
			kerns[i] = k
		}
		if len(env.Shared) != 2 {
			t.Fatalf("%s: %d packed weights shared, want 2 (one per plan)", v.Name, len(env.Shared))
		}
		feeds := map[string]tensor.Tensor{"a1": mfRand(r, 5, 40), "a2": mfRand(r, 5, 40), "a3": mfRand(r, 11, 40)}
		wt := mfRand(r, 40, 24) // the weight slot every kernel reads
		run := func(what string) {
			t.Helper()
			feeds["w"] = wt.Clone()
			want, err := Interpret(g, feeds)
			if err != nil {
				t.Fatal(err)
			}
			for i, mm := range mms {
				out := tensor.New(tensor.F32, mm.Shape...)
				if err := kerns[i]([]tensor.Tensor{feeds[mm.Inputs[0].Name], wt}, out); err != nil {
					t.Fatal(err)
				}
				mfClose(t, out, want[i], 40, v.Name+" "+what+" "+mm.Name)
			}
		}
		run("first run")
		copy(wt.Data, mfRand(r, 40, 24).Data)
		env.WeightsVersion.Add(1)
		run("after an update")
	}
}
