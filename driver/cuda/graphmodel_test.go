package cuda_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestNewGraphModelErrors: graphs that cannot be captured are errors
// that say why, on any machine.
func TestNewGraphModelErrors(t *testing.T) {
	if _, err := cuda.NewGraphModel(nil); err == nil {
		t.Error("nil compiled graph accepted")
	}
	cpu, err := kiln.NewSession(kiln.CPU).Compile(smallGraph())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cuda.NewGraphModel(cpu); !errors.Is(err, cuda.ErrNotCUDA) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("CPU graph: %v", err)
	}
	cpu.Close()
	if _, err := cuda.NewGraphModel(cpu); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed graph: %v", err)
	}
	g := graph.New()
	g.Output(g.MatMul(g.Input("x", tensor.F32, 2, 3), g.Param("w", tensor.F32, 3, 4)))
	unset, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer unset.Close()
	if _, err := cuda.NewGraphModel(unset); err == nil || !strings.Contains(err.Error(), "params never set: w") {
		t.Errorf("unset param: %v", err)
	}
	// Without a GPU the CUDA graph never compiles, so there is nothing to
	// capture: the no-device error comes first, from Compile.
	if n, err := cuda.Count(); err != nil || n == 0 {
		if _, err := kiln.NewSession(kiln.CUDA(0)).Compile(smallGraph()); err == nil {
			t.Error("compiled for CUDA without a GPU")
		}
	}
}

func TestCublasLibraryAbsentOrOff(t *testing.T) {
	path, err := cuda.CublasLibrary()
	switch {
	case err == nil && path == "":
		t.Error("cuBLAS loaded from an empty path")
	case err != nil && !errors.Is(err, cuda.ErrNoCublas):
		t.Errorf("absent cuBLAS: %v does not match ErrNoCublas", err)
	}
	t.Setenv("KILN_CUBLAS", "off")
	if _, err := cuda.CublasLibrary(); !errors.Is(err, cuda.ErrNoCublas) {
		t.Errorf("KILN_CUBLAS=off: %v", err)
	}
}
