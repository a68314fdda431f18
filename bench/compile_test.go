package bench

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// unaryChain is n elementwise ops in a row (Tanh, Relu, Neg repeating) on
// a small tensor: a graph whose compile time is all per-node work.
func unaryChain(n int) *graph.Graph {
	g := graph.New()
	y := g.Input("x", tensor.F32, 4, 8)
	for i := range n {
		switch i % 3 {
		case 0:
			y = g.Tanh(y)
		case 1:
			y = g.Relu(y)
		default:
			y = g.Neg(y)
		}
	}
	g.Output(y)
	return g
}

// BenchmarkCompileChain compiles 25k-, 50k- and 100k-op chains with
// fusion on: compile time must grow linearly with the nodes (ns/node
// stays flat). A chain once took 6.4 s at 25k and ~80 s at 100k (a
// quadratic report string, verification after every pass, and the
// activation search walking every unary op).
func BenchmarkCompileChain(b *testing.B) {
	for _, n := range []int{25000, 50000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				g := unaryChain(n)
				b.StartTimer()
				cg, err := kiln.NewSession(kiln.CPU).Compile(g)
				if err != nil {
					b.Fatal(err)
				}
				cg.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}
