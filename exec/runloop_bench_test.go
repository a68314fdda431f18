package exec

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkRunLoop isolates the executor's own per-step cost: a program
// of 1,000 steps whose kernels do nothing, so what is timed is the loop,
// the indirect call and the error check. BenchmarkDispatch in bench/ adds
// real (tiny) kernels on top.
func BenchmarkRunLoop(b *testing.B) {
	const steps = 1000
	g := graph.New()
	x := g.Input("x", tensor.F32, 4)
	for range steps {
		x = g.Neg(x)
	}
	g.Output(x)
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pr, err := Lower(g, p, Options{Reference: true})
	if err != nil {
		b.Fatal(err)
	}
	if len(pr.Steps) != steps {
		b.Fatalf("%d steps, want %d", len(pr.Steps), steps)
	}
	calls := 0
	for i := range pr.Steps {
		pr.Steps[i].Kernel = func(ins []tensor.Tensor, out tensor.Tensor) error { calls++; return nil }
		pr.Steps[i].Serial = nil
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := pr.Run(); err != nil {
			b.Fatal(err)
		}
	}
	if calls != b.N*steps {
		b.Fatalf("%d kernel calls, want %d", calls, b.N*steps)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
}
