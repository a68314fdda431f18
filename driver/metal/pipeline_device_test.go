package metal_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestMetalCompiledPipelined: through the front door (exec.Committer),
// commits in flight and RunPipelined each return their own outputs,
// equal to CPU runs on their inputs; the shared-storage arena alone
// would show the last run's values for all of them.
func TestMetalCompiledPipelined(t *testing.T) {
	needMetal(t)
	g := graph.New()
	x := g.Input("x", tensor.F32, 32, 64)
	g.Output(g.Softmax(g.MatMul(x, g.Param("w", tensor.F32, 64, 48)), 1))
	g.Output(g.CumSum(x, 1, false, false))
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	gpu, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	fill(t, g, nil, cpu, gpu)
	rng := rand.New(rand.NewPCG(9, 10))
	sets := make([][]kiln.Input, 5)
	for i := range sets {
		v := make([]float32, 32*64)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		sets[i] = []kiln.Input{kiln.In("x", v)}
	}
	check := func(what string, got [][][]float32) {
		t.Helper()
		if len(got) != len(sets) {
			t.Fatalf("%s: %d results for %d sets", what, len(got), len(sets))
		}
		for i, set := range sets {
			want, err := cpu.Run(set...)
			if err != nil {
				t.Fatal(err)
			}
			for o := range want {
				closeTo(t, what+" "+g.OutputNames()[o], got[i][o], want[o], 2e-5)
			}
		}
	}
	for _, set := range sets {
		if err := gpu.CommitNoWait(set...); err != nil {
			t.Fatal(err)
		}
	}
	got, err := gpu.SyncPendingOutputs()
	if err != nil {
		t.Fatal(err)
	}
	check("CommitNoWait", got)
	if got, err = gpu.RunPipelined(sets); err != nil {
		t.Fatal(err)
	}
	check("RunPipelined", got)
}
