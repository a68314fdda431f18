package kiln_test

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestMemoryLimit: a graph whose arena and weights exceed the session's
// limit is refused at Compile with both figures named; one within it
// compiles; the default limit (physical memory) refuses a graph of huge
// declared shapes, which allocating would have ended the process with an
// uncatchable out-of-memory error.
func TestMemoryLimit(t *testing.T) {
	mlp := func(n int) *graph.Graph {
		g := graph.New()
		x := g.Input("x", tensor.F32, 4, n)
		g.Output(g.Relu(g.MatMul(x, g.Param("w", tensor.F32, n, n))))
		return g
	}
	s := kiln.NewSession(kiln.CPU)
	if _, err := s.WithMemoryLimit(1 << 20).Compile(mlp(1024)); err == nil || !strings.Contains(err.Error(), "more than the memory limit of 1.00 MiB (WithMemoryLimit)") {
		t.Errorf("4 MiB of weights under a 1 MiB limit: %v", err)
	}
	cg, err := s.WithMemoryLimit(1 << 20).Compile(mlp(256))
	if err != nil {
		t.Fatalf("256 KiB of weights under 1 MiB: %v", err)
	}
	cg.Close()
	cg, err = s.WithMemoryLimit(-1).Compile(mlp(1024)) // no limit
	if err != nil {
		t.Fatal(err)
	}
	cg.Close()

	huge := graph.New()
	x := huge.Input("x", tensor.F32, 1<<20, 1<<20) // 4 TiB
	huge.Output(huge.Neg(x))
	if _, err := s.Compile(huge); err == nil || !strings.Contains(err.Error(), "memory limit") {
		t.Errorf("a 4 TiB input under the default limit: %v", err)
	}
}
