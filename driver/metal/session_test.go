package metal_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/metal"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestNotSupported: off darwin, choosing Metal is an error saying so
// (no panic at import or at Compile).
func TestNotSupported(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("darwin has Metal; the device tests cover it")
	}
	if _, err := metal.Open(); !errors.Is(err, metal.ErrNotSupported) {
		t.Errorf("Open() = %v, want ErrNotSupported", err)
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	g.Output(g.Relu(x))
	_, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err == nil || !strings.Contains(err.Error(), "not supported") || !strings.Contains(err.Error(), "device metal") {
		t.Errorf("Compile on %s = %v, want a not-supported error naming the device", runtime.GOOS, err)
	}
}
